#pragma once
// cala-bench gemm's correctness check, shared by the host and resident runs (gemm_bench.cpp,
// resident_bench.cpp): a random probe (as SLATE's testers do): for a random x,
//   r = C·x - (alpha·op(A)·(op(B)·x) + beta·C0·x),
//   check_error = max|r| / (eps·(k + n)·max(|alpha|·|op(A)|·|op(B)|·|x| + |beta|·|C0|·|x|)),
// computed on the distributed host data in double precision; a correct product gives well under 1.

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "cala/cala.hpp"
#include "common.hpp"

namespace cala::bench {

template <class T>
using acc_t = std::conditional_t<is_complex_v<T>, std::complex<double>, double>;

template <class T>
struct Probe {
    std::vector<acc_t<T>> val;  ///< op(X)·v
    std::vector<double> abs;    ///< |op(X)|·|v|
};

// op(X)·v and |op(X)|·|v| summed over the grid (every rank gets the whole vectors).
template <class T>
Probe<T> probe_apply(Op op, const MatrixRef<T>& x, const Probe<T>& v) {
    using A = acc_t<T>;
    const Grid2D& g = x.grid();
    const index_t len = op == Op::N ? x.m() : x.n();
    Probe<T> out{std::vector<A>(static_cast<std::size_t>(len)), std::vector<double>(static_cast<std::size_t>(len))};
    std::vector<index_t> rg(static_cast<std::size_t>(x.m_loc()));
    for (index_t i = 0; i < x.m_loc(); ++i) rg[i] = x.layout().rows.to_global(i, g.row());
    // On the rank's threads: op N by row ranges (each thread owns its rows of the result), T/C by
    // columns (each column one entry); the order of the sums per entry is the serial one.
    if (op == Op::N) {
        const int parts = omp_get_max_threads();
#pragma omp parallel for schedule(static)
        for (int t = 0; t < parts; ++t) {
            const index_t i0 = x.m_loc() * t / parts, i1 = x.m_loc() * (t + 1) / parts;
            for (index_t j = 0; j < x.n_loc(); ++j) {
                const index_t jg = x.layout().cols.to_global(j, g.col());
                const A vj = v.val[jg];
                const double aj = v.abs[jg];
                for (index_t i = i0; i < i1; ++i) {
                    out.val[rg[i]] += A(x.local(i, j)) * vj;
                    out.abs[rg[i]] += std::abs(A(x.local(i, j))) * aj;
                }
            }
        }
    } else {
#pragma omp parallel for schedule(static)
        for (index_t j = 0; j < x.n_loc(); ++j) {
            const index_t jg = x.layout().cols.to_global(j, g.col());
            A s = 0;
            double sa = 0;
            for (index_t i = 0; i < x.m_loc(); ++i) {
                s += conj_if(A(x.local(i, j)), op == Op::C) * v.val[rg[i]];
                sa += std::abs(A(x.local(i, j))) * v.abs[rg[i]];
            }
            out.val[jg] += s;
            out.abs[jg] += sa;
        }
    }
    const int w = is_complex_v<T> ? 2 : 1;
    MPI_Allreduce(MPI_IN_PLACE, out.val.data(), static_cast<int>(len * w), MPI_DOUBLE, MPI_SUM, g.comm().get());
    MPI_Allreduce(MPI_IN_PLACE, out.abs.data(), static_cast<int>(len), MPI_DOUBLE, MPI_SUM, g.comm().get());
    return out;
}

template <class T>
double probe_error(Op op_a, Op op_b, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta,
                   const MatrixRef<T>& c0, const MatrixRef<T>& c, std::uint64_t seed) {
    using A = acc_t<T>;
    Probe<T> x{std::vector<A>(static_cast<std::size_t>(c.n())), std::vector<double>(static_cast<std::size_t>(c.n()))};
    for (index_t j = 0; j < c.n(); ++j) {
        x.val[j] = A(element<T>(seed, -1, j));
        x.abs[j] = std::abs(x.val[j]);
    }
    const Probe<T> y = probe_apply(Op::N, c, x), y0 = probe_apply(Op::N, c0, x);
    const Probe<T> u = probe_apply(op_a, a, probe_apply(op_b, b, x));
    const index_t k = op_a == Op::N ? a.n() : a.m();
    double num = 0, den = 0;
    for (index_t i = 0; i < c.m(); ++i) {
        const double r = std::abs(y.val[i] - A(alpha) * u.val[i] - A(beta) * y0.val[i]);
        if (std::isnan(r)) return INFINITY;
        num = std::max(num, r);
        den = std::max(den, std::abs(A(alpha)) * u.abs[i] + std::abs(A(beta)) * y0.abs[i]);
    }
    if (num == 0) return 0;
    return num / (static_cast<double>(eps<T>()) * static_cast<double>(k + c.n()) * (den + 1e-300));
}

}  // namespace cala::bench

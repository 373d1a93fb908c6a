#pragma once
// Test helpers: random distributed matrices, a sequential reference on gathered data, and
// rank-wide agreement of a local condition.

#include <doctest/doctest.h>
#include <mpi.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <functional>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cala/cala.hpp"
#include "random_value.hpp"

namespace cala::test {

inline std::mt19937_64& rng() {
    static std::mt19937_64 g([] {
        int r = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        return std::random_device{}() ^ (0x9e3779b97f4a7c15ull * (r + 1));
    }());
    return g;
}

/// Fills the local part of a with random values.
template <class T>
void randomize(const MatrixRef<T>& a) {
    for (index_t j = 0; j < a.n_loc(); ++j)
        for (index_t i = 0; i < a.m_loc(); ++i) a.local(i, j) = random_value<T>(rng());
}

/// The message of the cala::Error that f throws, or "" if it throws none.
template <class F>
std::string error_message(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

/// Condition true on every rank of the grid (a rank-local condition, reduced before checking).
inline bool all_ranks(bool ok, const Grid2D& g) {
    int v = ok ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, g.comm().get());
    return v == 1;
}

/// f throws a cala::Error on every rank of g whose message holds `what`.
template <class F>
bool fails_everywhere(const Grid2D& g, const std::string& what, F&& f) {
    const std::string msg = error_message(f);
    CAPTURE(msg);
    CAPTURE(what);
    return all_ranks(msg.find(what) != std::string::npos, g);
}

/// x and y hold the same bits (NaNs and signed zeros included).
template <class T>
bool same_bits(const std::vector<T>& x, const std::vector<T>& y) {
    return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0);
}

/// op(x)(i, j) of a column-major matrix x with leading dimension ld.
template <class T>
T op_at(Op op, const std::vector<T>& x, index_t ld, index_t i, index_t j) {
    if (op == Op::N) return x[i + j * ld];
    return conj_if(x[j + i * ld], op == Op::C);
}

/// Sequential reference of alpha·op(A)·op(B) + beta·C (beta == 0: C not read), in long double,
/// with the scale of the error bound: max_ij |alpha|·(|op(A)|·|op(B)|)_ij + |beta|·|C_ij|.
template <class T>
struct GemmReference {
    std::vector<T> value;
    double scale = 0;
};

template <class T>
GemmReference<T> reference_gemm(Op op_a, Op op_b, index_t m, index_t n, index_t k, T alpha, const std::vector<T>& a,
                                 index_t lda, const std::vector<T>& b, index_t ldb, T beta, const std::vector<T>& c) {
    using LC = std::complex<long double>;
    GemmReference<T> ref{std::vector<T>(static_cast<std::size_t>(m * n)), 0.0};
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < m; ++i) {
            LC s = 0;
            long double bound = 0;
            for (index_t l = 0; l < k; ++l) {
                const LC x(op_at(op_a, a, lda, i, l)), y(op_at(op_b, b, ldb, l, j));
                s += x * y;
                bound += std::abs(x) * std::abs(y);
            }
            LC r = LC(alpha) * s;
            bound *= std::abs(LC(alpha));
            if (beta != T(0)) {
                r += LC(beta) * LC(c[i + j * m]);
                bound += std::abs(LC(beta)) * std::abs(LC(c[i + j * m]));
            }
            ref.scale = std::max(ref.scale, static_cast<double>(bound));
            if constexpr (is_complex_v<T>) ref.value[i + j * m] = T(static_cast<real_t<T>>(r.real()), static_cast<real_t<T>>(r.imag()));
            else ref.value[i + j * m] = static_cast<T>(r.real());
        }
    return ref;
}

/// max_ij |x_ij - ref_ij| / (eps·(k + 2)·scale): below a small constant for a backward-stable
/// product. NaN anywhere gives infinity.
template <class T>
double gemm_error(const std::vector<T>& x, const GemmReference<T>& ref, index_t k) {
    double num = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double d = std::abs(std::complex<double>(x[i]) - std::complex<double>(ref.value[i]));
        if (!(d == d)) return INFINITY;
        num = std::max(num, d);
    }
    if (num == 0) return 0;
    return num / (static_cast<double>(eps<T>()) * static_cast<double>(k + 2) * (ref.scale + 1e-300));
}

// fn(grid) on every p x q grid of all of MPI_COMM_WORLD's ranks.
inline void for_each_grid(const std::function<void(const Grid2D&)>& fn) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    for (int p = 1; p <= world.size(); ++p)
        if (world.size() % p == 0) fn(Grid2D(world, p, world.size() / p));
}

}  // namespace cala::test

#pragma once
// One checked cala::geqrf + cala::ormqr run (tests/qr): a random m x n matrix (optionally with
// zero or repeated columns) as a view of a larger parent on a grid; checked on every rank
// against LAPACK on the gathered data:
//   - Q := LAPACK ungqr of cala's output (so the format is LAPACK's): ‖A − Q·R‖ / (n·eps·‖A‖)
//     and ‖I − QᴴQ‖ / (m·eps) below 30; R and tau equal LAPACK geqrf's (max w(i)·|R(i, :) −
//     R_lapack(i, :)| / (n·eps·‖A‖), max w(i)·|tau(i) − tau_lapack(i)| / (n·eps) below 100,
//     w(i) = min(1, |R(i, i)| / ‖A(:, i)‖) as forward error theory says: the same signs and
//     reflectors);
//   - cala::ormqr(Left, C, ...) on a random C equals LAPACK ormqr with cala's V and tau, and
//     ormqr(Left, N) brings C back;
//   - the parent outside the view untouched, tau the same on every rank;
//   - traffic == geqrf_cost / ormqr_cost exactly, workspace <= the model.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "helpers.hpp"
#include "kernels/blas.hpp"
#include "kernels/lapack_qr.hpp"
#include "qr/model.hpp"

namespace cala::test {

struct QrCase {
    index_t m, n, nb;
    int rsrc, csrc;
    index_t offr, offc;  // view offsets (offr ≡ offc mod nb)
    index_t nrhs = 5;    // columns of C for ormqr
    int zero_col = -1;   // a column set to zero (-1: none)
    int copy_col = -1;   // a column set equal to column 0 (rank deficient)
    int zero_col2 = -1;  // another column set to zero (-1: none)
};

template <class T>
double fro(const std::vector<T>& x) {
    double s = 0;
    for (const T& v : x) s += std::norm(std::complex<double>(v));
    return std::sqrt(s);
}

// The m x n block at (i0, j0) of a column-major matrix with leading dimension ld.
template <class T>
std::vector<T> block(const std::vector<T>& x, index_t ld, index_t i0, index_t j0, index_t m, index_t n) {
    std::vector<T> out(static_cast<std::size_t>(m * n));
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < m; ++i) out[i + j * m] = x[(i0 + i) + (j0 + j) * ld];
    return out;
}

template <class T>
void run_qr_case(const Grid2D& grid, const QrCase& c, const QrOptions& opts = {}) {
    const index_t pm = c.m + c.offr, pn = c.n + c.offc;
    DistMatrix<T> parent(grid, pm, pn, c.nb, c.nb, c.rsrc % grid.p(), c.csrc % grid.q());
    randomize(parent.view());
    if (c.zero_col >= 0 || c.copy_col >= 0) {
        std::vector<T> g = gather(parent.view());
        if (grid.comm().rank() == 0)
            for (index_t i = 0; i < c.m; ++i) {
                const index_t r = c.offr + i;
                if (c.zero_col >= 0) g[r + (c.offc + c.zero_col) * pm] = T(0);
                if (c.zero_col2 >= 0) g[r + (c.offc + c.zero_col2) * pm] = T(0);
                if (c.copy_col >= 0) g[r + (c.offc + c.copy_col) * pm] = g[r + c.offc * pm];
            }
        scatter(g.data(), pm, parent.view());
    }
    const std::vector<T> g0 = gather(parent.view());
    const MatrixRef<T> a = parent.sub(c.offr, c.offc, c.m, c.n);
    const int rank = grid.comm().rank();

    // Panels with a zero column take the gathered path where they span several process rows.
    const index_t k = std::min(c.m, c.n);
    std::vector<index_t> gathered;
    const int copied_zero = c.zero_col == 0 ? c.copy_col : -1;  // a copy of a zero column 0 is zero
    for (int z : {c.zero_col, c.zero_col2, copied_zero})
        if (z >= 0 && z < k) gathered.push_back(a.layout().cols.block_of(z));
    const Cost model =
        detail::geqrf_cost_gathered(a.layout(), opts, grid.row(), grid.col(), sizeof(T), is_complex_v<T>, gathered);
    const std::int64_t mem0 = memory_stats().current_bytes;
    reset_peak_memory();
    reset_traffic();
    std::vector<T> tau;
    geqrf(a, tau, opts);
    const Traffic tr = traffic();
    const std::int64_t extra = memory_stats().peak_bytes - mem0;
    const std::vector<T> f = gather(parent.view());

    // ormqr: C := Qᴴ·C, then C := Q·C, C with A's rows.
    DistMatrix<T> cparent(grid, pm, c.nrhs, c.nb, c.nb, c.rsrc % grid.p(), (c.csrc + 1) % grid.q());
    randomize(cparent.view());
    const MatrixRef<T> cv = cparent.sub(c.offr, 0, c.m, c.nrhs);
    const std::vector<T> c0 = gather(cparent.view());
    const MatrixRef<T> av = a.sub(0, 0, c.m, k);
    const Op oc = is_complex_v<T> ? Op::C : Op::T;
    const Cost mq = ormqr_cost(Side::Left, oc, av.layout(), cv.layout(), k, opts, grid.row(), grid.col(), sizeof(T),
                               is_complex_v<T>);
    reset_traffic();
    ormqr(Side::Left, oc, av, tau, cv, opts);
    const Traffic tq = traffic();
    const std::vector<T> c1 = gather(cparent.view());
    ormqr(Side::Left, Op::N, av, tau, cv, opts);
    const std::vector<T> c2 = gather(cparent.view());

    // tau the same on every rank.
    std::vector<T> tau0 = tau;
    MPI_Bcast(tau0.data(), static_cast<int>(tau0.size() * sizeof(T)), MPI_BYTE, 0, grid.comm().get());
    const bool same_tau = tau0 == tau;

    double err = 0, orth = 0, rdiff = 0, tdiff = 0, qc = 0, back = 0;
    bool untouched = true, zero_v = true;
    if (rank == 0) {
        const std::vector<T> a0 = block(g0, pm, c.offr, c.offc, c.m, c.n);
        const std::vector<T> fa = block(f, pm, c.offr, c.offc, c.m, c.n);
        for (index_t j = 0; j < pn; ++j)
            for (index_t i = 0; i < pm; ++i) {
                const bool in = i >= c.offr && j >= c.offc;
                if (!in && !(f[i + j * pm] == g0[i + j * pm])) untouched = false;
            }
        const double na = std::max(fro(a0), 1e-300), e = double(eps<T>());
        const double mn = double(std::max<index_t>(1, std::max(c.m, c.n)));
        // Q from LAPACK on cala's output, R from cala's upper trapezoid.
        std::vector<T> q(static_cast<std::size_t>(c.m * k));
        for (index_t j = 0; j < k; ++j)
            for (index_t i = 0; i < c.m; ++i) q[i + j * c.m] = fa[i + j * c.m];
        kernels::ungqr(c.m, k, k, q.data(), std::max<index_t>(1, c.m), tau.data());
        std::vector<T> r(static_cast<std::size_t>(k * c.n), T(0));
        for (index_t j = 0; j < c.n; ++j)
            for (index_t i = 0; i <= std::min(j, k - 1); ++i) r[i + j * k] = fa[i + j * c.m];
        std::vector<T> qr = a0;
        kernels::gemm(Op::N, Op::N, c.m, c.n, k, T(1), q.data(), std::max<index_t>(1, c.m), r.data(),
                      std::max<index_t>(1, k), T(-1), qr.data(), std::max<index_t>(1, c.m));
        err = fro(qr) / (na * mn * e);
        std::vector<T> qq(static_cast<std::size_t>(k * k));
        for (index_t i = 0; i < k; ++i) qq[i + i * k] = T(1);
        kernels::gemm(Op::C, Op::N, k, k, c.m, T(1), q.data(), std::max<index_t>(1, c.m), q.data(),
                      std::max<index_t>(1, c.m), T(-1), qq.data(), std::max<index_t>(1, k));
        orth = fro(qq) / (mn * e);
        // LAPACK's own factorization of the same matrix.
        std::vector<T> ref = a0, tref(static_cast<std::size_t>(k));
        kernels::geqrf(c.m, c.n, ref.data(), std::max<index_t>(1, c.m), tref.data());
        // Reflector i is as accurate as column i stands apart from the columns before it:
        // its error grows like ‖A‖ / |R(i, i)|, so row i of R and tau(i) are compared with the
        // weight w(i) = min(1, |R(i, i)| / ‖A(:, i)‖) (1 for a zero column, whose tau is exact).
        std::vector<double> w(static_cast<std::size_t>(k), 1.0);
        for (index_t i = 0; i < k; ++i) {
            const double col = fro(block(a0, c.m, 0, i, c.m, 1));
            if (col > 0) w[i] = std::min(1.0, std::abs(std::complex<double>(ref[i + i * c.m])) / col);
        }
        for (index_t j = 0; j < c.n; ++j)
            for (index_t i = 0; i <= std::min(j, k - 1); ++i)
                rdiff = std::max(rdiff, w[i] * std::abs(std::complex<double>(fa[i + j * c.m]) -
                                                        std::complex<double>(ref[i + j * c.m])));
        rdiff /= na * mn * e;
        // A zero column's reflector is LAPACK's H = I: tau = 0 (below), V's column zero.
        for (int z : {c.zero_col, c.zero_col2})
            for (index_t i = z + 1; z >= 0 && z < k && i < c.m; ++i) zero_v = zero_v && fa[i + z * c.m] == T(0);
        for (index_t i = 0; i < k; ++i)
            tdiff = std::max(tdiff, w[i] * std::abs(std::complex<double>(tau[i]) - std::complex<double>(tref[i])));
        tdiff /= mn * e;
        // ormqr against LAPACK's with cala's V and tau.
        std::vector<T> cc = block(c0, pm, c.offr, 0, c.m, c.nrhs);
        const double nc = std::max(fro(cc), 1e-300);
        kernels::ormqr(true, oc, c.m, c.nrhs, k, fa.data(), std::max<index_t>(1, c.m), tau.data(), cc.data(),
                       std::max<index_t>(1, c.m));
        const std::vector<T> got = block(c1, pm, c.offr, 0, c.m, c.nrhs);
        std::vector<T> d(cc.size());
        for (std::size_t i = 0; i < d.size(); ++i) d[i] = got[i] - cc[i];
        qc = fro(d) / (nc * mn * e);
        const std::vector<T> orig = block(c0, pm, c.offr, 0, c.m, c.nrhs);
        const std::vector<T> bk = block(c2, pm, c.offr, 0, c.m, c.nrhs);
        for (std::size_t i = 0; i < d.size(); ++i) d[i] = bk[i] - orig[i];
        back = fro(d) / (nc * mn * e);
    }
    CAPTURE(c.m);
    CAPTURE(c.n);
    CAPTURE(c.nb);
    CAPTURE(c.offr);
    CAPTURE(c.offc);
    CAPTURE(grid.p());
    CAPTURE(grid.q());
    CAPTURE(opts.lookahead);
    CAPTURE(err);
    CAPTURE(orth);
    CAPTURE(rdiff);
    CAPTURE(tdiff);
    CAPTURE(qc);
    CAPTURE(back);
    CAPTURE(tr.words());
    CAPTURE(model.words);
    CAPTURE(tr.msgs());
    CAPTURE(model.msgs);
    CAPTURE(extra);
    CAPTURE(model.extra_bytes);
    CHECK(all_ranks(static_cast<index_t>(tau.size()) == k, grid));
    CHECK(all_ranks(same_tau, grid));
    CHECK(all_ranks(untouched, grid));
    CHECK(all_ranks(err < 30.0, grid));
    CHECK(all_ranks(orth < 30.0, grid));
    if (c.copy_col < 0) {
        CHECK(all_ranks(rdiff < 100.0, grid));
        CHECK(all_ranks(tdiff < 100.0, grid));
    }
    // A zero column: LAPACK's tau = 0 exactly, on any grid (a panel spread over process rows is
    // gathered and factored by LAPACK on its root).
    for (int z : {c.zero_col, c.zero_col2})
        if (z >= 0 && z < k) CHECK(all_ranks(tau[static_cast<std::size_t>(z)] == T(0), grid));
    CHECK(all_ranks(zero_v, grid));
    CHECK(all_ranks(qc < 30.0, grid));
    CHECK(all_ranks(back < 30.0, grid));
    CHECK(all_ranks(tr.words() == model.words && tr.words_recv == model.words_recv, grid));
    CHECK(all_ranks(tr.msgs() == model.msgs, grid));
    CHECK(all_ranks(tq.words() == mq.words && tq.words_recv == mq.words_recv && tq.msgs() == mq.msgs, grid));
    CHECK(all_ranks(extra <= model.extra_bytes, grid));
}

}  // namespace cala::test

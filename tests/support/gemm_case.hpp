#pragma once
// One cala::gemm case checked three ways: the result against the sequential reference on
// gathered data, and this rank's words, messages and workspace peak against the model.

#include <limits>

#include "support/helpers.hpp"

namespace cala::test {

struct Shape {
    index_t m, n, k;
    index_t mba, nba, mbb, nbb, mbc, nbc;  // block sizes of A, B (as stored) and C
    bool sources;                          // non-zero source processes
    index_t offset;                        // operands are submatrices at this offset
    bool all_ops;                          // every variant x op pair, else a sample
};

template <class T>
T scalar(std::mt19937_64& g) {
    return random_value<T>(g);
}

// One gemm: build operands (stored shape by op), run, compare with the reference and the model.
template <class T>
void run_case(const Grid2D& grid, const Shape& s, Op oa, Op ob, bool beta_zero, const GemmOptions& opts) {
    std::mt19937_64 shared(s.m * 131 + s.n * 17 + s.k);  // same scalars on every rank
    const int p = grid.p(), q = grid.q();
    const int ra = s.sources ? 1 % p : 0, ca = s.sources ? 1 % q : 0;
    const int rc = s.sources ? (p - 1) : 0, cc = s.sources ? (q - 1) : 0;
    const index_t am = oa == Op::N ? s.m : s.k, an = oa == Op::N ? s.k : s.m;
    const index_t bm = ob == Op::N ? s.k : s.n, bn = ob == Op::N ? s.n : s.k;
    const index_t o = s.offset;
    DistMatrix<T> A(grid, am + o, an + o, s.mba, s.nba, ra, ca), B(grid, bm + o, bn + o, s.mbb, s.nbb, rc, ca),
        C(grid, s.m + o, s.n + o, s.mbc, s.nbc, rc, cc);
    const MatrixRef<T> a = A.sub(o, o, am, an), b = B.sub(o, o, bm, bn), c = C.sub(o, o, s.m, s.n);
    randomize(A.view());
    randomize(B.view());
    randomize(C.view());
    const T alpha = scalar<T>(shared), beta = beta_zero ? T(0) : scalar<T>(shared);
    if (beta_zero)  // C is not read: NaN must not leak
        for (index_t j = 0; j < c.n_loc(); ++j)
            for (index_t i = 0; i < c.m_loc(); ++i) c.local(i, j) = T(std::numeric_limits<real_t<T>>::quiet_NaN());
    const auto ga = gather(a), gb = gather(b), gc = gather(c);
    const std::int64_t mem0 = memory_stats().current_bytes;
    reset_peak_memory();
    reset_traffic();

    gemm(oa, ob, alpha, a, b, beta, c, opts);

    const Traffic t = traffic();
    const std::int64_t extra = memory_stats().peak_bytes - mem0;
    const auto result = gather(c);
    double err = 0;
    if (grid.comm().rank() == 0) {
        const auto ref = reference_gemm(oa, ob, s.m, s.n, s.k, alpha, ga, am, gb, bm, beta, gc);
        err = gemm_error(result, ref, s.k);
    }
    // The model of what ran: the node-shared gather only where the ranks share a node (not under
    // ./scripts/test --network, whose MPICH treats every other rank as remote).
    GemmOptions ran = opts;
    ran.node_shared_memory = opts.node_shared_memory && grid.comm().shares_node();
    const Cost model = gemm_cost(oa, ob, a.layout(), b.layout(), c.layout(), ran, grid.order(), grid.comm().rank(),
                                 sizeof(T), is_complex_v<T>);
    CAPTURE(p); CAPTURE(q); CAPTURE(s.m); CAPTURE(s.n); CAPTURE(s.k);
    CAPTURE(op_char(oa)); CAPTURE(op_char(ob)); CAPTURE(to_string(opts.variant)); CAPTURE(beta_zero);
    CAPTURE(opts.lookahead); CAPTURE(opts.grid3d.p); CAPTURE(opts.grid3d.q); CAPTURE(opts.grid3d.c);
    CAPTURE(t.words()); CAPTURE(model.words); CAPTURE(t.msgs()); CAPTURE(model.msgs); CAPTURE(extra);
    CAPTURE(model.extra_bytes);
    CHECK(all_ranks(err < 2.0, grid));
    CHECK(all_ranks(t.words() == model.words, grid));
    CHECK(all_ranks(t.words_recv == model.words_recv, grid));
    CHECK(all_ranks(t.msgs() == model.msgs, grid));
    CHECK(all_ranks(extra == model.extra_bytes, grid));
    if (opts.memory_limit_bytes > 0) CHECK(all_ranks(extra <= opts.memory_limit_bytes, grid));
}

}  // namespace cala::test

// The cost models at 64-bit sizes, without allocating: a small problem scaled by s (every size,
// block size, panel width and offset times s) moves the same number of messages and s^2 times
// the words and workspace, and does s^3 times the flops. With s = 1000 to 10^6 the scaled sizes
// are 10^6 x 10^6 matrices or dimensions of 3·10^9 and per-rank counts pass 2^31 (checked), so a
// 32-bit intermediate anywhere breaks the equality. See test_index64.cpp for the layouts.

#include <doctest/doctest.h>

#include <limits>
#include <random>

#include "cala/cholesky.hpp"
#include "cala/model.hpp"

using namespace cala;

namespace {

constexpr index_t k2_31 = index_t(1) << 31;

BlockCyclic scaled(const BlockCyclic& l, index_t s) {
    const Dist1D& r = l.rows;
    const Dist1D& c = l.cols;
    return {Dist1D(r.n * s, r.nb * s, r.nprocs, r.src, r.ib * s), Dist1D(c.n * s, c.nb * s, c.nprocs, c.src, c.ib * s)};
}

// A random layout whose first block is partial (a submatrix at an offset).
BlockCyclic random_layout(std::mt19937& g, index_t m, index_t n, int p, int q) {
    const BlockCyclic big(m + 7, n + 7, 1 + g() % 6, 1 + g() % 6, p, q, static_cast<int>(g() % p),
                          static_cast<int>(g() % q));
    return big.sub(g() % 7, g() % 7, m, n);
}

// Scaled by s: msgs equal, words and workspace times s^2, flops times s^3 (where the count is
// homogeneous: not Cholesky's, whose tile factorizations add n^2 and n terms).
void check_scaled(const Cost& small, const Cost& big, index_t s, bool cubic_flops = true) {
    CHECK(big.msgs == small.msgs);
    CHECK(big.words == small.words * s * s);
    CHECK(big.words_recv == small.words_recv * s * s);
    CHECK(big.extra_bytes == small.extra_bytes * s * s);
    if (cubic_flops)
        CHECK(big.flops == doctest::Approx(small.flops * double(s) * double(s) * double(s)).epsilon(1e-12));
}

}  // namespace

TEST_CASE("redistribute_cost scales exactly to 10^6 x 10^6") {
    std::mt19937 g(64);
    const index_t s = 25'000;
    int past = 0;
    for (int t = 0; t < 60; ++t) {
        const int p = 1 + g() % 4, q = 1 + g() % 4;
        const index_t m = 1 + g() % 40, n = 1 + g() % 40;
        const Op op = static_cast<Op>(g() % 3);
        const BlockCyclic src = random_layout(g, m, n, p, q);
        const BlockCyclic dst = op == Op::N ? random_layout(g, m, n, p, q) : random_layout(g, n, m, p, q);
        for (int r = 0; r < p; ++r)
            for (int c = 0; c < q; ++c) {
                const Cost small = redistribute_cost(op, src, dst, r, c);
                const Cost big = redistribute_cost(op, scaled(src, s), scaled(dst, s), r, c);
                CAPTURE(t);
                CAPTURE(r);
                CAPTURE(c);
                check_scaled(small, big, s);
                past += big.words > k2_31;
            }
        CHECK(redistribute_total_words(op, scaled(src, s), scaled(dst, s)) ==
              redistribute_total_words(op, src, dst) * s * s);
    }
    CHECK(past > 0);
}

TEST_CASE("gemm_cost (2D, every variant, and 2.5D/3D) scales exactly to 10^6-sized operands") {
    std::mt19937 g(65);
    const index_t s = 20'000;
    int past = 0;
    for (int t = 0; t < 40; ++t) {
        const int p = 1 + g() % 3, q = 1 + g() % 3;
        const index_t m = 1 + g() % 40, n = 1 + g() % 40, k = 1 + g() % 40;
        const Op oa = static_cast<Op>(g() % 3), ob = static_cast<Op>(g() % 3);
        const BlockCyclic a = oa == Op::N ? random_layout(g, m, k, p, q) : random_layout(g, k, m, p, q);
        const BlockCyclic b = ob == Op::N ? random_layout(g, k, n, p, q) : random_layout(g, n, k, p, q);
        const BlockCyclic c = random_layout(g, m, n, p, q);
        const index_t pw = 1 + g() % 9;
        for (Variant v : {Variant::StationaryC, Variant::StationaryA, Variant::StationaryB}) {
            // Whole rows (stationary C on p x 1) for both sizes: its cap on the workspace is an
            // absolute number of elements, which the scaled problem would pass.
            const std::int64_t all = std::numeric_limits<std::int64_t>::max();
            const GemmOptions o{.variant = v, .panel_width = pw, .whole_rows_max_elements = all, .node_shared_min_reuse = 0},
                os{.variant = v, .panel_width = pw * s, .whole_rows_max_elements = all, .node_shared_min_reuse = 0};
            for (int r = 0; r < p; ++r)
                for (int cc = 0; cc < q; ++cc) {
                    const Cost small = gemm_cost(oa, ob, a, b, c, v, o, r, cc, 8, false);
                    const Cost big =
                        gemm_cost(oa, ob, scaled(a, s), scaled(b, s), scaled(c, s), v, os, r, cc, 8, false);
                    CAPTURE(t);
                    CAPTURE(to_string(v));
                    CAPTURE(r);
                    CAPTURE(cc);
                    check_scaled(small, big, s);
                    past += big.words > k2_31;
                }
            CHECK(gemm_total_words(oa, ob, scaled(a, s), scaled(b, s), scaled(c, s), v, os) ==
                  gemm_total_words(oa, ob, a, b, c, v, o) * s * s);
            // 2.5D/3D on a p x q x 2 grid over the ranks of the user's grid (idle ranks allowed).
            if (p * q < 2) continue;
            const Shape3D g3{1, std::max(1, p * q / 2 / 1), 2};
            if (g3.p * g3.q * g3.c > p * q) continue;
            const index_t bs = 1 + g() % 5;
            const GemmOptions o3{.variant = v, .panel_width = pw, .grid3d = g3, .block_size = bs};
            const GemmOptions o3s{.variant = v, .panel_width = pw * s, .grid3d = g3, .block_size = bs * s};
            for (int rank = 0; rank < p * q; ++rank) {
                const Cost small = gemm_cost(oa, ob, a, b, c, o3, GridOrder::RowMajor, rank, 16, true);
                const Cost big = gemm_cost(oa, ob, scaled(a, s), scaled(b, s), scaled(c, s), o3s, GridOrder::RowMajor,
                                           rank, 16, true);
                CAPTURE(t);
                CAPTURE(to_string(v));
                CAPTURE(rank);
                check_scaled(small, big, s);
            }
        }
    }
    CHECK(past > 0);
}

TEST_CASE("potrf_cost, trsm_cost and potrs_cost scale exactly to 10^6 x 10^6") {
    std::mt19937 g(66);
    const index_t s = 25'000;
    int past = 0;
    for (int t = 0; t < 24; ++t) {
        const int p = 1 + g() % 3, q = 1 + g() % 3;
        const index_t n = 1 + g() % 40, nrhs = 1 + g() % 20, nb = 1 + g() % 6;
        const Uplo uplo = g() % 2 ? Uplo::Lower : Uplo::Upper;
        const BlockCyclic a(n, n, nb, nb, p, q, static_cast<int>(g() % p), static_cast<int>(g() % q));
        const BlockCyclic b(n, nrhs, nb, 1 + g() % 6, p, q, a.rows.src, 0);
        // The delay given (the plan's own depends on nb, which the scaling changes). Broadcast
        // panels: the node-shared slots' workspace (1 x q) is rounded to cache lines, checked below.
        const CholeskyOptions two_d{.variant = CholeskyVariant::TwoD,
                                    .lookahead = static_cast<int>(g() % 2),
                                    .delay = 1 + t % 4,
                                    .node_shared_memory = false};
        std::vector<CholeskyOptions> opts = {two_d};
        if (p * q >= 2) {
            // ReplPart splits each tile into h column slices: even tiles keep the split exact.
            const index_t bs = 2 * (1 + g() % 3);
            opts.push_back({.variant = CholeskyVariant::Repl, .grid3d = {1, 1, 2}, .block_size = bs + 1});
            opts.push_back({.variant = CholeskyVariant::ReplPart, .grid3d = {1, 1, 2}, .block_size = bs});
        }
        for (const CholeskyOptions& o : opts) {
            CholeskyOptions os = o;
            os.block_size = o.block_size * s;
            for (int rank = 0; rank < p * q; ++rank) {
                const Cost small = potrf_cost(uplo, a, GridOrder::RowMajor, o, rank, 8, false);
                const Cost big = potrf_cost(uplo, scaled(a, s), GridOrder::RowMajor, os, rank, 8, false);
                const std::string variant = to_string(o.variant);
                CAPTURE(t);
                CAPTURE(variant);
                CAPTURE(o.block_size);
                CAPTURE(rank);
                check_scaled(small, big, s, false);
                past += big.words > k2_31;
            }
        }
        if (p == 1 && q > 1) {
            // Node-shared slots: traffic as the broadcasts'; the slots' share is rounded up to
            // whole lines, so its workspace scales by s^2 only once the rounding is negligible
            // (between s / 5 and s), and it bounds the broadcast path's.
            CholeskyOptions ns = two_d, ns_mid = two_d, ns_big = two_d;
            ns.node_shared_memory = ns_mid.node_shared_memory = ns_big.node_shared_memory = true;
            for (int rank = 0; rank < q; ++rank) {
                const Cost small = potrf_cost(uplo, a, GridOrder::RowMajor, ns, rank, 8, false);
                const Cost mid = potrf_cost(uplo, scaled(a, s / 5), GridOrder::RowMajor, ns_mid, rank, 8, false);
                const Cost big = potrf_cost(uplo, scaled(a, s), GridOrder::RowMajor, ns_big, rank, 8, false);
                const Cost bcast = potrf_cost(uplo, scaled(a, s), GridOrder::RowMajor, two_d, rank, 8, false);
                CAPTURE(t);
                CAPTURE(rank);
                CHECK(big.msgs == small.msgs);
                CHECK(big.words == small.words * s * s);
                CHECK(big.words_recv == small.words_recv * s * s);
                CHECK(big.extra_bytes >= bcast.extra_bytes);
                CHECK(double(big.extra_bytes) == doctest::Approx(double(mid.extra_bytes) * 25.0).epsilon(1e-6));
            }
        }
        const TrsmOptions to{.lookahead = static_cast<int>(g() % 3)};
        const Op op = static_cast<Op>(g() % 3);
        for (int r = 0; r < p; ++r)
            for (int c = 0; c < q; ++c) {
                CAPTURE(t);
                CAPTURE(r);
                CAPTURE(c);
                check_scaled(trsm_cost(uplo, op, a, b, to, r, c, 8, false),
                             trsm_cost(uplo, op, scaled(a, s), scaled(b, s), to, r, c, 8, false), s);
                check_scaled(potrs_cost(uplo, a, b, to, r, c, 8, false),
                             potrs_cost(uplo, scaled(a, s), scaled(b, s), to, r, c, 8, false), s);
            }
    }
    CHECK(past > 0);
}

TEST_CASE("redistribute_cost of a 6·10^9-element vector") {
    // One dimension past 2^31 on its own (s = 2·10^8 on 30 elements): a column to a row.
    const index_t s = 200'000'000;
    const BlockCyclic col(30, 1, 4, 1, 2, 2, 1, 0), row(1, 30, 1, 3, 2, 2, 0, 1);
    const BlockCyclic col_s{Dist1D(30 * s, 4 * s, 2, 1), col.cols}, row_s{row.rows, Dist1D(30 * s, 3 * s, 2, 1)};
    int past = 0;
    for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 2; ++c) {
            const Cost small = redistribute_cost(Op::T, col, row, r, c),
                       big = redistribute_cost(Op::T, col_s, row_s, r, c);
            CHECK(big.msgs == small.msgs);
            CHECK(big.words == small.words * s);
            past += big.words > k2_31;
        }
    CHECK(past > 0);
}

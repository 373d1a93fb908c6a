// The cost model without MPI: per-rank counts sum to the cheap totals, aligned operands do not
// move, and the variant choice follows the shapes.

#include <doctest/doctest.h>

#include <random>

#include "cala/model.hpp"
#include "gemm/plan.hpp"

using cala::BlockCyclic;
using cala::index_t;
using cala::Op;
using cala::Variant;

namespace {
BlockCyclic random_layout(std::mt19937& g, index_t m, index_t n, int p, int q) {
    return BlockCyclic(m, n, 1 + g() % 6, 1 + g() % 6, p, q, static_cast<int>(g() % p), static_cast<int>(g() % q));
}
}  // namespace

TEST_CASE("redistribution: per-rank words sum to the total, sent == received") {
    std::mt19937 g(5);
    for (int t = 0; t < 200; ++t) {
        const int p = 1 + g() % 3, q = 1 + g() % 3;
        const index_t m = g() % 30, n = g() % 30;
        const Op op = static_cast<Op>(g() % 3);
        const BlockCyclic src = random_layout(g, m, n, p, q);
        const BlockCyclic dst = op == Op::N ? random_layout(g, m, n, p, q) : random_layout(g, n, m, p, q);

        std::int64_t words = 0, msgs = 0;
        for (int r = 0; r < p; ++r)
            for (int c = 0; c < q; ++c) {
                const auto cost = cala::redistribute_cost(op, src, dst, r, c);
                words += cost.words;
                msgs += cost.msgs;
            }

        CHECK(words == cala::redistribute_total_words(op, src, dst));
        CHECK(msgs % 2 == 0);  // every message is counted once sent and once received
        CHECK(words <= 2 * m * n);
    }
}

TEST_CASE("gemm: per-rank words sum to the total for every variant and op pair") {
    std::mt19937 g(9);
    for (int t = 0; t < 120; ++t) {
        const int p = 1 + g() % 3, q = 1 + g() % 3;
        const index_t m = 1 + g() % 40, n = 1 + g() % 40, k = 1 + g() % 40;
        const Op oa = static_cast<Op>(g() % 3), ob = static_cast<Op>(g() % 3);
        const BlockCyclic a = oa == Op::N ? random_layout(g, m, k, p, q) : random_layout(g, k, m, p, q);
        const BlockCyclic b = ob == Op::N ? random_layout(g, k, n, p, q) : random_layout(g, n, k, p, q);
        const BlockCyclic c = random_layout(g, m, n, p, q);
        for (Variant v : {Variant::StationaryC, Variant::StationaryA, Variant::StationaryB}) {
            std::int64_t words = 0;
            for (int r = 0; r < p; ++r)
                for (int cc = 0; cc < q; ++cc) words += cala::gemm_cost(oa, ob, a, b, c, v, {}, r, cc, 8, false).words;
            CAPTURE(static_cast<int>(v));
            CHECK(words == cala::gemm_total_words(oa, ob, a, b, c, v, {}));
        }
    }
}

TEST_CASE("gemm plan: aligned operands stay where the user put them") {
    const int p = 2, q = 3;
    const BlockCyclic a(100, 80, 16, 8, p, q), b(80, 60, 8, 12, p, q), c(100, 60, 16, 12, p, q);

    const auto sc = cala::detail::plan_gemm_2d(Op::N, Op::N, a, b, c, Variant::StationaryC, {});
    CHECK_FALSE(sc.a.moves);
    CHECK_FALSE(sc.b.moves);
    // Stationary-A needs B transposed: B moves, A stays.
    const auto sa = cala::detail::plan_gemm_2d(Op::N, Op::N, a, b, c, Variant::StationaryA, {});
    CHECK_FALSE(sa.a.moves);
    CHECK(sa.b.moves);
    CHECK(sa.b.redist_op == Op::T);
    // With B given transposed (stored n x k, rows blocked like C's columns), nothing moves.
    const BlockCyclic bt(60, 80, 12, 8, p, q);
    const auto sa_t = cala::detail::plan_gemm_2d(Op::N, Op::T, a, bt, c, Variant::StationaryA, {});
    CHECK_FALSE(sa_t.a.moves);
    CHECK_FALSE(sa_t.b.moves);
    CHECK(sa_t.b.kernel_op == Op::T);
}

TEST_CASE("gemm variant choice follows the shapes") {
    const int p = 2, q = 2;
    // Square: classic SUMMA (stationary C) moves the fewest words.
    {
        const BlockCyclic a(512, 512, 64, 64, p, q), b = a, c = a;
        CHECK(cala::choose_gemm_variant(Op::N, Op::N, a, b, c, {}) == Variant::StationaryC);
    }
    // A much larger than B and C (m = k = 8n): keep A in place.
    {
        const BlockCyclic a(2048, 2048, 64, 64, p, q), b(2048, 256, 64, 64, p, q), c(2048, 256, 64, 64, p, q);
        CHECK(cala::choose_gemm_variant(Op::N, Op::N, a, b, c, {}) == Variant::StationaryA);
    }
    // B much larger (n = k = 8m): keep B in place.
    {
        const BlockCyclic a(256, 2048, 64, 64, p, q), b(2048, 2048, 64, 64, p, q), c(256, 2048, 64, 64, p, q);
        CHECK(cala::choose_gemm_variant(Op::N, Op::N, a, b, c, {}) == Variant::StationaryB);
    }
}

TEST_CASE("gemm model: classic SUMMA on a 1 x 2 grid moves all of A through each rank") {
    const BlockCyclic a(4096, 4096, 256, 256, 1, 2), b = a, c = a;

    const auto cost = cala::gemm_cost(Op::N, Op::N, a, b, c, Variant::StationaryC, {.node_shared_memory = false}, 0, 1, 8, false);

    // Each rank sends its half of A's panels and receives the other half; B never moves.
    CHECK(cost.words == 4096 * 2048 + 4096 * 2048);
    CHECK(cost.msgs == 4096 / 256);  // one broadcast per k-block, sent or received
    CHECK(cost.flops == doctest::Approx(2.0 * 4096 * 2048 * 4096));
}

TEST_CASE("gemm model: stationary C on a p x 1 grid sends whole rows while they fit the workspace cap") {
    // Ranks on several nodes (no node-shared gather).
    // 2 x 1, n = 2048, nb = 64: every rank needs all of B'; each row broadcasts its whole local B'
    // once (2 messages, not one per block), and the workspace is A' in owner order plus all of B'.
    const BlockCyclic a(2048, 2048, 64, 64, 2, 1), b = a, c = a;
    const auto cost = cala::gemm_cost(Op::N, Op::N, a, b, c, Variant::StationaryC, {.node_shared_memory = false}, 0, 0, 8, false);
    CHECK(cost.words == 2048 * 2048);  // this rank's half of B' sent, the other half received
    CHECK(cost.msgs == 2);
    CHECK(cost.extra_bytes == 8 * (1024 * 2048 + 2048 * 2048));
    // One row holding no rows of B' (k = 48 < nb on 3 x 1) sends nothing.
    const BlockCyclic a3(300, 48, 64, 64, 3, 1), b3(48, 200, 64, 64, 3, 1), c3(300, 200, 64, 64, 3, 1);
    CHECK(cala::gemm_cost(Op::N, Op::N, a3, b3, c3, Variant::StationaryC, {.node_shared_memory = false}, 1, 0, 8, false).msgs == 1);
    // Past GemmOptions::whole_rows_max_elements (A' + B' of one rank; default 2^25) the panel path
    // stays: one message per block. 0 turns whole rows off.
    const index_t k = 8192, nb = 256;
    const BlockCyclic al(4096, k, nb, nb, 2, 1), bl(k, 4096, nb, nb, 2, 1), cl(4096, 4096, nb, nb, 2, 1);
    REQUIRE((2048 + 4096) * k > cala::GemmOptions{}.whole_rows_max_elements);
    CHECK(cala::gemm_cost(Op::N, Op::N, al, bl, cl, Variant::StationaryC, {.node_shared_memory = false}, 0, 0, 8, false).msgs == k / nb);
    CHECK(cala::gemm_cost(Op::N, Op::N, al, bl, cl, Variant::StationaryC, {.whole_rows_max_elements = (2048 + 4096) * k, .node_shared_memory = false},
                          0, 0, 8, false).msgs == 2);
    CHECK(cala::gemm_cost(Op::N, Op::N, a, b, c, Variant::StationaryC, {.whole_rows_max_elements = 0, .node_shared_memory = false}, 0, 0, 8, false)
              .msgs == 2048 / 64);
}

TEST_CASE("gemm model: stationary C on 1D grids of one node gathers the operand split along k in shared memory") {
    // 2 x 1, n = 2048, nb = 64: op(B) gathered; counted as the two broadcasts it replaces (each
    // rank's half of B' sent, the other half received); the workspace is this rank's half of B'.
    const BlockCyclic a(2048, 2048, 64, 64, 2, 1), b = a, c = a;
    const auto rows = cala::gemm_cost(Op::N, Op::N, a, b, c, Variant::StationaryC, {}, 1, 0, 8, false);  // 1024 rows of C
    CHECK(rows.words == 2048 * 2048);
    CHECK(rows.words_recv == 1024 * 2048);
    CHECK(rows.msgs == 2);
    CHECK(rows.extra_bytes == 8 * (2048 * 2048 / 2));
    // Its own 1024 rows of B' copied in place (read and written), A' (1024 x 2048) packed once.
    CHECK(rows.stream_words == 2.0 * 1024 * 2048 + 1024.0 * 2048);
    // 1 x 3, 300 x 200 x 100 with nb = 64: A' (300 x 100) gathered; column 0 holds k-block 0 (64
    // columns), column 1 the other 36, column 2 none: two messages; the share is ceil(30000 / 3).
    const BlockCyclic a3(300, 100, 64, 64, 1, 3), b3(100, 200, 64, 64, 1, 3), c3(300, 200, 64, 64, 1, 3);
    for (int col = 0; col < 3; ++col) {
        const auto x = cala::gemm_cost(Op::N, Op::N, a3, b3, c3, Variant::StationaryC, {.node_shared_min_reuse = 0}, 0,
                                       col, 8, false);
        CAPTURE(col);
        CHECK(x.msgs == (c3.cols.local_size(col) > 0 ? 2 : 0));
        CHECK(x.extra_bytes == 8 * 10000);
        CHECK(x.words == (c3.cols.local_size(col) > 0 ? 300 * 100 : 0));
    }
    // Past whole_rows_max_elements per rank (here just below the share) it broadcasts instead.
    const auto capped = cala::gemm_cost(Op::N, Op::N, a, b, c, Variant::StationaryC,
                                        {.whole_rows_max_elements = 2048 * 1024 - 1}, 1, 0, 8, false);
    CHECK(capped.msgs == 2048 / 64);
    // Below node_shared_min_reuse local rows of C (default 1024), it broadcasts by whole rows.
    const BlockCyclic as(2046, 2048, 64, 64, 2, 1), cs(2046, 2048, 64, 64, 2, 1);
    CHECK(cala::gemm_cost(Op::N, Op::N, as, b, cs, Variant::StationaryC, {}, 1, 0, 8, false).extra_bytes ==
          8 * (1022 * 2048 + 2048 * 2048));
    CHECK(cala::gemm_cost(Op::N, Op::N, as, b, cs, Variant::StationaryC, {.node_shared_min_reuse = 1022}, 1, 0, 8, false)
              .extra_bytes == 8 * (2048 * 2048 / 2));
    // The same whenever the option is off.
    CHECK(cala::gemm_cost(Op::N, Op::N, a, b, c, Variant::StationaryC, {.node_shared_memory = false}, 1, 0, 8, false)
              .extra_bytes == 8 * (1024 * 2048 + 2048 * 2048));
}

TEST_CASE("gemm model: the local GEMMs' packing of op(A) (stream_words) and its time") {
    using cala::detail::packed_a_elements;
    // Once per 4096 columns of C.
    CHECK(packed_a_elements(65536, 256, 512) == 65536.0 * 512);
    CHECK(packed_a_elements(1000, 9000, 64) == 1000.0 * 64 * 3);
    CHECK(packed_a_elements(512, 32768, 512) == 512.0 * 512 * 8);
    CHECK(packed_a_elements(0, 1024, 512) == 0);
    // Pieces for MPI progress run along k: at least 256 deep, at most 4, none when idle.
    CHECK(cala::detail::progress_chunks(512, true) == 2);
    CHECK(cala::detail::progress_chunks(4096, true) == 4);
    CHECK(cala::detail::progress_chunks(100, true) == 1);
    CHECK(cala::detail::progress_chunks(4096, false) == 1);

    // Tall-skinny on 1 x 2, stationary C: one group (k = 512), nothing in flight during its GEMM;
    // each rank multiplies 65536 x 256 x 512 and packs its 65536 x 512 panel once.
    const BlockCyclic a(65536, 512, 64, 64, 1, 2), b(512, 512, 64, 64, 1, 2), c(65536, 512, 64, 64, 1, 2);
    // (On ranks of several nodes: one node gathers A' in shared memory, test above.)
    const cala::GemmOptions nodes{.node_shared_memory = false};
    const auto cost = cala::gemm_cost(Op::N, Op::N, a, b, c, Variant::StationaryC, nodes, 0, 1, 8, false);
    CHECK(cost.stream_words == 65536.0 * 512);
    // Wide on 1 x 2 with k = 1024 (two groups): each group's GEMM (512 x 32768 x 512) packs its
    // 512 x 512 panel of A once per 4096 columns of C.
    const BlockCyclic aw(512, 1024, 64, 64, 1, 2), bw(1024, 65536, 64, 64, 1, 2), cw(512, 65536, 64, 64, 1, 2);
    const auto wide = cala::gemm_cost(Op::N, Op::N, aw, bw, cw, Variant::StationaryC, nodes, 0, 0, 8, false);
    CHECK(wide.stream_words == 512.0 * 512 * 8 + 512.0 * 512 * 8);

    // Stationary A on the same operands: each rank packs its 65536 x 256 columns of A once (one
    // group: C has 512 columns) and receives, sums and adds the other rank's partial C for the
    // 4 blocks of 64 columns it owns (two passes over 65536 x 256); B moves into Bt (512 x 512,
    // k split over the ranks): each rank packs its 512 x 256 of B and unpacks 512 x 256 of Bt.
    const auto sa = cala::gemm_cost(Op::N, Op::N, a, b, c, Variant::StationaryA, {}, 0, 1, 8, false);
    CHECK(sa.stream_words == 65536.0 * 256 + 2.0 * 65536 * 256 + 2.0 * 512 * 256);

    // The predicted time charges the packing only when a packing rate is set.
    cala::MachineModel mm;
    mm.latency_s = 0, mm.seconds_per_byte = 0, mm.seconds_per_flop = 1e-11;
    const double flops_only = cala::predicted_seconds(cost, mm, 8);
    CHECK(flops_only == doctest::Approx(cost.flops * 1e-11));
    mm.seconds_per_stream_byte = 1e-9;
    CHECK(cala::predicted_seconds(cost, mm, 8) == doctest::Approx(flops_only + 65536.0 * 512 * 8 * 1e-9));
}

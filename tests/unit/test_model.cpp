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

    const auto cost = cala::gemm_cost(Op::N, Op::N, a, b, c, Variant::StationaryC, {}, 0, 1, 8, false);

    // Each rank sends its half of A's panels and receives the other half; B never moves.
    CHECK(cost.words == 4096 * 2048 + 4096 * 2048);
    CHECK(cost.msgs == 4096 / 256);  // one broadcast per k-block, sent or received
    CHECK(cost.flops == doctest::Approx(2.0 * 4096 * 2048 * 4096));
}

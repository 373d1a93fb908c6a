// The trsm/potrs cost model on its own (no MPI): closed forms summed over the ranks, and the
// plan's choice of what moves.

#include <doctest/doctest.h>

#include "cala/cholesky.hpp"
#include "cholesky/solve/trsm_plan.hpp"

using namespace cala;

namespace {

Cost total(Uplo uplo, Op op, const BlockCyclic& a, const BlockCyclic& b, bool complex = false) {
    Cost t;
    for (int r = 0; r < a.p(); ++r)
        for (int c = 0; c < a.q(); ++c) {
            const Cost x = trsm_cost(uplo, op, a, b, {}, r, c, 8, complex);
            t.words += x.words, t.words_recv += x.words_recv, t.msgs += x.msgs, t.flops += x.flops;
        }
    return t;
}

}  // namespace

TEST_CASE("trsm on lined-up operands: closed forms over the ranks") {
    const index_t n = 103, nrhs = 29, nb = 8;
    const BlockCyclic a(n, n, nb, nb, 3, 2, 1, 1), b(n, nrhs, nb, 5, 3, 2, 1, 0);
    index_t sum_w2 = 0;
    for (index_t k = 0; k < a.rows.num_blocks(); ++k) sum_w2 += a.rows.block_size(k) * a.rows.block_size(k);

    for (Uplo uplo : {Uplo::Lower, Uplo::Upper})
        for (Op op : {Op::N, Op::T, Op::C}) {
            const Cost t = total(uplo, op, a, b);
            CAPTURE(uplo_char(uplo)); CAPTURE(op_char(op));
            // Panels: q copies of the triangle with its diagonal blocks; block rows: p copies of B.
            CHECK(t.words == 2 * (n * n + sum_w2) / 2 + 3 * n * nrhs);
            CHECK(t.flops == doctest::Approx(static_cast<double>(n) * n * nrhs));
            CHECK(total(uplo, op, a, b, true).flops == doctest::Approx(4.0 * n * n * nrhs));
        }
}

TEST_CASE("trsm on one rank moves nothing and costs n²·nrhs flops") {
    const BlockCyclic a(50, 50, 7, 7, 1, 1), b(50, 9, 7, 4, 1, 1);

    const Cost c = trsm_cost(Uplo::Upper, Op::C, a, b, {}, 0, 0, 16, true);

    CHECK(c.words == 0);
    CHECK(c.msgs == 0);
    CHECK(c.flops == doctest::Approx(4.0 * 50 * 50 * 9));
}

TEST_CASE("what moves: nothing, B there and back, or A") {
    const BlockCyclic a(40, 40, 4, 4, 2, 2), a_rect(40, 40, 4, 6, 2, 2);
    const BlockCyclic b_aligned(40, 7, 4, 3, 2, 2), b_other(40, 7, 5, 3, 2, 2), b_wide(40, 25, 5, 3, 2, 2);

    const auto p0 = detail::plan_trsm(a, b_aligned, {});
    const auto p1 = detail::plan_trsm(a, b_other, {});
    const auto p2 = detail::plan_trsm(a, b_wide, {});
    const auto p3 = detail::plan_trsm(a_rect, b_aligned, {});

    CHECK((!p0.move_a && !p0.move_b));
    CHECK((p1.move_b && !p1.move_a && p1.b_layout.rows == a.rows));
    CHECK((p2.move_a && !p2.move_b && p2.a_layout.rows == b_wide.rows));
    CHECK((p3.move_a && detail::square_tiles(p3.a_layout)));
}

TEST_CASE("potrs costs the two solves, one alignment, the larger workspace") {
    const BlockCyclic a(60, 60, 6, 6, 2, 3), b(60, 5, 6, 2, 2, 3);
    for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 3; ++c) {
            const Cost x = trsm_cost(Uplo::Lower, Op::N, a, b, {}, r, c, 8, false);
            const Cost y = trsm_cost(Uplo::Lower, Op::C, a, b, {}, r, c, 8, false);
            const Cost z = potrs_cost(Uplo::Lower, a, b, {}, r, c, 8, false);
            CHECK(z.words == x.words + y.words);
            CHECK(z.words_recv == x.words_recv + y.words_recv);
            CHECK(z.msgs == x.msgs + y.msgs);
            CHECK(z.extra_bytes == std::max(x.extra_bytes, y.extra_bytes));
        }
}

// Hostile inputs to cala::gemm, cala::Gemm3D, the planner and the cost functions.
// (run as: mpiexec.mpich -n N test_hostile, N in {2, 3, 4})

#include <cmath>
#include <limits>

#include "hostile/hostile.hpp"

using namespace cala;
using hostile::Local;
using hostile::Row;
using hostile::world;

namespace {

using Mat = MatrixRef<double>;

auto gemm_call(Op oa, Op ob, double alpha, const Mat& a, const Mat& b, double beta, const Mat& c,
               GemmOptions o = {}) {
    return [=] { gemm(oa, ob, alpha, a, b, beta, c, o); };
}

}  // namespace

TEST_CASE("hostile: gemm") {
    const Grid2D g(world());
    const Grid2D other(world(), world().size(), 1);
    const int np = world().size();
    const bool last = world().rank() == np - 1;
    Local<double> a(g, 10, 7, 3), b(g, 7, 9, 2), c(g, 10, 9, 4), at(g, 7, 10, 3), c8(g, 10, 8, 4);
    Local<double> a_other(other, BlockCyclic(10, 7, 3, 3, np, 1));
    Local<double> b_nb(g, BlockCyclic(7, 9, 5, 5, g.p(), g.q()));
    Local<double> c_n(g, 10, last ? 8 : 9, 4);
    hostile::Guard guard;
    for (auto* l : {&a, &b, &c, &at, &c8, &a_other, &b_nb, &c_n}) guard.watch(l->store);
    const Mat null_a(g, a.ref.layout(), last ? nullptr : a.data(), a.ld);
    const Mat null_c(g, c.ref.layout(), nullptr, c.ld);
    const Mat short_ld(g, b.ref.layout(), b.data(), b.m_loc > 1 ? b.m_loc - 1 : 0);
    const Mat neg_ld(g, c.ref.layout(), c.data(), -1);
    const Mat bad_layout(g, BlockCyclic(10, 7, 3, 3, g.p(), g.q() + 1), a.data(), a.ld);
    const Mat big_ld_one(g, b.ref.layout(), b.data(), last ? -3 : b.ld);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const Op N = Op::N, T = Op::T;

    hostile::run_table(world(), "gemm", {
        {"k of op(A) != k of op(B)", gemm_call(N, N, 1, at.ref, b.ref, 0, c.ref), "k of op(A) is 10 but k of op(B) is 7"},
        {"op(A) transposed: wrong k", gemm_call(T, N, 1, a.ref, b.ref, 1, c.ref), "k of op(A) is 10"},
        {"op(A) out of range", gemm_call(static_cast<Op>(5), N, 1, a.ref, b.ref, 1, c.ref), "gemm: op_a is 5, not an Op"},
        {"C has the wrong rows", gemm_call(N, N, 1, a.ref, b.ref, 1, at.ref), "op(A) has 10 rows but C has 7"},
        {"C has the wrong columns", gemm_call(N, N, 1, a.ref, b.ref, 1, c8.ref), "op(B) has 9 columns but C has 8"},
        {"A on another grid", gemm_call(N, N, 1, a_other.ref, b.ref, 1, c.ref), "A lives on a different process grid"},
        {"A's layout for another grid shape", gemm_call(N, N, 1, bad_layout, b.ref, 1, c.ref), "A has a layout for a"},
        {"A nullptr on one rank", gemm_call(N, N, 1, null_a, b.ref, 1, c.ref), "A is a null pointer"},
        {"C nullptr", gemm_call(N, N, 1, a.ref, b.ref, 0, null_c), "C is a null pointer"},
        {"B's ld < local rows", gemm_call(N, N, 1, a.ref, short_ld, 1, c.ref), "B has leading dimension"},
        {"C's ld negative", gemm_call(N, N, 1, a.ref, b.ref, 1, neg_ld), "C has leading dimension -1"},
        {"B's ld negative on one rank", gemm_call(N, N, 1, a.ref, big_ld_one, 1, c.ref), "B has leading dimension -3"},
        {"lookahead -1", gemm_call(N, N, 1, a.ref, b.ref, 1, c.ref, {.lookahead = -1}), "lookahead is -1"},
        {"lookahead 65", gemm_call(N, N, 1, a.ref, b.ref, 1, c.ref, {.lookahead = 65}), "lookahead is 65"},
        {"panel_width < 0", gemm_call(N, N, 1, a.ref, b.ref, 1, c.ref, {.panel_width = -4}), "panel_width is -4"},
        {"block_size < 0", gemm_call(N, N, 1, a.ref, b.ref, 1, c.ref, {.block_size = -1}), "block_size is -1"},
        {"grid3d past the ranks", gemm_call(N, N, 1, a.ref, b.ref, 1, c.ref, {.grid3d = {1, 1, np + 1}}), "grid3d is"},
        {"grid3d negative", gemm_call(N, N, 1, a.ref, b.ref, 1, c.ref, {.grid3d = {-1, 1, 1}}), "grid3d is -1"},
        {"variant out of range",
         gemm_call(N, N, 1, a.ref, b.ref, 1, c.ref, {.variant = static_cast<Variant>(9)}), "variant is 9"},
        {"memory limit no plan fits",
         gemm_call(N, N, 1, a.ref, b.ref, 1, c.ref, {.memory_limit_bytes = 1}), "memory"},
        {"ranks disagree on alpha", gemm_call(N, N, last ? 2 : 1, a.ref, b.ref, 1, c.ref), "different arguments"},
        {"ranks disagree on beta", gemm_call(N, N, 1, a.ref, b.ref, last ? 0 : 1, c.ref), "different arguments"},
        {"ranks disagree on op(A)",
         gemm_call(last ? T : N, N, 1, last ? at.ref : a.ref, b.ref, 1, c.ref), "different arguments"},
        {"ranks disagree on n", gemm_call(N, N, 1, a.ref, b.ref, 1, c_n.ref), "op(B) has 9 columns but C has 8"},
        {"ranks disagree on B's block size",
         gemm_call(N, N, 1, a.ref, last ? b_nb.ref : b.ref, 1, c.ref), "different arguments"},
        {"ranks disagree on lookahead",
         gemm_call(N, N, 1, a.ref, b.ref, 1, c.ref, {.lookahead = last ? 2 : 1}), "different arguments"},
        {"ranks disagree on the variant",
         gemm_call(N, N, 1, a.ref, b.ref, 1, c.ref, {.variant = last ? Variant::StationaryA : Variant::StationaryC}),
         "different arguments"},
        {"ranks disagree on the memory limit",
         gemm_call(N, N, 1, a.ref, b.ref, 1, c.ref, {.memory_limit_bytes = last ? (1 << 30) : 0}), "different arguments"},
        {"ranks disagree on alpha = NaN", gemm_call(N, N, last ? nan : 1, a.ref, b.ref, 1, c.ref), "different arguments"},
    }, guard);
}

TEST_CASE("hostile: gemm with NaN and Inf (BLAS semantics, documented in docs/api.md)") {
    const Grid2D g(world());
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    Local<double> a(g, 9, 6, 2), b(g, 6, 7, 3), c(g, 9, 7, 2, 5);
    const auto count = [](const std::vector<double>& v, auto pred) {
        index_t n = 0;
        for (double x : v) n += pred(x);
        return n;
    };
    const auto reset = [&](double in_c) {
        test::randomize(a.ref), test::randomize(b.ref);
        for (index_t j = 0; j < 7; ++j)
            for (index_t i = 0; i < 9; ++i) c.set(i, j, in_c);
    };
    const auto row_is = [&](index_t i, auto pred) {  // row i of C all pred, every other entry finite
        const auto all = hostile::everywhere(c.ref);
        bool ok = c.padding_untouched();
        for (index_t j = 0; j < 7; ++j)
            for (index_t r = 0; r < 9; ++r) ok = ok && (r == i ? pred(all[r + 9 * j]) : std::isfinite(all[r + 9 * j]));
        return ok;
    };
    const auto isnan_ = [](double x) { return std::isnan(x); };
    hostile::Guard none;

    for (Variant v : {Variant::StationaryC, Variant::StationaryA, Variant::StationaryB}) {
        const GemmOptions o{.variant = v};
        hostile::run_table(world(), "gemm (NaN/Inf)", {
            {std::string("NaN in A(4, 2) reaches row 4 of C only, variant ") + to_string(v),
             [&] { reset(1.0), a.set(4, 2, nan), gemm(Op::N, Op::N, 1.0, a.ref, b.ref, 1.0, c.ref, o); }, "",
             [&] { return row_is(4, isnan_); }},
            {std::string("Inf in A(3, 0) with B finite: row 3 of C is Inf or NaN, variant ") + to_string(v),
             [&] { reset(1.0), a.set(3, 0, inf), gemm(Op::N, Op::N, 1.0, a.ref, b.ref, 1.0, c.ref, o); }, "",
             [&] { return row_is(3, [](double x) { return !std::isfinite(x); }); }},
            {std::string("beta = 0: NaN in C does not leak, variant ") + to_string(v),
             [&] { reset(nan), gemm(Op::N, Op::N, 1.0, a.ref, b.ref, 0.0, c.ref, o); }, "",
             [&] { return count(hostile::everywhere(c.ref), isnan_) == 0 && c.padding_untouched(); }},
            {std::string("alpha = NaN: all of C is NaN, variant ") + to_string(v),
             [&] { reset(1.0), gemm(Op::N, Op::N, nan, a.ref, b.ref, 1.0, c.ref, o); }, "",
             [&] { return count(hostile::everywhere(c.ref), isnan_) == 63 && c.padding_untouched(); }},
        }, none);
    }
}

TEST_CASE("hostile: Gemm3D") {
    const Grid2D g(world());
    const Grid2D other(world(), world().size(), 1);
    const int np = world().size();
    const bool last = world().rank() == np - 1;
    Local<double> a(g, 8, 6, 2), b(g, 6, 5, 2), c(g, 8, 5, 2), b7(g, 7, 5, 2), b_nb(g, 6, 5, 3);
    Local<double> c_other(other, BlockCyclic(8, 5, 2, 2, np, 1));
    hostile::Guard guard;
    for (auto* l : {&a, &b, &c, &b7, &b_nb, &c_other}) guard.watch(l->store);
    const GemmOptions two{.grid3d = {1, 1, 2}};
    Gemm3D<double> good(Op::N, Op::N, a.ref, b.ref, c.ref, two);
    const auto make = [&](const Mat& x, const Mat& y, const Mat& z, GemmOptions o) {
        return [=] { Gemm3D<double>(Op::N, Op::N, x, y, z, o); };
    };

    hostile::run_table(world(), "Gemm3D", {
        {"k mismatch", make(a.ref, b7.ref, c.ref, two), "k of op(A) is 6 but k of op(B) is 7"},
        {"grid3d past the ranks", make(a.ref, b.ref, c.ref, {.grid3d = {2, 2, np}}), "grid3d is"},
        {"C on another grid", make(a.ref, b.ref, c_other.ref, two), "lives on a different process grid"},
        {"ranks disagree on grid3d", make(a.ref, b.ref, c.ref, {.grid3d = {1, 1, last ? 1 : 2}}), "different arguments"},
        {"set_b with another layout", [&] { good.set_b(b_nb.ref); }, "B has another layout than at construction"},
        {"set_b with another layout on one rank", [&] { good.set_b(last ? b_nb.ref : b.ref); },
         "B has another layout than at construction"},
        {"multiply into C on another grid", [&] { good.multiply(1.0, 0.0, c_other.ref); }, "C has another layout"},
        {"set_a with another shape", [&] { good.set_a(b.ref); }, "A has another layout than at construction"},
        {"ranks disagree on alpha in multiply", [&] { good.multiply(last ? 2.0 : 1.0, 0.0, c.ref); },
         "different arguments"},
    }, guard);
}

TEST_CASE("hostile: plan_gemm and the cost functions (pure functions)") {
    const BlockCyclic la(10, 7, 2, 2, 2, 2), lb(7, 9, 2, 2, 2, 2), lc(10, 9, 2, 2, 2, 2), lb8(8, 9, 2, 2, 2, 2);
    const BlockCyclic lc3(10, 9, 2, 2, 3, 1);
    const GemmOptions o{};
    hostile::Guard none;

    hostile::run_table(world(), "plan_gemm", {
        {"m < 0", [] { (void)plan_gemm(-1, 4, 4, Op::N, Op::N, 4); }, "plan_gemm: m is -1"},
        {"k < 0", [] { (void)plan_gemm(4, 4, -2, Op::N, Op::N, 4); }, "plan_gemm: k is -2"},
        {"nranks = 0", [] { (void)plan_gemm(4, 4, 4, Op::N, Op::N, 0); }, "plan_gemm: nranks is 0"},
        {"user_block = 0", [] { (void)plan_gemm(4, 4, 4, Op::N, Op::N, 4, {}, MachineModel{}, 0); },
         "plan_gemm: user_block is 0"},
        {"elem_size = 0", [] { (void)plan_gemm(4, 4, 4, Op::N, Op::N, 4, {}, MachineModel{}, 2, 0); },
         "plan_gemm: elem_size is 0"},
        {"memory limit no plan fits", [] { (void)plan_gemm(400, 400, 400, Op::N, Op::N, 4, {.memory_limit_bytes = 1}); },
         "memory"},
        {"layouts: k mismatch", [&] { (void)plan_gemm(Op::N, Op::N, la, lb8, lc, GridOrder::RowMajor, o, 8, false); },
         "plan_gemm: k of op(A) is 7 but k of op(B) is 8"},
        {"layouts: grids differ", [&] { (void)plan_gemm(Op::N, Op::N, la, lb, lc3, GridOrder::RowMajor, o, 8, false); },
         "plan_gemm: C has a layout for a 3 x 1 grid"},
        {"bad options", [&] { (void)plan_gemm(Op::N, Op::N, la, lb, lc, GridOrder::RowMajor, {.lookahead = -2}, 8, false); },
         "plan_gemm: lookahead is -2"},
    }, none);

    hostile::run_table(world(), "gemm_cost", {
        {"k mismatch", [&] { (void)gemm_cost(Op::N, Op::N, la, lb8, lc, Variant::StationaryC, o, 0, 0, 8, false); },
         "gemm_cost: k of op(A) is 7 but k of op(B) is 8"},
        {"row out of range", [&] { (void)gemm_cost(Op::N, Op::N, la, lb, lc, Variant::StationaryC, o, 2, 0, 8, false); },
         "gemm_cost: process (2, 0) is not on the 2 x 2 grid"},
        {"col < 0", [&] { (void)gemm_cost(Op::N, Op::N, la, lb, lc, Variant::StationaryC, o, 0, -1, 8, false); },
         "gemm_cost: process (0, -1)"},
        {"grids differ", [&] { (void)gemm_cost(Op::N, Op::N, la, lb, lc3, Variant::StationaryA, o, 0, 0, 8, false); },
         "gemm_cost: C has a layout for a 3 x 1 grid"},
        {"rank out of range", [&] { (void)gemm_cost(Op::N, Op::N, la, lb, lc, o, GridOrder::RowMajor, 4, 8, false); },
         "gemm_cost: rank 4 is not one of the 4 ranks"},
        {"variant out of range",
         [&] { (void)gemm_cost(Op::N, Op::N, la, lb, lc, static_cast<Variant>(7), o, 0, 0, 8, false); },
         "gemm_cost: variant is 7"},
        {"gemm_total_words: k mismatch",
         [&] { (void)gemm_total_words(Op::N, Op::N, la, lb8, lc, Variant::StationaryC, o); }, "k of op(A) is 7"},
        {"choose_gemm_variant: C rows", [&] { (void)choose_gemm_variant(Op::T, Op::N, lb, lb, lc, o); },
         "op(A) has 9 rows but C has 10"},
    }, none);

    hostile::run_table(world(), "redistribute_cost", {
        {"shape mismatch", [&] { (void)redistribute_cost(Op::N, la, lb, 0, 0); }, "op(src) is 10 x 7 but dst is 7 x 9"},
        {"grids differ", [&] { (void)redistribute_cost(Op::N, lc, lc3, 0, 0); }, "dst has a layout for a 3 x 1 grid"},
        {"row out of range", [&] { (void)redistribute_cost(Op::N, lc, lc, 5, 0); }, "process (5, 0)"},
        {"total words: shape mismatch", [&] { (void)redistribute_total_words(Op::T, la, la); }, "op(src) is 7 x 10"},
    }, none);
}

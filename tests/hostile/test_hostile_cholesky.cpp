// Hostile inputs to cala::potrf, cala::potrs, cala::trsm, plan_potrf and their cost functions;
// matrices that are not positive definite, NaN and Inf.
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

// A := n·I + small symmetric values (positive definite), both triangles.
void spd(Local<double>& a, index_t n) {
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < n; ++i) a.set(i, j, i == j ? double(n) : 0.5 / double(1 + i + j));
}

}  // namespace

TEST_CASE("hostile: potrf, potrs, trsm") {
    const Grid2D g(world());
    const Grid2D other(world(), world().size(), 1);
    const int np = world().size();
    const bool last = world().rank() == np - 1;
    Local<double> a(g, 12, 12, 3), rect(g, 12, 10, 3), b(g, 12, 4, 3), b11(g, 11, 4, 3), a_nb(g, 12, 12, 4);
    Local<double> a13(g, last ? 13 : 12, last ? 13 : 12, 3);
    Local<double> a_other(other, BlockCyclic(12, 12, 3, 3, np, 1));
    spd(a, 12);
    hostile::Guard guard;
    for (auto* l : {&a, &rect, &b, &b11, &a_nb, &a13, &a_other}) guard.watch(l->store);
    const Mat null_a(g, a.ref.layout(), last ? nullptr : a.data(), a.ld);
    const Mat short_ld(g, a.ref.layout(), a.data(), last ? a.m_loc - 1 : a.ld);
    const Mat neg_ld(g, b.ref.layout(), b.data(), -2);
    const Mat bad_layout(g, BlockCyclic(12, 12, 3, 3, g.p() + 1, g.q()), a.data(), a.ld);
    const auto L = Uplo::Lower, U = Uplo::Upper;
    const auto pf = [](Uplo u, const Mat& x, CholeskyOptions o = {}) { return [=] { (void)potrf(u, x, o); }; };

    hostile::run_table(world(), "potrf", {
        {"A not square", pf(L, rect.ref), "potrf: A must be square, got 12 x 10"},
        {"uplo out of range", pf(static_cast<Uplo>(5), a.ref), "potrf: uplo must be Lower or Upper"},
        {"A's layout for another grid shape", pf(L, bad_layout), "potrf: A has a layout for a"},
        {"A nullptr on one rank", pf(L, null_a), "potrf: A is a null pointer"},
        {"ld < local rows on one rank", pf(L, short_ld), "potrf: A has leading dimension"},
        {"lookahead < 0", pf(L, a.ref, {.lookahead = -1}), "lookahead must be >= 0, got -1"},
        {"block_size < 0", pf(L, a.ref, {.block_size = -3}), "block_size must be >= 0, got -3"},
        {"memory limit < 0", pf(L, a.ref, {.memory_limit_bytes = -1}), "memory_limit_bytes must be >= 0"},
        {"panel_threads < 0", pf(L, a.ref, {.panel_threads = -1}), "panel_threads must be >= 0"},
        {"grid3d negative", pf(L, a.ref, {.grid3d = {1, -1, 1}}), "grid3d must not be negative"},
        {"grid3d past the ranks", pf(L, a.ref, {.variant = CholeskyVariant::Repl, .grid3d = {1, 1, np + 1}}),
         "needs"},
        {"grid3d for the 2D variant", pf(L, a.ref, {.variant = CholeskyVariant::TwoD, .grid3d = {1, 1, 2}}),
         "grid3d is for the 2.5D variants"},
        {"variant out of range", pf(L, a.ref, {.variant = static_cast<CholeskyVariant>(9)}), "potrf: variant is 9"},
        {"panel mode out of range", pf(L, a.ref, {.panel = static_cast<PanelMode>(7)}), "potrf: panel is 7"},
        {"memory limit no plan fits", pf(L, a.ref, {.memory_limit_bytes = 1}), "memory"},
        {"ranks disagree on uplo", pf(last ? U : L, a.ref), "different arguments"},
        {"ranks disagree on n", pf(L, a13.ref), "different arguments"},
        {"ranks disagree on the block size", pf(L, last ? a_nb.ref : a.ref), "different arguments"},
        {"ranks disagree on the variant",
         pf(L, a.ref, {.variant = last ? CholeskyVariant::Repl : CholeskyVariant::TwoD}), "different arguments"},
        {"ranks disagree on lookahead", pf(L, a.ref, {.lookahead = last ? 0 : 1}), "different arguments"},
    }, guard);

    const auto ts = [](Uplo u, Op op, Diag d, double alpha, const Mat& x, const Mat& y, TrsmOptions o = {}) {
        return [=] { trsm(u, op, d, alpha, x, y, o); };
    };
    const auto N = Op::N, T = Op::T;
    const auto NU = Diag::NonUnit;
    hostile::run_table(world(), "trsm", {
        {"A not square", ts(L, N, NU, 1, rect.ref, b.ref), "trsm: A is 12 x 10, not square"},
        {"B's rows", ts(L, N, NU, 1, a.ref, b11.ref), "trsm: B has 11 rows but A is 12 x 12"},
        {"uplo out of range", ts(static_cast<Uplo>(2), N, NU, 1, a.ref, b.ref), "trsm: uplo is 2"},
        {"op out of range", ts(L, static_cast<Op>(4), NU, 1, a.ref, b.ref), "trsm: op is 4"},
        {"diag out of range", ts(L, N, static_cast<Diag>(3), 1, a.ref, b.ref), "trsm: diag is 3"},
        {"A on another grid", ts(L, N, NU, 1, a_other.ref, b.ref), "trsm: A lives on a different process grid"},
        {"A nullptr on one rank", ts(L, N, NU, 1, null_a, b.ref), "trsm: A is a null pointer"},
        {"B's ld negative", ts(L, N, NU, 1, a.ref, neg_ld), "trsm: B has leading dimension -2"},
        {"lookahead 65", ts(L, N, NU, 1, a.ref, b.ref, {.lookahead = 65}), "lookahead is 65"},
        {"ranks disagree on alpha", ts(L, N, NU, last ? 3 : 1, a.ref, b.ref), "different arguments"},
        {"ranks disagree on op", ts(L, last ? T : N, NU, 1, a.ref, b.ref), "different arguments"},
        {"ranks disagree on diag", ts(L, N, last ? Diag::Unit : NU, 1, a.ref, b.ref), "different arguments"},
        {"ranks disagree on uplo", ts(last ? U : L, N, NU, 1, a.ref, b.ref), "different arguments"},
    }, guard);

    const auto ps = [](Uplo u, const Mat& x, const Mat& y, TrsmOptions o = {}) { return [=] { potrs(u, x, y, o); }; };
    hostile::run_table(world(), "potrs", {
        {"A not square", ps(L, rect.ref, b.ref), "potrs: A is 12 x 10, not square"},
        {"B's rows", ps(L, a.ref, b11.ref), "potrs: B has 11 rows but A is 12 x 12"},
        {"uplo out of range", ps(static_cast<Uplo>(3), a.ref, b.ref), "potrs: uplo is 3"},
        {"A on another grid", ps(L, a_other.ref, b.ref), "potrs: A lives on a different process grid"},
        {"A's ld < local rows on one rank", ps(L, short_ld, b.ref), "potrs: A has leading dimension"},
        {"lookahead -1", ps(L, a.ref, b.ref, {.lookahead = -1}), "lookahead is -1"},
        {"ranks disagree on uplo", ps(last ? U : L, a.ref, b.ref), "different arguments"},
        {"ranks disagree on A's block size", ps(L, last ? a_nb.ref : a.ref, b.ref), "different arguments"},
    }, guard);
}

TEST_CASE("hostile: potrf on matrices that are not positive definite, and NaN") {
    const Grid2D g(world());
    const int np = world().size();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const index_t n = 13;
    Local<double> a(g, n, n, 3);
    hostile::Guard none;
    std::vector<CholeskyOptions> opts = {{.variant = CholeskyVariant::TwoD},
                                         {.variant = CholeskyVariant::TwoD, .lookahead = 0},
                                         {.variant = CholeskyVariant::TwoD, .block_size = 2}};
    if (np >= 2) {
        opts.push_back({.variant = CholeskyVariant::Repl, .grid3d = {1, 1, 2}});
        opts.push_back({.variant = CholeskyVariant::ReplPart, .grid3d = {1, 1, 2}});
    }
    // (k, what is put at A(k, k)): the leading minor of order k + 1 fails; info = k + 1.
    const std::pair<index_t, double> bad[] = {{0, -1.0}, {4, -50.0}, {5, 0.0}, {n - 1, -1.0}, {7, nan}};
    for (const Uplo uplo : {Uplo::Lower, Uplo::Upper})
        for (const auto& o : opts) {
            std::vector<Row> rows;
            for (const auto& [k, v] : bad) {
                auto info = std::make_shared<index_t>(-1);
                rows.push_back({"A(" + std::to_string(k) + ", " + std::to_string(k) + ") = " + std::to_string(v) +
                                    ", " + to_string(o.variant) + ", uplo " + uplo_char(uplo) + ", lookahead " +
                                    std::to_string(o.lookahead) + ", block " + std::to_string(o.block_size),
                                [&a, k = k, v = v, uplo, o, info] {
                                    spd(a, n);
                                    a.set(k, k, v);
                                    *info = potrf(uplo, a.ref, o);
                                },
                                "", [&a, k = k, info] { return *info == k + 1 && a.padding_untouched(); }});
            }
            hostile::run_table(world(), "potrf (not SPD)", rows, none);
        }
}

TEST_CASE("hostile: trsm and potrs with NaN, Inf and a zero pivot (BLAS semantics)") {
    const Grid2D g(world());
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    const index_t n = 10;
    Local<double> a(g, n, n, 3), b(g, n, 3, 3);
    const auto reset = [&] {
        spd(a, n);
        for (index_t j = 0; j < 3; ++j)
            for (index_t i = 0; i < n; ++i) b.set(i, j, 1.0);
    };
    const auto b_all = [&](auto pred) {
        const auto all = hostile::everywhere(b.ref);
        bool ok = b.padding_untouched() && a.padding_untouched();
        for (double x : all) ok = ok && pred(x);
        return ok;
    };
    const auto col_nan = [&](index_t col) {  // column col of B is NaN from row `from` on, the rest finite
        const auto all = hostile::everywhere(b.ref);
        bool ok = b.padding_untouched();
        for (index_t j = 0; j < 3; ++j)
            for (index_t i = 0; i < n; ++i) ok = ok && (j == col ? std::isnan(all[i + n * j]) : std::isfinite(all[i + n * j]));
        return ok;
    };
    hostile::Guard none;

    hostile::run_table(world(), "trsm (NaN/Inf)", {
        {"NaN in B(0, 1): column 1 of X is NaN, the rest finite",
         [&] { reset(), b.set(0, 1, nan), trsm(Uplo::Lower, Op::N, Diag::NonUnit, 1.0, a.ref, b.ref); }, "",
         [&] { return col_nan(1); }},
        {"Inf in B(n-1, 2) through op = T: column 2 not finite, column 0 finite",
         [&] { reset(), b.set(n - 1, 2, inf), trsm(Uplo::Lower, Op::T, Diag::NonUnit, 1.0, a.ref, b.ref); }, "",
         [&] {
             const auto all = hostile::everywhere(b.ref);
             return !std::isfinite(all[0 + n * 2]) && std::isfinite(all[0]) && b.padding_untouched();
         }},
        {"zero pivot A(0, 0): no error, X not finite (like BLAS)",
         [&] { reset(), a.set(0, 0, 0.0), trsm(Uplo::Lower, Op::N, Diag::NonUnit, 1.0, a.ref, b.ref); }, "",
         [&] { return b_all([](double x) { return !std::isfinite(x); }); }},
        {"alpha = 0: B := 0 even with NaN in A",
         [&] { reset(), a.set(3, 3, nan), trsm(Uplo::Lower, Op::N, Diag::NonUnit, 0.0, a.ref, b.ref); }, "",
         [&] { return b_all([](double x) { return x == 0.0; }); }},
        {"potrs: NaN in B(4, 0) spreads over column 0 only",
         [&] { reset(), (void)potrf(Uplo::Lower, a.ref), b.set(4, 0, nan), potrs(Uplo::Lower, a.ref, b.ref); }, "",
         [&] { return col_nan(0); }},
    }, none);
}

TEST_CASE("hostile: plan_potrf and the Cholesky cost functions (pure functions)") {
    const BlockCyclic sq(12, 12, 3, 3, 2, 2), rect(12, 10, 3, 3, 2, 2), b(12, 4, 3, 3, 2, 2), b11(11, 4, 3, 3, 2, 2);
    const BlockCyclic b_other(12, 4, 3, 3, 4, 1);
    hostile::Guard none;

    hostile::run_table(world(), "plan_potrf / costs", {
        {"plan_potrf: A not square", [&] { (void)plan_potrf(Uplo::Lower, rect, GridOrder::RowMajor, {}, 8, false); },
         "plan_potrf: A must be square, got 12 x 10"},
        {"plan_potrf: bad options",
         [&] { (void)plan_potrf(Uplo::Lower, sq, GridOrder::RowMajor, {.lookahead = -1}, 8, false); },
         "plan_potrf: lookahead must be >= 0"},
        {"plan_potrf: n < 0", [] { (void)plan_potrf(-5, 4); }, "plan_potrf: n is -5"},
        {"plan_potrf: nranks = 0", [] { (void)plan_potrf(100, 0); }, "plan_potrf: nranks is 0"},
        {"plan_potrf: user_block = 0", [] { (void)plan_potrf(100, 4, {}, MachineModel{}, 0); },
         "plan_potrf: user_block is 0"},
        {"potrf_cost: A not square", [&] { (void)potrf_cost(Uplo::Lower, rect, GridOrder::RowMajor, {}, 0, 8, false); },
         "potrf_cost: A must be square"},
        {"potrf_cost: rank out of range", [&] { (void)potrf_cost(Uplo::Lower, sq, GridOrder::RowMajor, {}, 4, 8, false); },
         "potrf_cost: rank 4 is not one of the 4 ranks"},
        {"trsm_cost: B's rows", [&] { (void)trsm_cost(Uplo::Lower, Op::N, sq, b11, {}, 0, 0, 8, false); },
         "trsm_cost: B has 11 rows but A is 12 x 12"},
        {"trsm_cost: process out of range", [&] { (void)trsm_cost(Uplo::Lower, Op::N, sq, b, {}, 0, 2, 8, false); },
         "trsm_cost: process (0, 2) is not on the 2 x 2 grid"},
        {"trsm_cost: grids differ", [&] { (void)trsm_cost(Uplo::Lower, Op::N, sq, b_other, {}, 0, 0, 8, false); },
         "trsm_cost: B has a layout for a 4 x 1 grid"},
        {"potrs_cost: A not square", [&] { (void)potrs_cost(Uplo::Upper, rect, b, {}, 0, 0, 8, false); },
         "potrs_cost: A is 12 x 10, not square"},
    }, none);
}

// cala::getrf and cala::getrs on 2D grids (odd ones too): every type; square, tall and wide; sizes
// 0, 1, n < nb and sizes nb does not divide; submatrices at and inside block boundaries, non-zero
// sources. On gathered data: ipiv a valid interchange sequence (the same on every rank),
// ‖P·A − L·U‖ / (max(m, n)·eps·‖A‖) < 50, the rest of the parent untouched, traffic == getrf_cost
// exactly on every rank; getrs (N, T, C): residual / (n·eps·(‖A‖‖X‖ + ‖B‖)) < 50, traffic ==
// getrs_cost. An exactly zero column k: info = k + 1 on every rank. NaN does not hang. Bad input:
// cala::Error on every rank before any communication, A untouched.
// (run as: mpiexec.mpich -n N test_lu, N in {1, 2, 3, 4, 6})

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "lu/lu_check.hpp"
#include "support/helpers.hpp"

using namespace cala;
using test::all_ranks;

namespace {

struct Case {
    index_t m, n, nb;
    int rsrc, csrc;
    index_t off;  // submatrix offset (both dimensions)
};

const Case kCases[] = {
    {0, 0, 4, 0, 0, 0},  {1, 1, 4, 0, 0, 0},   {3, 3, 8, 0, 0, 0},    {37, 37, 4, 0, 0, 0}, {29, 29, 5, 1, 1, 3},
    {40, 25, 4, 0, 0, 0}, {25, 40, 6, 1, 0, 0}, {64, 64, 8, 0, 1, 8}, {50, 17, 8, 1, 1, 8}, {13, 31, 4, 0, 0, 2},
    {0, 7, 4, 0, 0, 0},  {9, 0, 4, 0, 0, 0},
};

// Oversubscribed runs (3 and more ranks on the 2-core CI machine) run a sample: every case on
// the first grid in double, every `stride`-th one elsewhere (each blocking wait there costs a
// scheduler time slice).
int stride() {
    int np = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    return np <= 2 ? 1 : np < 6 ? 4 : 8;
}

std::vector<Grid2D> grids() {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const int np = world.size();
    std::vector<Grid2D> out = {Grid2D(world)};
    if (np > 1) out.emplace_back(world, np, 1);
    if (np == 4) out.emplace_back(world, 1, 4);
    if (np == 6) out.emplace_back(world, 3, 2);
    return out;
}

// Zeroes column `zero_col` of the submatrix (global, on the gathered parent) when >= 0.
template <class T>
void factor_case(const Grid2D& grid, const Case& c, const LuOptions& o, index_t zero_col = -1) {
    const index_t pm = c.m + c.off, pn = c.n + c.off;
    DistMatrix<T> parent(grid, pm, pn, c.nb, c.nb, c.rsrc % grid.p(), c.csrc % grid.q());
    test::randomize(parent.view());
    std::vector<T> g0 = gather(parent.view());
    if (zero_col >= 0) {
        if (grid.comm().rank() == 0)
            for (index_t i = 0; i < c.m; ++i) g0[(c.off + i) + (c.off + zero_col) * pm] = T(0);
        scatter(g0.data(), pm, parent.view());
    }
    const MatrixRef<T> a = parent.sub(c.off, c.off, c.m, c.n);
    const Cost bound = getrf_cost(a.layout(), o, grid.row(), grid.col(), sizeof(T), is_complex_v<T>);
    std::vector<index_t> ipiv = {7};

    reset_traffic();
    const index_t info = getrf(a, ipiv, o);
    const Traffic t = traffic();
    const Cost model = getrf_cost(a.layout(), o, grid.row(), grid.col(), sizeof(T), is_complex_v<T>, ipiv);

    const std::vector<T> f = gather(parent.view());
    test::FactorCheck fc;
    if (grid.comm().rank() == 0) fc = test::check_factors(g0, f, pm, pn, c.off, c.m, c.n, ipiv);
    const bool valid = fc.valid, untouched = fc.untouched;
    const double err = fc.err;
    CAPTURE(c.m);
    CAPTURE(c.n);
    CAPTURE(c.nb);
    CAPTURE(c.off);
    CAPTURE(grid.p());
    CAPTURE(grid.q());
    CAPTURE(o.lookahead);
    CAPTURE(err);
    CAPTURE(info);
    CHECK(all_ranks(valid, grid));
    CHECK(all_ranks(test::same_everywhere(ipiv, grid.comm().get()), grid));
    CHECK(all_ranks(err < 50.0, grid));
    CHECK(all_ranks(untouched, grid));
    CHECK(all_ranks(info == (zero_col >= 0 ? zero_col + 1 : 0), grid));
    CHECK(all_ranks(t.words() == model.words && t.words_recv == model.words_recv, grid));
    CHECK(all_ranks(t.msgs() == model.msgs, grid));
    CHECK(all_ranks(model.words <= bound.words && model.msgs <= bound.msgs && model.flops == bound.flops, grid));
}

template <class T>
void solve_case(const Grid2D& grid, const Case& c, index_t nrhs, Op op) {
    const index_t n = c.n, pn = n + c.off;
    DistMatrix<T> pa(grid, pn, pn, c.nb, c.nb, c.rsrc % grid.p(), c.csrc % grid.q());
    DistMatrix<T> pb(grid, pn, nrhs, c.nb, 3, c.rsrc % grid.p(), 0);
    test::randomize(pa.view());
    test::randomize(pb.view());
    const std::vector<T> ga = gather(pa.view()), gb = gather(pb.view());
    const MatrixRef<T> a = pa.sub(c.off, c.off, n, n), b = pb.sub(c.off, 0, n, nrhs);
    std::vector<index_t> ipiv;
    getrf(a, ipiv);
    const Cost model = getrs_cost(op, a.layout(), b.layout(), grid.row(), grid.col(), sizeof(T), is_complex_v<T>, ipiv);

    reset_traffic();
    getrs(op, a, ipiv, b);
    const Traffic t = traffic();

    const std::vector<T> x = gather(pb.view());
    double res = 0;
    if (grid.comm().rank() == 0)
        res = test::solve_residual(op, test::submatrix(ga, pn, c.off, n, n), test::submatrix(x, pn, c.off, n, nrhs, 0),
                                   test::submatrix(gb, pn, c.off, n, nrhs, 0), n, nrhs);
    CAPTURE(n);
    CAPTURE(c.nb);
    CAPTURE(c.off);
    CAPTURE(nrhs);
    CAPTURE(static_cast<int>(op));
    CAPTURE(res);
    CHECK(all_ranks(res < 50.0, grid));
    CHECK(all_ranks(t.words() == model.words && t.words_recv == model.words_recv, grid));
    CHECK(all_ranks(t.msgs() == model.msgs, grid));
}

}  // namespace

TEST_CASE_TEMPLATE("getrf factors P·A = L·U and moves what the model says", T, float, double, std::complex<float>,
                   std::complex<double>) {
    int count = 0, g = 0;
    for (const Grid2D& grid : grids()) {
        // On p x 1 the planner runs OneRow (the 1 x p grid of the same ranks): TwoD there too.
        const std::vector<LuVariant> variants =
            grid.q() == 1 && grid.p() > 1 ? std::vector{LuVariant::Auto, LuVariant::TwoD} : std::vector{LuVariant::Auto};
        for (LuVariant v : variants)
            for (int la : {1, 0})
                for (const Case& c : kCases) {
                    // Every case in double on the first grid; a sample elsewhere and for the other
                    // types (time on 2 cores).
                    const int keep = (std::is_same_v<T, double> ? 1 : 3) * (g == 0 && la == 1 ? 1 : stride());
                    if ((count++ % keep) != 0) continue;
                    factor_case<T>(grid, c, {.variant = v, .lookahead = la});
                }
        ++g;
    }
}

TEST_CASE("the plan: OneRow on p x 1 where the copy fits, TwoD elsewhere") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const int np = world.size();
    const BlockCyclic col(100, 80, 8, 8, np, 1), row(100, 80, 8, 8, 1, np);
    const std::size_t e = sizeof(double);
    const LuVariant expect = np > 1 ? LuVariant::OneRow : LuVariant::TwoD;
    CHECK(getrf_variant(col, {}, e) == expect);
    CHECK(getrf_variant(col, {.variant = LuVariant::OneRow}, e) == expect);
    CHECK(getrf_variant(col, {.variant = LuVariant::TwoD}, e) == LuVariant::TwoD);
    CHECK(getrf_variant(col, {.memory_limit_bytes = 1000}, e) == LuVariant::TwoD);  // the copy does not fit
    CHECK(getrf_variant(col, {.variant = LuVariant::OneRow, .memory_limit_bytes = 1000}, e) == expect);  // forced
    CHECK(getrf_variant(row, {}, e) == LuVariant::TwoD);
    CHECK(getrf_variant(row, {.variant = LuVariant::OneRow}, e) == LuVariant::TwoD);
    CHECK(std::string(to_string(LuVariant::OneRow)) == "1xP");
    // OneRow's memory fallback and a forced OneRow factor as the model says (p x 1, np > 1).
    if (np > 1) {
        const Grid2D grid(world, np, 1);
        factor_case<double>(grid, {37, 37, 4, 0, 0, 0}, {.memory_limit_bytes = 1000});
        factor_case<double>(grid, {29, 29, 5, 1, 0, 3}, {.variant = LuVariant::OneRow, .memory_limit_bytes = 1000});
        factor_case<std::complex<double>>(grid, {30, 30, 4, 0, 0, 0}, {.variant = LuVariant::OneRow}, 13);
    }
    CHECK_THROWS_AS(getrf_variant(col, {.variant = static_cast<LuVariant>(7)}, e), Error);
}

TEST_CASE_TEMPLATE("getrs solves op(A)·X = B with the factors", T, float, double, std::complex<float>,
                   std::complex<double>) {
    const Case cases[] = {{1, 1, 4, 0, 0, 0}, {37, 37, 4, 1, 0, 0}, {29, 29, 5, 0, 1, 3}, {48, 48, 8, 0, 0, 8}};
    int count = 0;
    for (const Grid2D& grid : grids())
        for (const Case& c : cases)
            for (Op op : {Op::N, Op::T, Op::C}) {
                if (!is_complex_v<T> && op == Op::C) continue;
                if ((count++ % stride()) != 0) continue;
                solve_case<T>(grid, c, 5, op);
            }
}

TEST_CASE_TEMPLATE("1 x q on one node: node-shared slots and broadcasts alike", T, double, std::complex<float>) {
    // LuOptions::node_shared_memory on a 1 x q grid (this test's ranks share the machine): the
    // row broadcasts through the shared slots, reused within a call (past four steps) and across
    // calls, against the broadcasts on the same cases; both factor, and move what the model says.
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    if (world.size() < 2) return;
    const Grid2D grid(world, 1, world.size());
    const Case cases[] = {{37, 37, 4, 0, 0, 0}, {40, 25, 4, 0, 1, 0}, {29, 29, 5, 1, 1, 3}, {13, 31, 4, 0, 0, 2}};
    int count = 0;
    for (bool shared : {true, false})
        for (int la : {1, 0})
            for (const Case& c : cases) {
                if ((count++ % stride()) != 0) continue;
                factor_case<T>(grid, c, {.lookahead = la, .node_shared_memory = shared});
            }
    factor_case<T>(grid, {30, 30, 4, 0, 0, 0}, {}, 13);  // a zero column: the same info everywhere
}

TEST_CASE("an exactly zero column k gives info = k + 1 on every rank") {
    int count = 0;
    for (const Grid2D& grid : grids())
        for (index_t k : {0, 13, 29}) {
            factor_case<double>(grid, {30, 30, 4, 0, 0, 0}, {}, k);
            if ((count++ % stride()) == 0) factor_case<std::complex<float>>(grid, {30, 34, 5, 1, 0, 0}, {}, k);
        }
}

TEST_CASE("NaN in A does not hang getrf or getrs") {
    for (const Grid2D& grid : grids()) {
        DistMatrix<double> a(grid, 40, 40, 4, 4), b(grid, 40, 2, 4, 4);
        test::randomize(a.view());
        test::randomize(b.view());
        if (grid.comm().rank() == grid.comm().size() - 1 && a.m_loc() > 0 && a.n_loc() > 0)
            a.local(0, 0) = std::numeric_limits<double>::quiet_NaN();
        std::vector<index_t> ipiv;
        getrf(a.view(), ipiv);
        bool ok = static_cast<index_t>(ipiv.size()) == 40;
        for (std::size_t i = 0; ok && i < ipiv.size(); ++i) ok = ipiv[i] >= index_t(i) && ipiv[i] < 40;
        if (ok) getrs(Op::N, a.view(), ipiv, b.view());
        CHECK(all_ranks(ok, grid));
    }
}

TEST_CASE("bad input is a cala::Error on every rank before any communication, A untouched") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    auto expect_error = [&](auto&& f, const DistMatrix<double>& a, const char* what) {
        const std::vector<double> before(a.data(), a.data() + a.m_loc() * a.n_loc());
        reset_traffic();
        const std::string msg = test::error_message(f);
        const Traffic t = traffic();
        const bool same = std::memcmp(before.data(), a.data(), before.size() * sizeof(double)) == 0;
        CAPTURE(what);
        CAPTURE(msg);
        CHECK(all_ranks(!msg.empty(), grid));
        CHECK(all_ranks(t.msgs() == 0, grid));
        CHECK(all_ranks(same, grid));
    };
    std::vector<index_t> ipiv;
    DistMatrix<double> rect(grid, 20, 20, 4, 5);
    test::randomize(rect.view());
    expect_error([&] { getrf(rect.view(), ipiv); }, rect, "mb != nb");
    DistMatrix<double> a(grid, 20, 20, 4, 4), b(grid, 20, 3, 4, 4);
    test::randomize(a.view());
    expect_error([&] { getrf(a.sub(1, 2, 12, 12), ipiv); }, a, "misaligned submatrix");
    expect_error([&] { getrf(a.view(), ipiv, {.lookahead = -1}); }, a, "negative lookahead");
    ipiv.assign(19, 0);
    expect_error([&] { getrs(Op::N, a.view(), ipiv, b.view()); }, a, "ipiv of the wrong size");
    ipiv.assign(20, 0);
    expect_error([&] { getrs(Op::N, a.view(), ipiv, b.view()); }, a, "ipiv[i] < i");
    expect_error([&] { getrs(Op::N, a.view(), std::vector<index_t>(20, 19), b.sub(0, 0, 16, 3)); }, a, "B's rows");
    const std::vector<index_t> short_piv(19, 19), low_piv(20, 0);
    CHECK_THROWS_AS(getrf_cost(a.layout(), {}, 0, 0, sizeof(double), false, short_piv), Error);
    CHECK_THROWS_AS(getrf_cost(a.layout(), {}, 0, 0, sizeof(double), false, low_piv), Error);
    CHECK_THROWS_AS(getrs_cost(Op::N, a.layout(), b.layout(), 0, 0, sizeof(double), false, low_piv), Error);
    if (world.size() > 1) {
        const Grid2D other(world, world.size(), 1);
        if (!other.same_as(grid)) {
            DistMatrix<double> b2(other, 20, 3, 4, 4);
            expect_error([&] { getrs(Op::N, a.view(), std::vector<index_t>(20, 19), b2.view()); }, a, "B on another grid");
        }
    }
}

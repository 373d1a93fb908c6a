// cala::getrf with LuVariant::Layered (2.5D): every p x q x h grid with h >= 2 the world holds
// (idle ranks beyond p·q·h included), on row- and column-major user grids; square, tall, wide,
// sizes nb does not divide, a submatrix inside a block, n = 1, empty; lookahead 0 and 1; every
// type. On gathered data: ipiv a valid interchange sequence, the same on every rank,
// ‖P·A − L·U‖ / (max(m, n)·eps·‖A‖) < 50, the rest of the parent untouched, words / received /
// messages == getrf_cost (order, rank) exactly on every rank and <= the pivot-free bound. The
// planner's grid; an exactly zero column; bad input (a grid3d with another variant, a side of 0,
// more ranks than A has, a memory limit no grid fits): cala::Error on every rank, A untouched.
// (run as: mpiexec.mpich -n N test_lu_25d, N in {2, 3, 4})

#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "lu/lu_check.hpp"
#include "support/helpers.hpp"

using namespace cala;
using test::all_ranks;

namespace {

struct Case {
    index_t m, n, nb;
    index_t off;  // submatrix offset (both dimensions)
};

const Case kCases[] = {{37, 37, 4, 0}, {29, 29, 5, 3}, {40, 25, 4, 0}, {25, 40, 6, 0}, {1, 1, 4, 0}, {0, 0, 4, 0}};

// Every p x q x h grid with h >= 2 over at most np ranks.
std::vector<Shape3D> layered_grids(int np) {
    std::vector<Shape3D> out;
    for (int h = 2; h <= np; ++h)
        for (int p = 1; p * h <= np; ++p)
            for (int q = 1; p * q * h <= np; ++q) out.push_back({p, q, h});
    return out;
}

template <class T>
void factor_case(const Grid2D& grid, GridOrder order, const Case& c, const LuOptions& o, index_t zero_col = -1) {
    const index_t pm = c.m + c.off, pn = c.n + c.off;
    DistMatrix<T> parent(grid, pm, pn, c.nb, c.nb);
    test::randomize(parent.view());
    std::vector<T> g0 = gather(parent.view());
    if (zero_col >= 0) {
        if (grid.comm().rank() == 0)
            for (index_t i = 0; i < c.m; ++i) g0[(c.off + i) + (c.off + zero_col) * pm] = T(0);
        scatter(g0.data(), pm, parent.view());
    }
    const MatrixRef<T> a = parent.sub(c.off, c.off, c.m, c.n);
    const int rank = grid.comm().rank();
    const Cost bound = getrf_cost(a.layout(), o, order, rank, sizeof(T), is_complex_v<T>);
    std::vector<index_t> ipiv = {7};

    reset_traffic();
    const index_t info = getrf(a, ipiv, o);
    const Traffic t = traffic();
    const Cost model = getrf_cost(a.layout(), o, order, rank, sizeof(T), is_complex_v<T>, ipiv);

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
    CAPTURE(o.grid3d.p);
    CAPTURE(o.grid3d.q);
    CAPTURE(o.grid3d.c);
    CAPTURE(o.lookahead);
    CAPTURE(err);
    CAPTURE(info);
    CAPTURE(t.words());
    CAPTURE(model.words);
    CHECK(all_ranks(valid, grid));
    CHECK(all_ranks(test::same_everywhere(ipiv, grid.comm().get()), grid));
    CHECK(all_ranks(err < 50.0, grid));
    CHECK(all_ranks(untouched, grid));
    CHECK(all_ranks(info == (zero_col >= 0 ? zero_col + 1 : 0), grid));
    CHECK(all_ranks(t.words() == model.words && t.words_recv == model.words_recv, grid));
    CHECK(all_ranks(t.msgs() == model.msgs, grid));
    CHECK(all_ranks(model.words <= bound.words && model.msgs <= bound.msgs && model.flops == bound.flops, grid));
}

}  // namespace

TEST_CASE_TEMPLATE("layered getrf factors P·A = L·U on every p x q x h grid and moves what the model says", T, float,
                   double, std::complex<float>, std::complex<double>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const int np = world.size();
    int count = 0;
    for (GridOrder order : {GridOrder::RowMajor, GridOrder::ColumnMajor}) {
        // Column-major: 2 x np/2 where np is even (there rank r is process (r mod 2, r / 2)), else np x 1.
        const bool cm = order == GridOrder::ColumnMajor;
        const int p = cm ? (np % 2 == 0 ? 2 : np) : 1;
        const Grid2D grid(world, p, np / p, order);
        for (const Shape3D& g3 : layered_grids(np))
            for (int la : {1, 0})
                for (const Case& c : kCases) {
                    // Every case in double with lookahead 1; a sample for the other types.
                    const int keep = (std::is_same_v<T, double> ? 1 : 3) * (la == 1 ? 1 : 2);
                    if ((count++ % keep) != 0) continue;
                    factor_case<T>(grid, order, c, {.variant = LuVariant::Layered, .lookahead = la, .grid3d = g3});
                }
    }
}

TEST_CASE("the planner's layered grid; a zero column; the memory limit") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const int np = world.size();
    const Grid2D grid(world);
    const BlockCyclic l(96, 96, 8, 8, grid.p(), grid.q());
    const LuOptions layered{.variant = LuVariant::Layered};
    const Shape3D g = getrf_grid(l, layered, sizeof(double));
    CAPTURE(g.p);
    CAPTURE(g.q);
    CAPTURE(g.c);
    CHECK(g.c >= 2);
    CHECK(g.p * g.q * g.c == np);
    CHECK(getrf_variant(l, layered, sizeof(double)) == LuVariant::Layered);
    // The planner's choice moves no more words on its busiest rank than any other h dividing np.
    auto busiest = [&](const Shape3D& s) {
        std::int64_t w = 0;
        for (int r = 0; r < np; ++r)
            w = std::max(w, getrf_cost(l, {.variant = LuVariant::Layered, .grid3d = s}, GridOrder::RowMajor, r, 8,
                                       false).words);
        return w;
    };
    for (int h = 2; h <= np; ++h)
        if (np % h == 0) CHECK(busiest(g) <= busiest({1, np / h, h}));
    // Auto keeps 2D (or 1 x p) and TwoD its grid.
    CHECK(getrf_grid(l, {}, 8).c == 1);
    CHECK(getrf_grid(l, {.variant = LuVariant::TwoD}, 8).p == grid.p());
    // The planner's grid runs; a zero column gives LAPACK's info there too.
    factor_case<double>(grid, GridOrder::RowMajor, {29, 29, 5, 3}, layered);
    factor_case<double>(grid, GridOrder::RowMajor, {24, 24, 4, 0}, layered, 9);
    // A limit no layered grid fits: refused.
    CHECK_THROWS_AS(getrf_grid(l, {.variant = LuVariant::Layered, .memory_limit_bytes = 64}, 8), Error);
}

TEST_CASE("layered getrf: bad input is a cala::Error on every rank, A untouched") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const int np = world.size();
    const Grid2D grid(world);
    DistMatrix<double> a(grid, 20, 20, 4, 4);
    test::randomize(a.view());
    const std::vector<double> before = gather(a.view());
    std::vector<index_t> ipiv;
    const LuOptions bad[] = {
        {.variant = LuVariant::TwoD, .grid3d = {1, 1, 2}},
        {.variant = LuVariant::Layered, .grid3d = {1, 0, 2}},
        {.variant = LuVariant::Layered, .grid3d = {1, np, 2}},
        {.variant = LuVariant::Layered, .memory_limit_bytes = 64},
    };
    for (const LuOptions& o : bad) {
        CAPTURE(o.grid3d.q);
        bool threw = false;
        try {
            getrf(a.view(), ipiv, o);
        } catch (const Error&) {
            threw = true;
        }
        CHECK(all_ranks(threw, grid));
    }
    CHECK(all_ranks(gather(a.view()) == before || grid.comm().rank() != 0, grid));
    CHECK_THROWS_AS(getrf_cost(a.layout(), {.variant = LuVariant::Layered, .grid3d = {1, 1, 2}}, GridOrder::RowMajor, np,
                               8, false),
                    Error);
}

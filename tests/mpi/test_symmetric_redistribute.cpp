// redistribute between 2DBC and the symmetric layouts (SBC, TBC; lower half) and the operands
// paired with them: round trips keep exactly the elements both sides store, traffic == model.
// (run as: mpiexec.mpich -n N test_symmetric_redistribute, N in {1, 2, 3, 6, 8, 12})

#include <doctest/doctest.h>

#include <random>

#include "support/helpers.hpp"

using namespace cala;

namespace {

std::vector<SymmetricLayout> symmetric_layouts(int nranks, index_t n, index_t nb) {
    std::vector<SymmetricLayout> out;
    for (const auto& c : choose_symmetric_layout(nranks, n, nb)) out.push_back(make_symmetric_layout(c, n, nb));
    return out;
}

bool traffic_is(const Cost& model, const Traffic& t) { return t.words() == model.words && t.msgs() == model.msgs; }

template <class T>
DistMatrix<T> random_2dbc(const Grid2D& grid, index_t m, index_t n, std::mt19937& g) {
    DistMatrix<T> x(grid, m, n, 1 + g() % 4, 1 + g() % 4, static_cast<int>(g() % grid.p()), static_cast<int>(g() % grid.q()));
    test::randomize(x.view());
    return x;
}

}  // namespace

TEST_CASE_TEMPLATE("2DBC -> symmetric lower half -> 2DBC keeps the lower tiles; traffic == model", T, float, double,
                   std::complex<float>, std::complex<double>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    std::mt19937 g(99);  // the same layouts on every rank
    for (const index_t n : {0, 1, 5, 13, 26}) {
        for (const index_t nb : {1, 2, 3}) {
            for (const auto& sym : symmetric_layouts(world.size(), n, nb)) {
                CAPTURE(sym.describe()); CAPTURE(n); CAPTURE(nb);
                const DistMatrix<T> x = random_2dbc<T>(grid, n, n, g);
                TiledMatrix<T> a(grid, TileLayout::lower(sym));
                DistMatrix<T> y(grid, n, n, 1 + g() % 5, 1 + g() % 5);
                const auto xs = gather(x.view());
                reset_traffic();

                redistribute(x.view(), a);
                const Traffic t_in = traffic();
                reset_traffic();
                redistribute(a, y.view());
                const Traffic t_out = traffic();

                const auto ys = gather(y.view());
                bool ok = true;
                for (std::size_t k = 0; k < ys.size(); ++k) {
                    const index_t i = static_cast<index_t>(k) % n, j = static_cast<index_t>(k) / n;
                    ok = ok && ys[k] == (i / nb >= j / nb ? xs[k] : T(0));
                }
                CHECK(test::all_ranks(ok, grid));
                CHECK(test::all_ranks(a.local_elements() == sym.local_elements(world.rank()), grid));
                const Cost m_in = redistribute_cost(x.layout(), grid.order(), a.layout(), world.rank());
                const Cost m_out = redistribute_cost(a.layout(), y.layout(), grid.order(), world.rank());
                CHECK(test::all_ranks(traffic_is(m_in, t_in), grid));
                CHECK(test::all_ranks(traffic_is(m_out, t_out), grid));
            }
        }
    }
}

TEST_CASE("symmetric -> symmetric (another pattern, another block) keeps what both store") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    std::mt19937 g(5);
    const index_t n = 23;
    for (const auto& s1 : symmetric_layouts(world.size(), n, 2))
        for (const auto& s2 : symmetric_layouts(world.size(), n, 3)) {
            CAPTURE(s1.describe()); CAPTURE(s2.describe());
            const DistMatrix<double> x = random_2dbc<double>(grid, n, n, g);
            TiledMatrix<double> a(grid, TileLayout::lower(s1)), b(grid, TileLayout::lower(s2));
            DistMatrix<double> y(grid, n, n, 4, 4);
            redistribute(x.view(), a);
            reset_traffic();

            redistribute(a, b);
            const Traffic t = traffic();
            redistribute(b, y.view());

            const auto xs = gather(x.view()), ys = gather(y.view());
            bool ok = true;
            for (std::size_t k = 0; k < ys.size(); ++k) {
                const index_t i = static_cast<index_t>(k) % n, j = static_cast<index_t>(k) / n;
                ok = ok && ys[k] == (i / 2 >= j / 2 && i / 3 >= j / 3 ? xs[k] : 0.0);
            }
            CHECK(test::all_ranks(ok, grid));
            CHECK(test::all_ranks(traffic_is(redistribute_cost(a.layout(), b.layout(), world.rank()), t), grid));
        }
}

TEST_CASE_TEMPLATE("2DBC -> operand paired with a symmetric layout -> 2DBC is the identity", T, double,
                   std::complex<float>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    std::mt19937 g(17);
    for (const index_t m : {0, 7, 20}) {
        for (const index_t k : {0, 1, 9}) {
            for (const Side side : {Side::Left, Side::Right}) {
                for (const auto& sym : symmetric_layouts(world.size(), m, 2)) {
                    CAPTURE(sym.describe()); CAPTURE(m); CAPTURE(k); CAPTURE(int(side));
                    const TileLayout pl = TileLayout::paired(sym, side, k, 1 + g() % 3);
                    const DistMatrix<T> x = random_2dbc<T>(grid, pl.m(), pl.n(), g);
                    TiledMatrix<T> b(grid, pl);
                    DistMatrix<T> y(grid, pl.m(), pl.n(), 3, 2);
                    reset_traffic();

                    redistribute(x.view(), b);
                    const Traffic t = traffic();
                    redistribute(b, y.view());

                    CHECK(test::all_ranks(gather(x.view()) == gather(y.view()), grid));
                    CHECK(test::all_ranks(b.local_elements() == pl.local_elements(world.rank()), grid));
                    const Cost model = redistribute_cost(x.layout(), grid.order(), pl, world.rank());
                    CHECK(test::all_ranks(traffic_is(model, t), grid));
                }
            }
        }
    }
}

TEST_CASE("redistribute with a tiled side: shapes checked on every rank, nothing moved") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    const auto sym = symmetric_layouts(world.size(), 10, 2).front();
    TiledMatrix<double> a(grid, TileLayout::lower(sym));
    DistMatrix<double> y(grid, 10, 9, 2, 2);
    reset_traffic();

    const std::string e = test::error_message([&] { redistribute(a, y.view()); });

    CHECK(e.find("src is 10 x 10 but dst is 10 x 9") != std::string::npos);
    CHECK(traffic().words() == 0);
}

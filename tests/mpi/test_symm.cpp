// cala::symm / cala::hemm on 2DBC (every grid of the rank count) and on the symmetric layouts
// that fit it (SBC, extended SBC, TBC): result vs the sequential product with the full symmetric
// A rebuilt from the stored triangle (the other triangle holds NaN: it must not be read), every
// side and uplo, sizes the block does not divide, beta = 0 with NaN in C; words and messages
// per rank == model; bad arguments -> cala::Error on every rank, nothing moved.
// (run as: mpiexec.mpich -n N test_symm, N in {1, 2, 3, 4, 6, 8, 12}; above 2 ranks, oversubscribed,
// double and complex<double> only, a quarter of the 2DBC cases and a third of the SBC/TBC ones)

#include <doctest/doctest.h>

#include <limits>
#include <random>

#include "support/helpers.hpp"
#include "support/symm.hpp"

using namespace cala;
using test::full_of;
using test::nan_value;
using test::scalar;
using test::symm_error;

namespace {

std::vector<std::pair<int, int>> grids(int n) {
    std::vector<std::pair<int, int>> out;
    for (int p = 1; p <= n; ++p)
        if (n % p == 0) out.emplace_back(p, n / p);
    return out;
}

// A random matrix whose strict `uplo`-opposite triangle is NaN (Hermitian: the diagonal has
// imaginary parts, which must be ignored).
template <class T>
void fill_triangle(const DistMatrix<T>& a, Uplo uplo) {
    test::randomize(a.view());
    const BlockCyclic& l = a.layout();
    for (index_t jl = 0; jl < a.n_loc(); ++jl)
        for (index_t il = 0; il < a.m_loc(); ++il) {
            const index_t i = l.rows.to_global(il, a.grid().row()), j = l.cols.to_global(jl, a.grid().col());
            if (uplo == Uplo::Lower ? i < j : i > j) a.local(il, jl) = nan_value<T>();
        }
}

template <class T>
void fill_nan(const DistMatrix<T>& c) {
    for (index_t j = 0; j < c.n_loc(); ++j)
        for (index_t i = 0; i < c.m_loc(); ++i) c.local(i, j) = nan_value<T>();
}

bool traffic_is(const Cost& model, const Traffic& t) {
    return t.words() == model.words && t.msgs() == model.msgs && t.words_recv == model.words_recv;
}

// The symmetric layouts on nranks; none where no pattern fits (4 ranks: the 2DBC cases only).
std::vector<SymmetricLayout> symmetric_layouts(int nranks, index_t n, index_t nb) {
    std::vector<SymmetricLayout> out;
    try {
        for (const auto& c : choose_symmetric_layout(nranks, n, nb)) out.push_back(make_symmetric_layout(c, n, nb));
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find(" ranks fit no symmetric pattern") != std::string::npos);
    }
    return out;
}

}  // namespace

TEST_CASE_TEMPLATE("symm/hemm on 2DBC match the sequential product; traffic == model", T, float, double,
                   std::complex<float>, std::complex<double>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    std::mt19937 g(2024);
    // Oversubscribed runs (more than 2 ranks) take every 4th case, a different quarter per grid.
    const int stride = world.size() <= 2 ? 1 : 4;
    int grid_index = 0;
    for (auto [p, q] : grids(world.size())) {
        const Grid2D grid(world, p, q);
        int trial = 0;
        ++grid_index;
        for (const index_t m : {0, 1, 7, 19})
            for (const index_t n : {0, 1, 6})
                for (const Side side : {Side::Left, Side::Right})
                    for (const Uplo uplo : {Uplo::Lower, Uplo::Upper}) {
                        const bool herm = is_complex_v<T> && (trial % 2 == 1);
                        const bool beta_zero = trial % 3 == 0;
                        if ((trial++ + grid_index) % stride != 0) continue;
                        const index_t nb = 1 + g() % 4;
                        const int rs = static_cast<int>(g() % p), cs = static_cast<int>(g() % q);
                        DistMatrix<T> a(grid, m, m, nb, nb, rs, cs);
                        const BlockCyclic bl = side == Side::Left ? BlockCyclic(a.layout().rows, Dist1D(n, 1 + g() % 3, q, static_cast<int>(g() % q)))
                                                                  : BlockCyclic(Dist1D(n, 1 + g() % 3, p, static_cast<int>(g() % p)), a.layout().cols);
                        DistMatrix<T> b(grid, bl), c(grid, bl);
                        fill_triangle(a, uplo);
                        test::randomize(b.view());
                        test::randomize(c.view());
                        if (beta_zero) fill_nan(c);
                        const T alpha = scalar<T>(g), beta = beta_zero ? T(0) : scalar<T>(g);
                        const auto ga = gather(a.view()), gb = gather(b.view()), gc = gather(c.view());
                        reset_traffic();

                        if (herm) hemm(side, uplo, alpha, a.view(), b.view(), beta, c.view());
                        else symm(side, uplo, alpha, a.view(), b.view(), beta, c.view());

                        const Traffic t = traffic();
                        const auto out = gather(c.view());
                        double err = 0;
                        if (world.rank() == 0) err = symm_error(side, m, n, alpha, full_of(ga, m, uplo, herm), gb, beta, gc, out);
                        const Cost model = symm_cost(side, uplo, a.layout(), b.layout(), grid.order(), world.rank(), is_complex_v<T>);
                        CAPTURE(p); CAPTURE(q); CAPTURE(m); CAPTURE(n); CAPTURE(nb); CAPTURE(int(side)); CAPTURE(int(uplo));
                        CAPTURE(herm); CAPTURE(beta_zero); CAPTURE(err); CAPTURE(t.words()); CAPTURE(model.words);
                        CHECK(test::all_ranks(err < 2.0, grid));
                        CHECK(test::all_ranks(traffic_is(model, t), grid));
                    }
    }
}

TEST_CASE_TEMPLATE("symm/hemm on SBC and TBC match the sequential product; traffic == model", T, float, double,
                   std::complex<float>, std::complex<double>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    std::mt19937 g(77);
    int trial = 0;
    for (const index_t m : {0, 1, 9, 25})
        for (const index_t nb : {1, 2, 3})
            for (const auto& sym : symmetric_layouts(world.size(), m, nb))
                for (const index_t n : {0, 1, 5})
                    for (const Side side : {Side::Left, Side::Right}) {
                        const bool herm = is_complex_v<T> && (trial % 2 == 1);
                        const bool beta_zero = trial % 3 == 0;
                        // Oversubscribed: a third of the cases (both herm values, both beta kinds).
                        if (world.size() > 2 && (trial++ / 2) % 3 != 0) continue;
                        DistMatrix<T> a2(grid, m, m, 1 + g() % 3, 1 + g() % 3);
                        fill_triangle(a2, Uplo::Lower);
                        const TileLayout pl = TileLayout::paired(sym, side, n, 1 + g() % 3);
                        DistMatrix<T> b2(grid, pl.m(), pl.n(), 2, 2), c2(grid, pl.m(), pl.n(), 3, 1);
                        test::randomize(b2.view());
                        test::randomize(c2.view());
                        if (beta_zero) fill_nan(c2);
                        TiledMatrix<T> a(grid, TileLayout::lower(sym)), b(grid, pl), c(grid, pl);
                        redistribute(a2.view(), a);
                        redistribute(b2.view(), b);
                        redistribute(c2.view(), c);
                        const T alpha = scalar<T>(g), beta = beta_zero ? T(0) : scalar<T>(g);
                        const auto ga = gather(a2.view()), gb = gather(b2.view()), gc = gather(c2.view());
                        reset_traffic();

                        if (herm) hemm(side, Uplo::Lower, alpha, a, b, beta, c);
                        else symm(side, Uplo::Lower, alpha, a, b, beta, c);

                        const Traffic t = traffic();
                        redistribute(c, c2.view());
                        const auto out = gather(c2.view());
                        double err = 0;
                        if (world.rank() == 0)
                            err = symm_error(side, m, n, alpha, full_of(ga, m, Uplo::Lower, herm), gb, beta, gc, out);
                        const Cost model = symm_cost(side, a.layout(), b.layout(), world.rank(), is_complex_v<T>);
                        CAPTURE(sym.describe()); CAPTURE(m); CAPTURE(n); CAPTURE(nb); CAPTURE(int(side));
                        CAPTURE(herm); CAPTURE(beta_zero); CAPTURE(err); CAPTURE(t.words()); CAPTURE(model.words);
                        CHECK(test::all_ranks(err < 2.0, grid));
                        CHECK(test::all_ranks(traffic_is(model, t), grid));
                    }
}

TEST_CASE("symm model: Table 5.1's volume, words received summed over ranks") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const index_t n = 6;
    for (const auto& sym : symmetric_layouts(world.size(), 4 * 25, 2)) {  // whole pattern repeats
        const TileLayout al = TileLayout::lower(sym), bl = TileLayout::paired(sym, Side::Left, n, 2);
        std::int64_t q = 0;
        for (int r = 0; r < world.size(); ++r) q += symm_cost(Side::Left, al, bl, r, false).words_recv;
        const auto s = static_cast<std::int64_t>(sym.row_set(0).size());
        CAPTURE(sym.describe());
        CHECK(q == 2 * (s - 1) * sym.n() * n);
    }
    const auto [p, qq] = Grid2D::squarest(world.size());
    const index_t m = 48;
    const BlockCyclic a(m, m, 2, 2, p, qq), b(m, n, 2, 3, p, qq);
    std::int64_t q = 0;
    for (int r = 0; r < world.size(); ++r) q += symm_cost(Side::Left, Uplo::Lower, a, b, GridOrder::RowMajor, r, false).words_recv;
    CHECK(q == 2 * (p + qq - 2) * m * n);
}

TEST_CASE("symm: bad arguments are a cala::Error on every rank, nothing moves") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    DistMatrix<double> a2(grid, 10, 10, 2, 2), b2(grid, 10, 4, 3, 2), b3(grid, 10, 4, 2, 2), a4(grid, 10, 10, 2, 3);
    reset_traffic();

    const auto e_rows = test::error_message([&] { symm(Side::Left, Uplo::Lower, 1.0, a2.view(), b2.view(), 0.0, b2.view()); });
    const auto e_sq = test::error_message([&] { symm(Side::Left, Uplo::Lower, 1.0, a4.view(), b3.view(), 0.0, b3.view()); });

    CHECK(e_rows.find("B's rows are not distributed like A's") != std::string::npos);
    CHECK(e_sq.find("A's tiles are not square") != std::string::npos);
    CHECK(traffic().words() == 0);

    for (const auto& sym : symmetric_layouts(world.size(), 10, 2)) {
        TiledMatrix<double> a(grid, TileLayout::lower(sym)), b(grid, TileLayout::paired(sym, Side::Left, 4, 2));
        TiledMatrix<double> br(grid, TileLayout::paired(sym, Side::Right, 4, 2));
        reset_traffic();

        const auto e_upper = test::error_message([&] { symm(Side::Left, Uplo::Upper, 1.0, a, b, 0.0, b); });
        const auto e_side = test::error_message([&] { symm(Side::Right, Uplo::Lower, 1.0, a, b, 0.0, b); });
        const auto e_c = test::error_message([&] { symm(Side::Left, Uplo::Lower, 1.0, a, b, 0.0, br); });

        CHECK(e_upper.find("uplo is Upper but A's layout") != std::string::npos);
        CHECK(e_upper.find("stores the lower half only") != std::string::npos);
        CHECK(e_side.find("B's layout is not TileLayout::paired") != std::string::npos);
        CHECK(e_c.find("C's layout differs from B's") != std::string::npos);
        CHECK(traffic().words() == 0);
    }
}

TEST_CASE("symm with alpha = 0 reads neither A nor B and moves nothing") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    DistMatrix<double> a(grid, 9, 9, 2, 2), b(grid, 9, 4, 2, 2), c(grid, 9, 4, 2, 2);
    fill_nan(a);
    fill_nan(b);
    test::randomize(c.view());
    const auto before = gather(c.view());
    reset_traffic();

    symm(Side::Left, Uplo::Lower, 0.0, a.view(), b.view(), 2.0, c.view());

    const std::int64_t words = traffic().words();
    const auto after = gather(c.view());
    CHECK(words == 0);
    bool ok = true;
    for (std::size_t k = 0; k < after.size(); ++k) ok = ok && after[k] == 2.0 * before[k];
    CHECK(ok);
}

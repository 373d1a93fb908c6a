// cala::potrf on SBC/TBC (lower half): L·Lᴴ vs A, info of a matrix that is not positive definite
// on every rank, traffic == model; the model beside 2DBC Cholesky's on the same ranks (printed).
// (run as: mpiexec.mpich -n N test_symm_potrf, N in {1, 2, 3, 6, 8})

#include <doctest/doctest.h>

#include <random>

#include "support/helpers.hpp"
#include "support/symm.hpp"

using namespace cala;

namespace {

std::vector<SymmetricLayout> symmetric_layouts(int nranks, index_t n, index_t nb) {
    std::vector<SymmetricLayout> out;
    for (const auto& c : choose_symmetric_layout(nranks, n, nb)) out.push_back(make_symmetric_layout(c, n, nb));
    return out;
}

}  // namespace

TEST_CASE_TEMPLATE("potrf on SBC/TBC: L·Lᴴ == A, traffic == model", T, double, std::complex<double>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    for (const index_t n : {0, 1, 9, 25})
        for (const index_t nb : {1, 2, 3})
            for (const auto& sym : symmetric_layouts(world.size(), n, nb)) {
                auto ga = test::spd<T>(n);
                MPI_Bcast(ga.data(), static_cast<int>(ga.size() * sizeof(T)), MPI_BYTE, 0, MPI_COMM_WORLD);
                DistMatrix<T> a2(grid, n, n, 2, 2);
                scatter(ga.data(), std::max<index_t>(n, 1), a2.view());
                TiledMatrix<T> a(grid, TileLayout::lower(sym));
                redistribute(a2.view(), a);
                reset_traffic();

                const index_t info = potrf(Uplo::Lower, a);

                const Traffic t = traffic();
                DistMatrix<T> l2(grid, n, n, 3, 3);
                redistribute(a, l2.view());
                const auto gl = gather(l2.view());
                const double ratio = world.rank() == 0 ? test::llh_ratio(gl, ga, n) : 0;  // rank 0 only
                const Cost model = potrf_cost(a.layout(), world.rank(), is_complex_v<T>);
                CAPTURE(sym.describe()); CAPTURE(n); CAPTURE(nb); CAPTURE(ratio); CAPTURE(t.words()); CAPTURE(model.words);
                CHECK(info == 0);
                CHECK(test::all_ranks(ratio < 4.0, grid));
                CHECK(test::all_ranks(t.words() == model.words && t.msgs() == model.msgs && t.words_recv == model.words_recv, grid));
            }
}

TEST_CASE("potrf on SBC/TBC: a matrix that is not positive definite gives info on every rank") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    const index_t n = 14;
    for (const auto& sym : symmetric_layouts(world.size(), n, 3)) {
        auto ga = test::spd<double>(n, 7);
        MPI_Bcast(ga.data(), static_cast<int>(ga.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
        DistMatrix<double> a2(grid, n, n, 2, 2);
        scatter(ga.data(), n, a2.view());
        TiledMatrix<double> a(grid, TileLayout::lower(sym));
        redistribute(a2.view(), a);

        const index_t info = potrf(Uplo::Lower, a);

        CAPTURE(sym.describe());
        CHECK(test::all_ranks(info == 8, grid));  // A(7, 7) = -1: the leading minor of order 8
        const auto e = test::error_message([&] { potrf(Uplo::Upper, a); });
        CHECK(e.find("stores the lower half only") != std::string::npos);
    }
}

TEST_CASE("potrf on SBC/TBC vs 2DBC: words received summed over ranks (model, printed)") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const index_t n = 512, nb = 8;
    const auto [p, q] = Grid2D::squarest(world.size());
    CholeskyOptions opts;
    opts.variant = CholeskyVariant::TwoD;
    std::int64_t bc = 0;
    for (int r = 0; r < world.size(); ++r)
        bc += potrf_cost(Uplo::Lower, BlockCyclic(n, n, nb, nb, p, q), GridOrder::RowMajor, opts, r, 8, false).words_recv;
    for (const auto& sym : symmetric_layouts(world.size(), n, nb)) {
        std::int64_t s = 0;
        for (int r = 0; r < world.size(); ++r) s += potrf_cost(TileLayout::lower(sym), r, false).words_recv;
        MESSAGE("potrf n=", n, " nb=", nb, " P=", world.size(), ": ", sym.describe(), " words received (sum) ", s,
                "; 2DBC ", p, "x", q, " ", bc, "; ratio ", double(s) / double(std::max<std::int64_t>(bc, 1)));
        CHECK((s > 0) == (world.size() > 1));
    }
}

// cala::geqrf and cala::ormqr(Left) on every grid of the world size (1 x P, P x 1 and the
// squarest; 2 x 3 and 3 x 2 on 6 ranks): every type; tall (the TSQR panels), square and wide
// matrices; empty, 1 x 1, sizes nb does not divide, views at and inside block boundaries,
// non-zero sources; zero and repeated columns; lookahead 0 and 1. Checked against LAPACK on
// gathered data (support/qr_case.hpp), traffic == the model exactly on every rank.
// (run as: mpiexec.mpich -n N test_qr, N in {1, 2, 3, 4, 6})

#include <doctest/doctest.h>

#include "support/qr_case.hpp"

using namespace cala;

namespace {

std::vector<Grid2D> grids_of(const Comm& world) {
    const int n = world.size();
    std::vector<Grid2D> out;
    out.emplace_back(world, 1, n);
    if (n > 1) out.emplace_back(world, n, 1);
    if (n == 4) out.emplace_back(world, 2, 2);
    if (n == 6) out.emplace_back(world, 2, 3), out.emplace_back(world, 3, 2);
    return out;
}

const test::QrCase kCases[] = {
    {0, 0, 4, 0, 0, 0, 0},      {0, 5, 4, 0, 0, 0, 0},    {6, 0, 4, 0, 0, 0, 0},   {1, 1, 4, 0, 0, 0, 0},
    {57, 9, 4, 0, 0, 0, 0},     {61, 13, 5, 1, 1, 0, 0},  {40, 40, 8, 0, 0, 0, 0}, {37, 37, 4, 1, 0, 3, 3},
    {23, 41, 6, 0, 1, 0, 0},    {9, 30, 4, 0, 0, 4, 8},   {50, 20, 4, 1, 1, 4, 4}, {3, 2, 8, 0, 0, 0, 0},
    {45, 17, 6, 0, 0, 7, 13},
};

}  // namespace

TEST_CASE_TEMPLATE("geqrf is LAPACK's factorization and ormqr applies its Q", T, float, double,
                   std::complex<float>, std::complex<double>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    for (const Grid2D& grid : grids_of(world))
        for (int la : {1, 0})
            for (const test::QrCase& c : kCases) test::run_qr_case<T>(grid, c, {.lookahead = la});
}

TEST_CASE_TEMPLATE("geqrf on zero and repeated columns", T, double, std::complex<double>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    for (const Grid2D& grid : grids_of(world)) {
        test::run_qr_case<T>(grid, {48, 12, 4, 0, 0, 0, 0, 3, 5, -1});
        test::run_qr_case<T>(grid, {48, 12, 4, 0, 0, 0, 0, 3, -1, 6});
        test::run_qr_case<T>(grid, {30, 30, 4, 0, 0, 0, 0, 3, 0, 9});
    }
}

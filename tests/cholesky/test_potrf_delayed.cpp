// cala::potrf with delayed trailing updates (CholeskyOptions::delay, lib/cholesky/delayed.cpp):
// nb in {1, 3, 32, 64, 256} (sizes nb does not divide), delay 1..4, Lower and Upper, non-zero
// source processes, on every grid of the world size (1x1; 1x2, 2x1; 1x3, 3x1; 2x2): the factor
// against A, the rest untouched, traffic == potrf_cost exactly and workspace <= it on every rank;
// the stacked groups are really used; info = k on every rank when the failure lands inside a
// group; the delay the planner picks, the same on every rank; bad delays are a cala::Error.
// (run as: mpiexec.mpich -n N test_potrf_delayed, N in {1, 2, 3, 4})

#include <doctest/doctest.h>

#include "support/potrf_case.hpp"

using namespace cala;
using test::Case;
using test::run_case;

namespace {

std::vector<Grid2D> grids_of(const Comm& world) {
    std::vector<Grid2D> out;
    const int n = world.size();
    if (n == 4) out.emplace_back(world, 2, 2);
    else out.emplace_back(world, 1, n);
    if (n == 2 || n == 3) out.emplace_back(world, n, 1);
    return out;
}

// n, mb, nb, row source, column source, submatrix offset: nb never divides n.
const Case kDelayCases[] = {
    {13, 1, 1, 0, 0, 0}, {29, 3, 3, 1, 1, 0}, {150, 32, 32, 0, 1, 0}, {300, 64, 64, 1, 0, 0}, {520, 256, 256, 0, 0, 0},
};

}  // namespace

TEST_CASE("delayed updates factor, move what the model says, and use their groups") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const std::vector<Grid2D> grids = grids_of(world);
    int count = 0;
    for (const Grid2D& grid : grids)
        for (const Case& c : kDelayCases)
            for (int d = 1; d <= 4; ++d)
                for (Uplo u : {Uplo::Lower, Uplo::Upper}) {
                    const std::int64_t extra = run_case<double>(grid, c, u, {.variant = CholeskyVariant::TwoD, .delay = d});
                    ++count;
                    // The groups of stacked panels are there: more workspace than the model of
                    // the one-step path allows (checked where a process column holds all rows).
                    if (d == 4 && c.nb == 32 && grid.p() == 1) {
                        const Cost one = potrf_cost(u, BlockCyclic(c.n, c.n, c.nb, c.nb, 1, grid.q(), 0, c.csrc % grid.q()),
                                                    grid.order(), {.variant = CholeskyVariant::TwoD, .delay = 1},
                                                    world.rank(), sizeof(double), false);
                        CHECK(test::all_ranks(extra > one.extra_bytes, grid));
                    }
                }
    // Lookahead 0, the aggregated panel, other types, a submatrix offset.
    const Grid2D& g = grids.front();
    run_case<double>(g, {150, 32, 32, 0, 0, 0}, Uplo::Lower, {.variant = CholeskyVariant::TwoD, .lookahead = 0, .delay = 3});
    run_case<double>(g, {150, 32, 32, 0, 0, 0}, Uplo::Lower,
                     {.variant = CholeskyVariant::TwoD, .panel = PanelMode::Aggregated, .delay = 2});
    run_case<std::complex<double>>(g, {70, 8, 8, 1, 0, 3}, Uplo::Lower, {.delay = 3});
    run_case<float>(g, {70, 8, 8, 0, 1, 2}, Uplo::Upper, {});
    count += 4;
    MESSAGE(count, " delayed potrf cases");
}

TEST_CASE("a failure inside a delayed group gives info = k on every rank") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const std::vector<Grid2D> grids = grids_of(world);
    int count = 0;
    for (const Grid2D& grid : grids)
        for (int d : {2, 3, 4})
            for (Uplo u : {Uplo::Lower, Uplo::Upper})
                // The first tile, the second tile of a group, a tile's middle, the last tile.
                for (index_t bad : {index_t(0), index_t(13), index_t(19), index_t(28)}) {
                    run_case<double>(grid, {29, 3, 3, 0, 0, 0}, u, {.variant = CholeskyVariant::TwoD, .delay = d}, bad,
                                     bad + 1);
                    ++count;
                }
    MESSAGE(count, " failing factorizations");
}

TEST_CASE("the planner's delay: 256 / nb up to 4, 1 for nb >= 256 and 2.5D, the same on every rank") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const std::vector<Grid2D> grids = grids_of(world);
    const Grid2D& grid = grids.front();
    auto delay = [&](index_t nb, const CholeskyOptions& o) {
        const BlockCyclic a(4096, 4096, nb, nb, grid.p(), grid.q());
        return plan_potrf(Uplo::Lower, a, grid.order(), o, sizeof(double), false).delay;
    };
    const CholeskyOptions twod{.variant = CholeskyVariant::TwoD};

    const int got[] = {delay(1, twod), delay(32, twod), delay(64, twod), delay(128, twod), delay(256, twod),
                       delay(512, twod), delay(64, {.variant = CholeskyVariant::TwoD, .delay = 3}),
                       delay(256, {.variant = CholeskyVariant::TwoD, .delay = 2}),
                       plan_potrf(4096, 8, {.variant = CholeskyVariant::Repl, .grid3d = {2, 2, 2}},
                                  MachineModel::from_env(), 64).delay};

    const int want[] = {4, 4, 4, 2, 1, 1, 3, 2, 1};
    for (std::size_t i = 0; i < std::size(want); ++i) {
        CAPTURE(i);
        CHECK(test::all_ranks(got[i] == want[i], grid));
    }
    // A memory limit that the groups do not fit: no delay (same time, less memory).
    const BlockCyclic a(4096, 4096, 64, 64, grid.p(), grid.q());
    const auto mem = [&](const CholeskyOptions& o) {
        return plan_potrf(Uplo::Lower, a, grid.order(), o, sizeof(double), false).memory_bytes;
    };
    const std::int64_t m1 = mem({.variant = CholeskyVariant::TwoD, .delay = 1}), m4 = mem(twod);
    CHECK(m1 < m4);
    const CholeskyOptions tight{.variant = CholeskyVariant::TwoD, .memory_limit_bytes = m1};
    CHECK(test::all_ranks(plan_potrf(Uplo::Lower, a, grid.order(), tight, sizeof(double), false).delay == 1, grid));
}

TEST_CASE("a bad delay is a cala::Error on every rank, A untouched") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const std::vector<Grid2D> grids = grids_of(world);
    const Grid2D& grid = grids.front();
    DistMatrix<double> a(grid, 12, 12, 4, 4);
    test::randomize(a.view());
    const auto before = gather(a.view());

    CHECK(test::error_message([&] { potrf(Uplo::Lower, a.view(), {.delay = -1}); })
              .find("potrf: delay must be >= 0, got -1") == 0);
    if (world.size() > 1) {  // one rank alone passing another delay: every rank throws
        const int d = world.rank() == world.size() - 1 ? 3 : 2;
        CHECK(test::error_message([&] { potrf(Uplo::Lower, a.view(), {.delay = d}); }).find("potrf") == 0);
    }

    CHECK(test::all_ranks(before == gather(a.view()), grid));
}

// cala::potrf on 2D grids (the user's) and 2.5D grids (Repl, ReplPart): every type, uplo L
// and U, sizes 0, 1, n < nb, sizes nb does not divide, submatrix offsets and non-zero sources;
// ‖A − L·Lᴴ‖ / (n·‖A‖·eps) < 30 on gathered data, the other triangle untouched, traffic ==
// the model exactly on every rank, workspace within the model; info = k for matrices that fail
// at the first, a middle and the last tile, the same on every rank; every panel mode on panels
// of several row blocks.
// (run as: mpiexec.mpich -n N test_potrf, N in {1, 2, 4, 6, 8})

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "support/potrf_case.hpp"

using namespace cala;

namespace {

using test::Case;
using test::run_case;

const Case kCases[] = {
    {0, 4, 4, 0, 0, 0},  {1, 4, 4, 0, 0, 0},   {3, 8, 8, 0, 0, 0},   {37, 4, 4, 0, 0, 0},
    {29, 5, 5, 1, 1, 3}, {26, 4, 6, 0, 1, 2},  {40, 8, 8, 0, 0, 0},
};

std::vector<CholeskyOptions> layouts_for(int n) {
    std::vector<CholeskyOptions> out = {
        {.variant = CholeskyVariant::TwoD},
        {.variant = CholeskyVariant::TwoD, .lookahead = 0},
        {.variant = CholeskyVariant::TwoD, .panel = PanelMode::Aggregated},
    };
    auto add3d = [&](int p, int q, int h) {
        out.push_back({.variant = CholeskyVariant::Repl, .grid3d = {p, q, h}, .block_size = 4});
        out.push_back({.variant = CholeskyVariant::ReplPart, .grid3d = {p, q, h}, .block_size = 5});
    };
    switch (n) {
        case 2: add3d(1, 1, 2); break;
        case 4: add3d(1, 2, 2); add3d(1, 1, 3); break;  // the second leaves a rank idle
        case 6: add3d(1, 2, 3); break;
        case 8: add3d(2, 2, 2); break;
        default: break;
    }
    return out;
}

}  // namespace

TEST_CASE_TEMPLATE("potrf factors and moves what the model says", T, float, double, std::complex<float>,
                   std::complex<double>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    std::vector<Grid2D> grids = {Grid2D(world)};
    if (world.size() == 2) grids.emplace_back(world, 2, 1);
    int count = 0;
    for (const Grid2D& grid : grids)
        for (const CholeskyOptions& o : layouts_for(world.size()))
            for (const Case& c : kCases)
                for (Uplo u : {Uplo::Lower, Uplo::Upper}) {
                    // Every case in double; a sample for the other types (time on 2 cores).
                    if (!std::is_same_v<T, double> && (count % 3) != 0) {
                        ++count;
                        continue;
                    }
                    run_case<T>(grid, c, u, o);
                    ++count;
                }
    MESSAGE(count, " potrf cases");
}

TEST_CASE_TEMPLATE("the panel modes on panels of several row blocks", T, double) {
    // Rows enough that the panel solve and the lookahead column split into several row blocks
    // (PanelMode::Shared hands them to helper tasks when the rank has threads).
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    const Case c{800, 48, 48, 0, 0, 0};
    for (PanelMode pm : {PanelMode::Shared, PanelMode::Single, PanelMode::Aggregated})
        for (int la : {0, 1}) run_case<T>(grid, c, Uplo::Lower, {.variant = CholeskyVariant::TwoD, .lookahead = la, .panel = pm});
    run_case<T>(grid, c, Uplo::Upper, {.variant = CholeskyVariant::TwoD});
}

TEST_CASE_TEMPLATE("1 x q on one node: node-shared panels and broadcasts alike", T, double, std::complex<float>) {
    // CholeskyOptions::node_shared_memory on a 1 x q grid, one thread a rank (this test's ranks
    // share the machine): the panels through the shared slots, reused across the calls and,
    // past four panels, within one; against the broadcasts on the same cases.
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world, 1, world.size());
    const Case cases[] = {{37, 4, 4, 0, 0, 0}, {29, 5, 5, 1, 1, 3}, {200, 16, 16, 0, 0, 0}};
    int count = 0;
    for (bool shared : {true, false})
        for (const Case& c : cases)
            for (Uplo u : {Uplo::Lower, Uplo::Upper})
                for (int la : {0, 1})
                    for (int delay : {1, 2}) {
                        run_case<T>(grid, c, u,
                                    {.variant = CholeskyVariant::TwoD, .lookahead = la, .delay = delay,
                                     .node_shared_memory = shared});
                        ++count;
                    }
    // A failing pivot: the same info, nothing left waiting on a slot.
    run_case<T>(grid, Case{37, 4, 4, 0, 0, 2}, Uplo::Lower, {.variant = CholeskyVariant::TwoD}, 17, 18);
    ++count;
    MESSAGE(count, " cases");
}

TEST_CASE("a matrix that is not positive definite gives info = k on every rank") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    const Case c{37, 4, 4, 0, 0, 2};
    int count = 0;
    for (const CholeskyOptions& o : layouts_for(world.size()))
        for (Uplo u : {Uplo::Lower, Uplo::Upper})
            for (index_t bad : {index_t(0), index_t(17), index_t(36)}) {  // first, a middle, the last tile
                run_case<double>(grid, c, u, o, bad, bad + 1);
                ++count;
            }
    // A failure inside a tile's first column and at a tile boundary.
    run_case<std::complex<double>>(grid, c, Uplo::Lower, {}, 8, 9);
    run_case<float>(grid, Case{24, 8, 8, 0, 0, 0}, Uplo::Upper, {}, 15, 16);
    count += 2;
    MESSAGE(count, " failing factorizations");
}

TEST_CASE("bad arguments are a cala::Error on every rank, A untouched") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    DistMatrix<double> a(grid, 12, 12, 4, 4), r(grid, 12, 10, 4, 4);
    test::randomize(a.view());
    const auto before = gather(a.view());
    auto msg = [&](auto&& f) { return test::error_message(f); };

    CHECK(msg([&] { potrf(Uplo::Lower, r.view()); }).find("potrf: A must be square, got 12 x 10") == 0);
    CHECK(msg([&] { potrf(Uplo::Lower, a.view(), {.lookahead = -1}); }).find("potrf: lookahead must be >= 0") == 0);
    CHECK(msg([&] { potrf(Uplo::Lower, a.view(), {.variant = CholeskyVariant::Repl, .grid3d = {1, 1, 0}}); })
              .find("potrf: grid3d must give p, q and h together") == 0);
    CHECK(msg([&] { potrf(Uplo::Lower, a.view(), {.variant = CholeskyVariant::Repl, .grid3d = {2, 2, 64}}); })
              .find("potrf: grid3d 2x2x64 needs 256 ranks") == 0);
    CHECK(msg([&] { potrf(Uplo::Lower, a.view(), {.variant = CholeskyVariant::TwoD, .grid3d = {1, 1, 2}}); })
              .find("potrf: grid3d is for the 2.5D variants") == 0);
    CHECK(msg([&] { potrf(Uplo::Lower, a.view(), {.memory_limit_bytes = 8}); })
              .find("potrf: no plan fits the memory limit") == 0);
    // One rank alone passing different options: every rank throws.
    const int la = world.rank() == world.size() - 1 ? 0 : 1;
    if (world.size() > 1)
        CHECK(msg([&] { potrf(Uplo::Lower, a.view(), {.lookahead = la}); }).find("potrf") != std::string::npos);
    const auto after = gather(a.view());
    CHECK(test::all_ranks(before == after, grid));
    // The grid still works.
    CHECK(test::all_ranks(potrf(Uplo::Lower, DistMatrix<double>(grid, 0, 0, 4, 4).view()) == 0, grid));
}

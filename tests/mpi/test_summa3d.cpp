// cala::gemm on p x q x c grids (2.5D/3D SUMMA), operands and result in the user's 2D layout:
// every 3D variant x op pair x type, c in {2, 3}, sizes that neither the block size nor c
// divides; result vs the sequential reference, traffic and workspace == the model (conversion
// from and to the user's layout, replication and fiber reductions included).
// (run as: mpiexec.mpich -n N test_summa3d, N in {2, 4, 8, 12}; 8 and 12 oversubscribed)

#include <doctest/doctest.h>

#include "gemm/plan3d.hpp"
#include "model/costs.hpp"
#include "support/gemm_case.hpp"

using namespace cala;
using cala::test::Shape;

namespace {

// m, n, k, block sizes of A, B, C as stored, non-zero sources, offset, every op pair.
const Shape kShapes3d[] = {
    {29, 23, 31, 5, 7, 7, 3, 5, 3, true, 0, true},   // nothing divides anything
    {13, 17, 11, 4, 4, 4, 4, 4, 4, false, 2, true},  // submatrices starting inside a block
    {1, 7, 3, 2, 2, 2, 2, 2, 2, false, 0, false},    // one row
};

std::vector<Shape3D> grids3d(int n) {
    switch (n) {
        case 2: return {{1, 1, 2}};
        case 4: return {{1, 2, 2}, {1, 1, 3}};        // the second leaves a rank idle
        case 8: return {{2, 2, 2}};
        case 12: return {{2, 2, 3}};
        default: return {{1, 1, n}};
    }
}

}  // namespace

TEST_CASE_TEMPLATE("3D gemm matches the reference and the model", T, float, double, std::complex<float>,
                   std::complex<double>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    const Op ops[] = {Op::N, Op::T, Op::C};
    int count = 0;
    for (const Shape3D g : grids3d(world.size()))
        for (const Shape& s : kShapes3d)
            for (Variant v : {Variant::StationaryC, Variant::StationaryA, Variant::StationaryB})
                for (Op oa : ops)
                    for (Op ob : ops) {
                        // Every op pair in double; a sample for the other types (time on 2 cores).
                        const bool sample = (oa == Op::N && ob == Op::N) || (oa == Op::T && ob == Op::C);
                        if (!(s.all_ops && std::is_same_v<T, double>) && !sample) continue;
                        const GemmOptions opts{.variant = v, .lookahead = count % 2, .panel_width = 4,
                                               .grid3d = g, .block_size = 3 + count % 2};
                        test::run_case<T>(grid, s, oa, ob, count % 3 == 0, opts);
                        ++count;
                    }
    MESSAGE(count, " 3D gemm cases");
}

TEST_CASE("the planner's choice runs and matches the model, with and without a memory limit") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    const Shape square{40, 40, 40, 4, 4, 4, 4, 4, 4, false, 0, true};

    test::run_case<double>(grid, square, Op::N, Op::N, false, {});
    test::run_case<double>(grid, square, Op::N, Op::T, true, {.memory_limit_bytes = 64 * 1024});
}

TEST_CASE("a memory limit no plan fits fails on every rank, naming both sizes") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    DistMatrix<double> a(grid, 64, 64, 8, 8), b(grid, 64, 64, 8, 8), c(grid, 64, 64, 8, 8);

    const std::string msg =
        test::error_message([&] { gemm(Op::N, Op::N, 1.0, a.view(), b.view(), 0.0, c.view(), {.memory_limit_bytes = 16}); });

    CHECK(msg.find("gemm: no plan fits the memory limit of") == 0);
    CHECK(msg.find("the cheapest plan needs") != std::string::npos);
}

TEST_CASE("Gemm3D keeps A and B in place: multiply moves only what the model says") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    const index_t m = 23, n = 19, k = 29;
    DistMatrix<double> a(grid, m, k, 4, 4), b(grid, k, n, 4, 4), c(grid, m, n, 4, 4);
    test::randomize(a.view());
    test::randomize(b.view());
    const GemmOptions opts{.grid3d = grids3d(world.size()).front(), .block_size = 3};
    Gemm3D<double> g3(Op::N, Op::N, a.view(), b.view(), c.view(), opts);
    const GemmPlanInfo& info = g3.plan();
    const auto plan = detail::plan_gemm_3d(Op::N, Op::N, m, n, k, info.variant, {info.grid.p, info.grid.q, info.grid.c},
                                           info.block_size, opts);
    const Cost model = detail::gemm3d_cost(plan, a.layout(), b.layout(), c.layout(), grid.order(), world.rank(),
                                           sizeof(double), false, true);

    for (int round = 0; round < 2; ++round) {
        if (round == 1) {  // new B values: only B moves again
            test::randomize(b.view());
            g3.set_b(b.view());
        }
        test::randomize(c.view());
        const auto ga = gather(a.view()), gb = gather(b.view()), gc = gather(c.view());
        const std::int64_t mem0 = memory_stats().current_bytes;
        reset_peak_memory();
        reset_traffic();

        g3.multiply(2.0, -1.0, c.view());

        const Traffic t = traffic();
        const std::int64_t extra = memory_stats().peak_bytes - mem0;
        const auto result = gather(c.view());
        double err = 0;
        if (world.rank() == 0)
            err = test::gemm_error(result, test::reference_gemm(Op::N, Op::N, m, n, k, 2.0, ga, m, gb, k, -1.0, gc), k);
        CAPTURE(round);
        CHECK(test::all_ranks(err < 2.0, grid));
        CHECK(test::all_ranks(t.words() == model.words && t.words_recv == model.words_recv, grid));
        CHECK(test::all_ranks(t.msgs() == model.msgs, grid));
        CHECK(test::all_ranks(extra == model.extra_bytes, grid));
    }
}

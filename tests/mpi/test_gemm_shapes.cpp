// cala::gemm at the caller's block size and matrix shape (issue 17): the shapes of the issue
// scaled down, nb in {1, 3, 32, 64, 256}, every transpose pair, both orientations of the grid
// (1x2, 2x1; 2x2, 1x4 on 4 ranks);
// each result against the sequential reference, each rank's traffic and workspace equal to the
// model of the plan the planner chose (redistributions included), and the choice the same on
// every rank. Run once on the default machine constants and once on a slow network, so that
// the planner also chooses layouts other than the caller's (checked: the test fails if none
// is chosen).
// (run as: mpiexec.mpich -n N test_gemm_shapes, N in {2, 4})

#include <doctest/doctest.h>

#include <cstdlib>
#include <functional>
#include <set>

#include "support/gemm_case.hpp"

using namespace cala;
using cala::test::Shape;

namespace {

struct Mnk {
    index_t m, n, k;
};

// 2048^3, 6512 x 6512 x 512, 65536 x 512 x 512, 1024 x 1024 x 65536, 512 x 65536 x 512, at
// about their ratios.
const Mnk kShapes[] = {{40, 40, 40}, {102, 102, 8}, {768, 6, 6}, {8, 8, 512}, {6, 768, 6}};
const index_t kBlocks[] = {1, 3, 32, 64, 256};

std::vector<std::pair<int, int>> grids(int n) {
    if (n == 2) return {{1, 2}, {2, 1}};
    return {{2, 2}, {1, 4}};
}

// The same on every rank: the chosen plan's line and every candidate's (hashes compared by an
// allreduce of min and max).
bool same_everywhere(const std::string& s, const Grid2D& g) {
    const auto h = static_cast<long long>(std::hash<std::string>{}(s) >> 1);
    long long lo = h, hi = h;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_LONG_LONG, MPI_MIN, g.comm().get());
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_LONG_LONG, MPI_MAX, g.comm().get());
    return lo == hi;
}

struct Network {
    const char* name;
    const char* latency_us;
    const char* bandwidth_gbs;
};

// The default constants, and a network slow enough that messages and words dominate.
const Network kNetworks[] = {{"default", nullptr, nullptr}, {"slow", "2000", "0.001"}};

void set_network(const Network& net) {
    if (net.latency_us) {
        setenv("CALA_MODEL_LATENCY_US", net.latency_us, 1);
        setenv("CALA_MODEL_BANDWIDTH_GBS", net.bandwidth_gbs, 1);
    } else {
        unsetenv("CALA_MODEL_LATENCY_US");
        unsetenv("CALA_MODEL_BANDWIDTH_GBS");
    }
}

// The plan the caller's operands get: N or T/C stored shapes, nb x nb blocks, source (0, 0).
GemmPlanReport report_for(const Grid2D& grid, const Mnk& s, index_t nb, Op oa, Op ob) {
    const int p = grid.p(), q = grid.q();
    const BlockCyclic a(oa == Op::N ? s.m : s.k, oa == Op::N ? s.k : s.m, nb, nb, p, q);
    const BlockCyclic b(ob == Op::N ? s.k : s.n, ob == Op::N ? s.n : s.k, nb, nb, p, q);
    const BlockCyclic c(s.m, s.n, nb, nb, p, q);
    return explain_gemm_plan(oa, ob, a, b, c, grid.order(), {}, sizeof(double), false);
}

bool sampled(Op oa, Op ob) {
    return (oa == Op::N && ob == Op::N) || (oa == Op::T && ob == Op::C) || (oa == Op::C && ob == Op::N) ||
           (oa == Op::N && ob == Op::T);
}

std::string chosen_kind(const GemmPlanReport& r) {
    for (const auto& x : r.candidates)
        if (x.info.user_grid == r.chosen.user_grid && x.info.variant == r.chosen.variant &&
            x.info.grid.p == r.chosen.grid.p && x.info.grid.q == r.chosen.grid.q && x.info.grid.c == r.chosen.grid.c &&
            x.info.block_size == r.chosen.block_size)
            return x.kind;
    return "not among the candidates";
}

}  // namespace

TEST_CASE_TEMPLATE("the issue's shapes at every nb: reference, model, one choice on every rank", T, double,
                   std::complex<double>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Op ops[] = {Op::N, Op::T, Op::C};
    std::set<std::string> kinds;
    int count = 0, regridded = 0;
    for (const Network& net : kNetworks) {
        set_network(net);
        for (auto [p, q] : grids(world.size())) {
            const Grid2D grid(world, p, q);
            for (const Mnk& s : kShapes)
                for (index_t nb : kBlocks)
                    for (Op oa : ops)
                        for (Op ob : ops) {
                            // Real types: C is T, so one pair with C each; complex: all nine on 2
                            // ranks, four on 4 and no nb = 32 (oversubscribed on CI's 2 cores).
                            if (!is_complex_v<T> && (oa == Op::C || ob == Op::C) && !(oa == Op::T && ob == Op::C))
                                continue;
                            if (world.size() > 2 && (!sampled(oa, ob) || nb == 32)) continue;
                            const GemmPlanReport rep = report_for(grid, s, nb, oa, ob);
                            std::string all = rep.chosen.describe();
                            for (const auto& l : rep.lines()) all += l;
                            double fastest = 1e300;
                            for (const auto& x : rep.candidates)
                                if (x.fits) fastest = std::min(fastest, x.info.predicted_time_s);
                            CAPTURE(net.name); CAPTURE(p); CAPTURE(q); CAPTURE(s.m); CAPTURE(s.n); CAPTURE(s.k);
                            CAPTURE(nb); CAPTURE(rep.chosen.describe());
                            CHECK(same_everywhere(all, grid));
                            CHECK(rep.chosen.predicted_time_s == fastest);
                            if (oa == Op::N && ob == Op::N)
                                CHECK(rep.chosen.describe() ==
                                      plan_gemm(oa, ob, BlockCyclic(s.m, s.k, nb, nb, p, q),
                                                BlockCyclic(s.k, s.n, nb, nb, p, q),
                                                BlockCyclic(s.m, s.n, nb, nb, p, q), grid.order(), {}, sizeof(double),
                                                false)
                                          .describe());
                            kinds.insert(chosen_kind(rep));
                            regridded += !rep.chosen.user_grid;

                            const Shape sh{s.m, s.n, s.k, nb, nb, nb, nb, nb, nb, false, 0, false};
                            // Every other case gathers on 1D grids whatever the shape (the
                            // node-shared gather's default wants 1024 local rows or columns).
                            const GemmOptions o{.node_shared_min_reuse = count % 2 == 0 ? index_t{0} : index_t{1024}};
                            test::run_case<T>(grid, sh, oa, ob, (count % 4) == 0, o);
                            ++count;
                        }
        }
    }
    set_network({"default", nullptr, nullptr});

    CAPTURE(count);
    CAPTURE(regridded);
    CHECK(count > 0);
    CHECK(regridded > 0);                       // some call ran in a layout other than the caller's
    CHECK(kinds.count("caller's layout") == 1);  // and some in the caller's
    CHECK(kinds.count("not among the candidates") == 0);
    MESSAGE("layouts chosen: ", kinds.size(), ", calls not in the caller's layout: ", regridded, " of ", count);
}

TEST_CASE("the candidates cover the caller's layout, a bigger block, both 1D layouts and layers") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const auto [p, q] = Grid2D::squarest(world.size());
    const Grid2D grid(world, p, q);
    set_network({"default", nullptr, nullptr});

    const GemmPlanReport rep = report_for(grid, {1024, 1024, 65536}, 64, Op::N, Op::N);

    std::set<std::string> kinds;
    for (const auto& x : rep.candidates) kinds.insert(x.kind);
    CAPTURE(rep.chosen.describe());
    CHECK(kinds.count("caller's layout") == 1);
    CHECK(kinds.count("caller's grid, nb=256") == 1);
    CHECK(kinds.count("1D rows") == 1);
    CHECK(kinds.count("1D over layers") == 1);
    CHECK(rep.reason.find("chosen:") == 0);
    for (const auto& x : rep.candidates)  // the choice is the fastest that fits
        CHECK((!x.fits || x.info.predicted_time_s >= rep.chosen.predicted_time_s));
    CHECK(rep.lines().size() >= 4);
}

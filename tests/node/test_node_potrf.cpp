// cala::potrf with each step's trailing update on the node (issue 19, item 4): device lists
// naming the cpu unit and emulated devices ("cpu,host", "cpu,host,host"), 2D grids and a 2.5D
// grid, Lower and Upper, sizes the tile does not divide, with and without lookahead. The factor
// against A on gathered data (‖A − L·Lᴴ‖ / (n·‖A‖·eps) < 30), everything outside the factored
// triangle bitwise untouched, MPI traffic == the model exactly on every rank (the node's tile
// moves stay inside the rank), the workspace peak (the stacked panel, the emulated devices' tiles)
// within potrf_cost's extra_bytes on every rank, and over the cases: tasks on more than one unit
// of every rank, and a peak past the model without devices (so the node's memory is needed).
// A device list or speeds that differ between ranks, bad speeds, a bad unit or strategy, a
// negative memory cap: a cala::Error on every rank, A untouched.
// (run as: mpiexec.mpich -n N test_node_potrf, N in {1, 2, 4})

#include <doctest/doctest.h>

#include <string>

#include "cala/node.hpp"
#include "../support/cholesky.hpp"

using namespace cala;

namespace {

struct Case {
    index_t n, nb;
    int src;      // source process row and column
    index_t off;  // submatrix offset (both dimensions)
};

const Case kCases[] = {{37, 4, 0, 0}, {29, 5, 1, 3}, {50, 6, 0, 0}};

// Cases whose workspace peak passed the model without devices: the node's memory is real.
int g_node_memory_needed = 0;

// Units of this rank that ran at least one task since the last reset, and the tasks in all.
std::pair<int, std::int64_t> units_busy() {
    int units = 0;
    std::int64_t tasks = 0;
    for (const auto& u : node::unit_totals()) units += u.tasks > 0, tasks += u.tasks;
    return {units, tasks};
}

template <class T>
void run_case(const Grid2D& grid, const Case& c, Uplo uplo, const CholeskyOptions& opts) {
    const index_t pn = c.n + c.off;
    DistMatrix<T> parent(grid, pn, pn, c.nb, c.nb, c.src % grid.p(), c.src % grid.q());
    test::randomize(parent.view());
    std::vector<T> spd = gather(parent.view());
    if (grid.comm().rank() == 0) spd = test::make_spd(std::move(spd), pn, c.off, c.n, -1);
    scatter(spd.data(), pn, parent.view());
    const MatrixRef<T> a = parent.sub(c.off, c.off, c.n, c.n);
    const Cost model = potrf_cost(uplo, a.layout(), grid.order(), opts, grid.comm().rank(), sizeof(T), is_complex_v<T>);
    CholeskyOptions host_only = opts;
    host_only.devices = "", host_only.unit_speeds = {}, host_only.node_strategy = "";
    host_only.delay = 1;  // as the plan with devices: the node's term, not delayed groups, is compared
    const Cost without = potrf_cost(uplo, a.layout(), grid.order(), host_only, grid.comm().rank(), sizeof(T), is_complex_v<T>);
    const std::int64_t mem0 = memory_stats().current_bytes;
    reset_peak_memory();
    reset_traffic();

    const index_t info = potrf(uplo, a, opts);

    const Traffic t = traffic();
    const std::int64_t extra = memory_stats().peak_bytes - mem0;
    g_node_memory_needed += extra > without.extra_bytes;
    const std::vector<T> f = gather(parent.view());
    double err = 0;
    bool untouched = true;
    if (grid.comm().rank() == 0) {
        err = test::factor_error(spd, f, pn, c.off, c.n, uplo);
        untouched = test::rest_untouched(spd, f, pn, c.off, c.n, uplo);
    }
    CAPTURE(c.n);
    CAPTURE(c.nb);
    CAPTURE(c.off);
    CAPTURE(uplo_char(uplo));
    const std::string variant = to_string(opts.variant);
    CAPTURE(variant);
    CAPTURE(opts.lookahead);
    CAPTURE(opts.devices);
    CAPTURE(opts.node_strategy);
    CAPTURE(err);
    CHECK(test::all_ranks(info == 0, grid));
    CHECK(test::all_ranks(err < 30.0, grid));
    CHECK(test::all_ranks(untouched, grid));
    CHECK(test::all_ranks(t.words() == model.words && t.words_recv == model.words_recv, grid));
    CHECK(test::all_ranks(t.msgs() == model.msgs, grid));
    CAPTURE(extra);
    CAPTURE(model.extra_bytes);
    CHECK(test::all_ranks(extra <= model.extra_bytes, grid));  // the workspace peak within the model
}

// Each case's units: the cpu unit and one or two emulated devices, each holding a few tiles of
// the node's tile (so a device's memory is smaller than its share of an update).
template <class T>
CholeskyOptions with_units(CholeskyOptions o, const char* devices, std::vector<double> speeds, const char* strategy) {
    o.devices = devices;
    o.unit_speeds = std::move(speeds);
    o.node_strategy = strategy;
    o.max_device_bytes = static_cast<std::int64_t>(8 * 3 * 3 * sizeof(T));
    return o;
}

template <class T>
void run_all(const Comm& world, bool sample) {
    std::vector<Grid2D> grids = {Grid2D(world)};
    if (world.size() == 2) grids.emplace_back(world, 2, 1);
    std::vector<CholeskyOptions> base = {{.variant = CholeskyVariant::TwoD},
                                         {.variant = CholeskyVariant::TwoD, .lookahead = 0}};
    if (world.size() == 4)  // 2x2 with lookahead, and 2.5D (lookahead 0 runs on 1 and 2 ranks)
        base = {{.variant = CholeskyVariant::TwoD},
                {.variant = CholeskyVariant::Repl, .grid3d = {1, 2, 2}, .block_size = 4}};
    const std::pair<const char*, std::vector<double>> lists[] = {{"cpu,host", {1, 4}}, {"cpu,host,host", {1, 2, 4}}};
    int count = 0;
    node::reset_unit_totals();
    for (const Grid2D& grid : grids)
        for (const CholeskyOptions& b : base)
            for (const Case& c : kCases)
                for (Uplo u : {Uplo::Lower, Uplo::Upper})
                    for (const auto& [devices, speeds] : lists)
                        for (const char* strategy : {"nrrp-precise-static", "nrrp-rounded-effective", "dmda"}) {
                            if (sample && (count++ % 5) != 0) continue;
                            run_case<T>(grid, c, u, with_units<T>(b, devices, speeds, strategy));
                        }
    // Over all cases every rank ran node tasks, on more than one unit (a small case may leave a
    // rank no rectangle of two columns; Static keeps each unit's share on it).
    const auto [units, tasks] = units_busy();
    CAPTURE(units);
    CAPTURE(tasks);
    CHECK(test::all_ranks(tasks > 0 && units >= 2, grids.front()));
    CAPTURE(g_node_memory_needed);
    CHECK(test::all_ranks(g_node_memory_needed > 0, grids.front()));
    g_node_memory_needed = 0;
}

}  // namespace

TEST_CASE_TEMPLATE("potrf with the trailing updates on the node: factor, triangle, traffic, units", T, double,
                   std::complex<double>) {
    run_all<T>(Comm::borrow(MPI_COMM_WORLD), false);
}

TEST_CASE_TEMPLATE("the same, a sample in single precision", T, float, std::complex<float>) {
    run_all<T>(Comm::borrow(MPI_COMM_WORLD), true);
}

TEST_CASE("bad units are a cala::Error on every rank, A untouched") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    DistMatrix<double> a(grid, 20, 20, 4, 4);
    test::randomize(a.view());
    const auto before = gather(a.view());
    auto run = [&](const CholeskyOptions& o) { return test::error_message([&] { potrf(Uplo::Lower, a.view(), o); }); };
    const bool last = world.rank() == world.size() - 1;
    CholeskyOptions differ{.devices = last ? "cpu,host,host" : "cpu,host"};
    CholeskyOptions speeds_differ{.devices = "cpu,host"};
    speeds_differ.unit_speeds = {1, last ? 8.0 : 4.0};
    CholeskyOptions zero{.devices = "cpu,host"};
    zero.unit_speeds = {1, 0};
    CholeskyOptions nan{.devices = "cpu,host"};
    nan.unit_speeds = {1, std::nan("")};
    CholeskyOptions too_many{.devices = "cpu,host"};
    too_many.unit_speeds = {1, 2, 3};
    CholeskyOptions bad_unit{.devices = "cpu,gpu"};
    CholeskyOptions bad_strategy{.devices = "cpu,host"};
    bad_strategy.node_strategy = "fastest";
    CholeskyOptions bad_bytes{.devices = "cpu,host"};
    bad_bytes.max_device_bytes = -1;

    const bool many = world.size() > 1;  // (alone, a rank's list agrees with itself: A would be factored)
    const std::string e1 = many ? run(differ) : "", e2 = many ? run(speeds_differ) : "";
    const std::string e3 = run(zero), e4 = run(nan), e5 = run(too_many), e6 = run(bad_unit), e7 = run(bad_strategy),
                      e8 = run(bad_bytes);

    CHECK(test::all_ranks(!many || e1.find("different arguments") != std::string::npos, grid));
    CHECK(test::all_ranks(!many || e2.find("different arguments") != std::string::npos, grid));
    CHECK(test::all_ranks(e3.find("potrf") == 0 && e3.find("speeds[1]") != std::string::npos, grid));
    CHECK(test::all_ranks(e4.find("speeds[1]") != std::string::npos, grid));
    CHECK(test::all_ranks(e5.find("more speeds than units") != std::string::npos, grid));
    CHECK(test::all_ranks(e6.find("'gpu'") != std::string::npos, grid));
    CHECK(test::all_ranks(e7.find("potrf") == 0 && e7.find("fastest") != std::string::npos, grid));
    CHECK(test::all_ranks(e8.find("potrf: max_device_bytes must be >= 0") == 0, grid));
    const auto after = gather(a.view());
    CHECK(test::all_ranks(before == after, grid));
    // The grid still works, and the model of potrf takes the same checks.
    CholeskyOptions ok{.devices = "cpu,host"};
    ok.unit_speeds = {1, 2};
    CHECK(test::all_ranks(run(ok).empty(), grid));
    CHECK(test::error_message([&] { potrf_cost(Uplo::Lower, a.layout(), grid.order(), zero, 0, 8, false); })
              .find("speeds[1]") != std::string::npos);
}

// cala::gemm whose local updates run on the node (issue 19, item 4): a device list naming the cpu
// unit and an emulated device ("cpu,host") on 2 ranks. The result against the sequential
// reference, MPI traffic against the gemm model (the node changes no message), tiles moved by
// the device unit; a device list or speeds that differ between ranks, and bad speeds, are a
// cala::Error on every rank with C untouched.
// (run as: mpiexec.mpich -n 2 test_node_summa)

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "cala/device.hpp"
#include "cala/node.hpp"
#include "../support/helpers.hpp"

using namespace cala;

namespace {

template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return {};
}

}  // namespace

TEST_CASE_TEMPLATE("SUMMA with local updates on the node (cpu + emulated device)", T, double, std::complex<float>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    for (auto [p, q] : {std::pair{1, 2}, std::pair{2, 1}}) {
        const Grid2D grid(world, p, q);
        const index_t m = 37, n = 29, k = 41;
        for (Variant v : {Variant::StationaryC, Variant::StationaryA, Variant::StationaryB}) {
            for (const char* strategy : {"nrrp-rounded-effective", "nrrp-precise-static", "dmda"}) {
                DistMatrix<T> a(grid, m, k, 4, 4), b(grid, k, n, 4, 4), c(grid, m, n, 4, 4);
                test::randomize(a.view());
                test::randomize(b.view());
                test::randomize(c.view());
                const bool beta_zero = v == Variant::StationaryA;
                const T alpha(1.5), beta = beta_zero ? T(0) : T(-0.5);
                GemmOptions opts{.variant = v, .panel_width = 16, .devices = "cpu,host",
                                 .max_device_bytes = static_cast<std::int64_t>(5 * 8 * 8 * sizeof(T))};
                opts.unit_speeds = {1, 4};
                opts.node_strategy = strategy;
                const auto ga = gather(a.view()), gb = gather(b.view()), gc = gather(c.view());
                reset_traffic();
                reset_device_traffic();

                gemm(Op::N, Op::N, alpha, a.view(), b.view(), beta, c.view(), opts);

                const Traffic t = traffic();
                const DeviceTraffic dt = device_traffic_total();
                const auto result = gather(c.view());
                double err = 0;
                if (world.rank() == 0)
                    err = test::gemm_error(result, test::reference_gemm(Op::N, Op::N, m, n, k, alpha, ga, m, gb, k, beta, gc), k);
                const Cost model = gemm_cost(Op::N, Op::N, a.layout(), b.layout(), c.layout(), opts, grid.order(),
                                             world.rank(), sizeof(T), is_complex_v<T>);
                CAPTURE(p);
                CAPTURE(q);
                CAPTURE(to_string(v));
                CAPTURE(strategy);
                CHECK(test::all_ranks(err < 2.0, grid));
                CHECK(test::all_ranks(t.words() == model.words && t.msgs() == model.msgs, grid));
                // Static and the DMDA plan keep the device's share on the device (with stealing and
                // no emulated speeds the cpu unit, which copies nothing, may take every task).
                if (std::string(strategy) != "nrrp-rounded-effective")
                    CHECK(test::all_ranks(dt.h2d > 0 && dt.d2h > 0, grid));
            }
        }
    }
}

TEST_CASE("a device list or speeds that differ between ranks, or bad speeds: an error on every rank, C untouched") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world, 1, 2);
    DistMatrix<double> a(grid, 20, 20, 4, 4), b(grid, 20, 20, 4, 4), c(grid, 20, 20, 4, 4);
    test::randomize(a.view());
    test::randomize(b.view());
    test::randomize(c.view());
    const auto before = gather(c.view());
    auto run = [&](const GemmOptions& o) {
        return error_of([&] { gemm(Op::N, Op::N, 1.0, a.view(), b.view(), 0.0, c.view(), o); });
    };
    GemmOptions differ{.devices = world.rank() == 0 ? "cpu,host" : "cpu,host,host"};
    GemmOptions speeds_differ{.devices = "cpu,host"};
    speeds_differ.unit_speeds = {1, world.rank() == 0 ? 4.0 : 8.0};
    GemmOptions zero{.devices = "cpu,host"};
    zero.unit_speeds = {1, 0};
    GemmOptions too_many{.devices = "cpu,host"};
    too_many.unit_speeds = {1, 2, 3};
    GemmOptions bad_unit{.devices = "cpu,gpu"};
    GemmOptions bad_strategy{.devices = "cpu,host"};
    bad_strategy.node_strategy = "fastest";

    const std::string e1 = run(differ), e2 = run(speeds_differ), e3 = run(zero), e4 = run(too_many), e5 = run(bad_unit),
                      e6 = run(bad_strategy);

    CHECK(test::all_ranks(e1.find("different arguments") != std::string::npos, grid));
    CHECK(test::all_ranks(e2.find("different arguments") != std::string::npos, grid));
    CHECK(test::all_ranks(e3.find("speeds[1]") != std::string::npos, grid));
    CHECK(test::all_ranks(e4.find("more speeds than units") != std::string::npos, grid));
    CHECK(test::all_ranks(e5.find("'gpu'") != std::string::npos, grid));
    CHECK(test::all_ranks(e6.find("fastest") != std::string::npos, grid));
    const auto after = gather(c.view());
    CHECK(test::all_ranks(world.rank() != 0 || std::memcmp(before.data(), after.data(), before.size() * sizeof(double)) == 0, grid));
    // The grid still works.
    GemmOptions ok{.devices = "cpu,host"};
    ok.unit_speeds = {1, 2};
    CHECK(test::all_ranks(run(ok).empty(), grid));
}

TEST_CASE("no speeds given: calibrated, the same on every rank; a calibration that cannot run: an error on every rank") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world, 1, 2);
    const index_t m = 33, n = 26, k = 30;
    DistMatrix<double> a(grid, m, k, 4, 4), b(grid, k, n, 4, 4), c(grid, m, n, 4, 4);
    test::randomize(a.view());
    test::randomize(b.view());
    const auto ga = gather(a.view()), gb = gather(b.view()), gc = gather(c.view());
    GemmOptions opts{.variant = Variant::StationaryC, .panel_width = 16, .devices = "cpu,host",
                     .max_device_bytes = 5 * 8 * 8 * 8};
    GemmOptions tiny = opts;
    tiny.max_device_bytes = 16;  // not three 1 x 1 tiles of doubles
    node::reset_unit_totals();
    reset_traffic();

    gemm(Op::N, Op::N, 1.0, a.view(), b.view(), 0.0, c.view(), opts);

    const Traffic t = traffic();
    const auto result = gather(c.view());
    double err = 0;
    if (world.rank() == 0) err = test::gemm_error(result, test::reference_gemm(Op::N, Op::N, m, n, k, 1.0, ga, m, gb, k, 0.0, gc), k);
    const Cost model = gemm_cost(Op::N, Op::N, a.layout(), b.layout(), c.layout(), opts, grid.order(), world.rank(), 8, false);
    CHECK(test::all_ranks(err < 2.0, grid));
    CHECK(test::all_ranks(t.words() == model.words && t.msgs() == model.msgs, grid));
    const auto units = node::unit_totals();
    CAPTURE(units.size());
    const double nan = std::numeric_limits<double>::quiet_NaN();
    double lo[2] = {units.size() == 2 ? units[0].speed : nan, units.size() == 2 ? units[1].speed : nan},
           hi[2] = {lo[0], lo[1]};
    MPI_Allreduce(MPI_IN_PLACE, lo, 2, MPI_DOUBLE, MPI_MIN, world.get());
    MPI_Allreduce(MPI_IN_PLACE, hi, 2, MPI_DOUBLE, MPI_MAX, world.get());
    CAPTURE(lo[0]);
    CAPTURE(lo[1]);
    CAPTURE(hi[0]);
    CAPTURE(hi[1]);
    CHECK((lo[0] == hi[0] && lo[1] == hi[1]));  // the same speeds on every rank
    CHECK((std::min(lo[0], lo[1]) == 1.0 && std::isfinite(hi[0] + hi[1])));

    const auto before = gather(c.view());
    const std::string e = error_of([&] { gemm(Op::N, Op::N, 1.0, a.view(), b.view(), 0.0, c.view(), tiny); });
    CHECK(test::all_ranks(e.find("gemm: node::calibrate: unit 1 (host)") == 0 && e.find("max_device_bytes 16") != std::string::npos, grid));
    CHECK(test::all_ranks(gather(c.view()) == before, grid));
}

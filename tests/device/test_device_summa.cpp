// Distributed SUMMA whose local updates run on each rank's devices (GemmOptions::devices), with
// a device memory cap that forces the chunked engine out of core: the result against the
// sequential reference, MPI traffic against the gemm model, and the tiles moved host<->device
// against the sum of the chunked model over the local updates.
// (run as: mpiexec.mpich -n 2 test_device_summa)

#include <doctest/doctest.h>

#include "device/accumulate.hpp"
#include "gemm/plan.hpp"
#include "../support/helpers.hpp"

using namespace cala;

namespace {

// Tiles the local updates of stationary-C SUMMA move: one update per group of k-blocks, shape
// m_loc x n_loc x w. With more than one group, C stays on the devices (device/accumulate.hpp)
// wherever accumulate_plan fits: read once (unless beta == 0 on the first group), written back
// once; a group that does not fit writes C back first and runs as one device_gemm.
DeviceTraffic summa_c_device_model(const BlockCyclic& a, const BlockCyclic& c, const Grid2D& g, bool beta_zero,
                                   const GemmOptions& opts, std::size_t elem) {
    const index_t m_loc = c.rows.local_size(g.row()), n_loc = c.cols.local_size(g.col());
    DeviceGemmOptions dev;
    detail::gemm_devices(opts, dev);
    auto devs = device::make_devices(dev.devices, dev.max_device_bytes);
    std::vector<device::Device*> raw;
    for (auto& d : devs) raw.push_back(d.get());
    DeviceTraffic total;
    auto add = [&](const device::LocalPlan& lp, bool c_in, bool c_out) {
        for (const auto& t : device::model_traffic(lp.shape, lp.plan, c_in, c_out))
            total.h2d += t.h2d, total.d2d += t.d2d, total.d2h += t.d2h;
    };
    if (m_loc == 0 || n_loc == 0) return total;
    const auto groups = detail::panel_groups(a.cols, opts.panel_width);
    bool held = false;
    index_t tile = 0, c_tiles = 0;
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
        const index_t w = a.cols.block_start(groups[gi].second - 1) + a.cols.block_size(groups[gi].second - 1) -
                          a.cols.block_start(groups[gi].first);
        const bool reads_c = !(gi == 0 && beta_zero);
        const auto ap = groups.size() > 1 ? device::accumulate_plan(m_loc, n_loc, w, elem, dev, raw) : std::nullopt;
        if (ap && !(held && ap->plan.tile != tile)) {
            add(*ap, reads_c && !held, false);
            held = true, tile = ap->plan.tile, c_tiles = ap->shape.mt * ap->shape.nt;
        } else {
            if (held) total.d2h += c_tiles;
            held = false;
            add(device::plan_local(m_loc, n_loc, w, elem, dev, raw), reads_c, true);
        }
    }
    if (held) total.d2h += c_tiles;
    return total;
}

}  // namespace

TEST_CASE_TEMPLATE("SUMMA with local updates on two host devices, capped and not", T, double, std::complex<float>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    for (auto [p, q] : {std::pair{1, 2}, std::pair{2, 1}})
        for (Variant v : {Variant::StationaryC, Variant::StationaryA, Variant::StationaryB})
            for (bool capped : {true, false}) {
                const Grid2D grid(world, p, q);
                const index_t m = 37, n = 29, k = 41;
                DistMatrix<T> a(grid, m, k, 4, 4), b(grid, k, n, 4, 4), c(grid, m, n, 4, 4);
                test::randomize(a.view());
                test::randomize(b.view());
                test::randomize(c.view());
                const bool beta_zero = v == Variant::StationaryA;
                const T alpha(1.5), beta = beta_zero ? T(0) : T(-0.5);
                // Tiles are the local extent; a cap of a few of them forces chunks out of core (and
                // C off the devices between groups); without it, C stays on them across the groups.
                const GemmOptions opts{.variant = v, .panel_width = 16, .devices = "host,host",
                                       .max_device_bytes = capped ? static_cast<std::int64_t>(6 * 37 * 37 * sizeof(T)) : 0};
                const auto ga = gather(a.view()), gb = gather(b.view()), gc = gather(c.view());
                reset_traffic();
                reset_device_traffic();

                gemm(Op::N, Op::N, alpha, a.view(), b.view(), beta, c.view(), opts);

                const Traffic t = traffic();
                const DeviceTraffic dt = device_traffic_total();
                const auto result = gather(c.view());
                double err = 0;
                if (world.rank() == 0)
                    err = test::gemm_error(result, test::reference_gemm(Op::N, Op::N, m, n, k, alpha, ga, m, gb, k, beta, gc),
                                           k);
                const Cost model = gemm_cost(Op::N, Op::N, a.layout(), b.layout(), c.layout(), opts, grid.order(),
                                             world.rank(), sizeof(T), is_complex_v<T>);
                CAPTURE(p);
                CAPTURE(q);
                CAPTURE(to_string(v));
                CAPTURE(capped);
                CHECK(test::all_ranks(err < 2.0, grid));
                CHECK(test::all_ranks(t.words() == model.words && t.msgs() == model.msgs, grid));
                CHECK(test::all_ranks(dt.h2d > 0 && dt.d2h > 0, grid));  // the updates did run on the devices
                if (v == Variant::StationaryC) {
                    const DeviceTraffic want =
                        summa_c_device_model(a.layout(), c.layout(), grid, beta_zero, opts, sizeof(T));
                    CAPTURE(dt.h2d);
                    CAPTURE(want.h2d);
                    CHECK(test::all_ranks(dt.h2d == want.h2d && dt.d2d == want.d2d && dt.d2h == want.d2h, grid));
                    // Uncapped, the local C is one tile (the host's 256 exceed it): in once, back once.
                    if (!capped) CHECK(test::all_ranks(dt.d2h == 1, grid));
                }
            }
}

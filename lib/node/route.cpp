// device_gemm -> (a list of several kinds of unit) -> per chunk of C columns: node::gemm

#include "node/route.hpp"

#include <algorithm>
#include <complex>
#include <cstdlib>
#include <sstream>

#include "device/device.hpp"
#include "node/options.hpp"
#include "node/runtime.hpp"

namespace cala::node::detail {

namespace {
// Memory of each unit (0: cpu).
std::vector<std::int64_t> budgets(const std::vector<std::string>& items, std::int64_t cap) {
    std::vector<std::int64_t> out(items.size(), 0);
    for (std::size_t u = 0; u < items.size(); ++u) {
        if (items[u] == "cpu") continue;
        out[u] = items[u] == "host" ? (cap > 0 ? cap : std::int64_t{1} << 30)
                                    : device::make_devices(items[u], cap).front()->budget_bytes();
    }
    return out;
}

std::int64_t smallest(const std::vector<std::int64_t>& budget) {
    std::int64_t out = 0;
    for (std::int64_t b : budget)
        if (b > 0) out = out == 0 ? b : std::min(out, b);
    return out;
}

// The tile: as given, else 256, and small enough for six tiles in the smallest unit.
index_t tile_for(const std::vector<std::int64_t>& budget, index_t tile, std::size_t elem) {
    index_t t = tile > 0 ? tile : index_t{256};
    const std::int64_t min_budget = smallest(budget);
    if (tile <= 0 && min_budget > 0)
        while (t > 1 && 6 * static_cast<std::int64_t>(elem) * t * t > min_budget) --t;
    return t;
}

}  // namespace

index_t node_tile(const DeviceGemmOptions& opts, std::size_t elem) {
    return tile_for(budgets(split_list(resolve_devices(opts.devices)), opts.max_device_bytes), opts.tile, elem);
}

std::int64_t device_workspace_bound(const DeviceGemmOptions& opts, index_t m, index_t n, index_t k, std::size_t elem) {
    const std::string spec = resolve_devices(opts.devices);
    const auto items = split_list(spec);
    const std::vector<std::int64_t> budget = budgets(items, opts.max_device_bytes);
    const bool node = uses_node(spec);
    const index_t t = std::max<index_t>(1, std::min(tile_for(budget, opts.tile, elem), std::max({m, n, k})));
    const std::int64_t tile_bytes = static_cast<std::int64_t>(elem) * t * t;
    const index_t mt = ceil_div(m, t), nt = ceil_div(n, t), kt = ceil_div(k, t);
    const std::int64_t all = (mt * kt + kt * nt + mt * nt) * tile_bytes;
    std::int64_t out = 0;
    for (std::size_t u = 0; u < items.size(); ++u)
        if (items[u] == "host") out += node ? std::min(budget[u] / tile_bytes * tile_bytes, all) : budget[u];
    return out;
}

template <class T>
void device_gemm_on_node(Op op_a, Op op_b, index_t m, index_t n, index_t k, T alpha, const T* a, index_t lda,
                         const T* b, index_t ldb, T beta, T* c, index_t ldc, const DeviceGemmOptions& opts,
                         DeviceGemmReport& rep) {
    const std::string spec = unit_list(opts.devices);
    NodeOptions no;
    no.units = spec;
    no.speeds = check_units(spec, opts.speeds, "device_gemm");
    const bool given = speeds_given(opts.speeds);
    std::string strategy = opts.strategy;
    if (strategy.empty()) {
        const char* env = std::getenv("CALA_NODE_STRATEGY");
        strategy = env && *env ? env : "nrrp-rounded-effective";
    }
    no.strategy = parse_strategy(strategy);
    const auto items = split_list(spec);
    const std::vector<std::int64_t> budget = budgets(items, opts.max_device_bytes);
    const std::int64_t min_budget = smallest(budget);
    index_t t = tile_for(budget, opts.tile, sizeof(T));
    if (!given && items.size() > 1) {  // at the nominal tile: one calibration for calls of any size
        NodeOptions co;
        co.units = spec, co.tile = t, co.max_device_bytes = opts.max_device_bytes;
        while (min_budget > 0 && co.tile > 1 && 3 * static_cast<std::int64_t>(sizeof(double)) * co.tile * co.tile > min_budget)
            --co.tile;
        no.speeds = calibrate(co);
    }
    t = std::max<index_t>(1, std::min(t, std::max({m, n, k})));
    no.tile = t;
    no.max_device_bytes = opts.max_device_bytes;
    const std::int64_t tile_bytes = static_cast<std::int64_t>(sizeof(T)) * t * t;
    std::int64_t mem_tiles = 0;
    for (std::size_t u = 0; u < items.size(); ++u) mem_tiles += budget[u] / tile_bytes;
    const index_t mt = ceil_div(m, t), nt = ceil_div(n, t);
    const index_t chunk_cols = mem_tiles == 0 ? nt : std::max<index_t>(1, mem_tiles / 2 / std::max<index_t>(1, mt));
    rep.devices.assign(items.size(), DeviceTraffic{});
    rep.tile = t, rep.b = mt, rep.c = std::min(chunk_cols, nt), rep.d = ceil_div(k, t), rep.lookahead = 2;
    rep.regime = 'n';
    for (index_t j0 = 0; j0 < nt; j0 += chunk_cols) {
        const index_t c0 = j0 * t, nc = std::min(n, (j0 + chunk_cols) * t) - c0;
        NodeReport nr;
        no.report = &nr;
        node::gemm<T>(op_a, op_b, m, nc, k, alpha, a, lda, op_b == Op::N ? b + c0 * ldb : b + c0, ldb, beta,
                      c + c0 * ldc, ldc, no);
        for (std::size_t u = 0; u < items.size() && u < nr.units.size(); ++u) {
            const UnitStats& s = nr.units[u];
            DeviceTraffic& d = rep.devices[u];
            d.h2d += s.tiles_in - s.tiles_d2d, d.d2d += s.tiles_d2d, d.d2h += s.tiles_out;
            d.peak_bytes = std::max(d.peak_bytes, s.peak_tiles * tile_bytes);
            d.budget_bytes = budget[u];
        }
    }
}

#define CALA_INST(T)                                                                                         \
    template void device_gemm_on_node<T>(Op, Op, index_t, index_t, index_t, T, const T*, index_t, const T*, \
                                         index_t, T, T*, index_t, const DeviceGemmOptions&, DeviceGemmReport&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::node::detail

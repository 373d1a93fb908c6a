// node::calibrate: each unit's speed from one tile GEMM on the unit itself, cached per process.
//
// node::calibrate -> per unit: kernels::gemm on the cpu team (host memory) | Device::gemm on
//                    three tiles in the unit's memory -> max(best of 5, emulated hold) -> 1 / s
//
//   e.g. "cpu,host,host", tile 16, emulate_tile_s 0.08, emulate_speeds {1, 4, 2}: the real GEMMs
//   take microseconds, the holds 80, 20 and 40 ms, so the speeds are {1, 4, 2}.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include "cala/node.hpp"
#include "core/check.hpp"
#include "kernels/blas.hpp"
#include "node/options.hpp"
#include "node/runtime.hpp"

namespace cala::node {

using cala::detail::cat;

namespace detail {

int cpu_team_threads(const NodeOptions& opts, int cpus, int others) {
    if (opts.cpu_threads > 0) return opts.cpu_threads;
    return std::max(1, (kernels::threads() - others) / std::max(1, cpus));  // the caller's BLAS threads (ThreadScope)
}

double emulated_speed(const NodeOptions& opts, const std::vector<double>& given, std::size_t u) {
    if (!opts.emulate_speeds.empty()) return opts.emulate_speeds[u];
    return u < given.size() ? given[u] : 1.0;
}

bool speeds_given(const std::vector<double>& speeds) {
    const char* env = std::getenv("CALA_UNIT_SPEEDS");
    return !speeds.empty() || (env != nullptr && *env != '\0');
}

}  // namespace detail

namespace {

std::mutex g_mu;
std::map<std::string, std::vector<double>> g_cache;  // key -> seconds per unit
std::atomic<std::int64_t> g_timed{0};

using Clock = std::chrono::steady_clock;

// Seconds of one t x t x t GEMM on unit `item` (best of five, after one untimed call).
double time_unit(const std::string& item, std::size_t u, index_t t, const NodeOptions& o, int cpu_threads) {
    const std::size_t n = static_cast<std::size_t>(t * t);
    std::vector<double> a(n, 0.5), b(n, 0.25), c(n, 0.0);
    const double one = 1.0;
    double best = 1e300;
    if (item == "cpu") {
        kernels::ThreadScope team(cpu_threads);
        for (int r = 0; r < 6; ++r) {
            const auto t0 = Clock::now();
            kernels::gemm<double>(Op::N, Op::N, t, t, t, 1.0, a.data(), t, b.data(), t, 1.0, c.data(), t);
            if (r > 0) best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
        }
        return best;
    }
    auto dev = std::move(device::make_devices(item, o.max_device_bytes).front());
    const std::int64_t bytes = static_cast<std::int64_t>(n * sizeof(double));
    if (dev->budget_bytes() < 3 * bytes)
        throw Error(cat("node::calibrate: unit ", u, " (", item, ") holds ", dev->budget_bytes(),
                        " bytes (max_device_bytes ", o.max_device_bytes, "), less than three ", t, " x ", t,
                        " tiles of doubles (", 3 * bytes, " bytes): lower tile"));
    void* p[3] = {dev->allocate(bytes), dev->allocate(bytes), dev->allocate(bytes)};
    const double* host[3] = {a.data(), b.data(), c.data()};
    for (int x = 0; x < 3; ++x) dev->copy_to_device({p[x], t, host[x], t, t, t, sizeof(double)});
    dev->synchronize();
    for (int r = 0; r < 6; ++r) {
        const auto t0 = Clock::now();
        dev->gemm(device::Scalar::D, Op::N, Op::N, t, t, t, &one, p[0], t, p[1], t, &one, p[2], t);
        dev->synchronize();
        if (r > 0) best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    }
    for (void* x : p) dev->release(x, bytes);
    return best;
}

std::string key_of(const std::string& spec, index_t t, const NodeOptions& o, int cpu_threads) {
    std::ostringstream k;
    k << std::hexfloat << spec << '|' << t << '|' << o.max_device_bytes << '|' << cpu_threads << '|'
      << o.emulate_tile_s;
    for (double s : o.emulate_speeds) k << ',' << s;
    return k.str();
}

}  // namespace

namespace detail {

std::vector<double> calibration_seconds(const NodeOptions& o) {
    const std::string spec = unit_list(o.units);
    const auto items = detail::split_list(spec);
    check_units(spec, std::vector<double>(items.size(), 1.0), "node::calibrate");  // the list only
    if (o.tile < 0) throw Error(cat("node::calibrate: tile is ", o.tile, ", must be >= 0"));
    if (!(o.emulate_tile_s >= 0) || !std::isfinite(o.emulate_tile_s))
        throw Error(cat("node::calibrate: emulate_tile_s is ", o.emulate_tile_s, ", must be finite and >= 0"));
    if (!o.emulate_speeds.empty()) {
        check_speeds(o.emulate_speeds, static_cast<int>(items.size()), "node::calibrate: emulate_speeds");
    }
    const index_t t = o.tile > 0 ? o.tile : index_t{256};
    const int cpus = static_cast<int>(std::count(items.begin(), items.end(), "cpu"));
    const int threads = cpu_team_threads(o, cpus, static_cast<int>(items.size()) - cpus);
    const std::string key = key_of(spec, t, o, threads);
    {
        std::lock_guard<std::mutex> lk(g_mu);
        if (auto it = g_cache.find(key); it != g_cache.end()) return it->second;
    }
    std::vector<double> secs(items.size());
    for (std::size_t u = 0; u < items.size(); ++u) {
        const double hold = o.emulate_tile_s > 0 ? o.emulate_tile_s / emulated_speed(o, {}, u) : 0.0;
        secs[u] = std::max({time_unit(items[u], u, t, o, threads), hold, 1e-9});
        g_timed.fetch_add(1);
    }
    std::lock_guard<std::mutex> lk(g_mu);
    return g_cache.emplace(key, std::move(secs)).first->second;
}

std::vector<double> speeds_of(const std::vector<double>& seconds) {
    const double slowest = *std::max_element(seconds.begin(), seconds.end());
    std::vector<double> out(seconds.size());
    for (std::size_t u = 0; u < seconds.size(); ++u) out[u] = slowest / seconds[u];
    return out;
}

}  // namespace detail

std::vector<double> calibrate(const NodeOptions& opts) {
    return detail::speeds_of(detail::calibration_seconds(opts));
}

std::int64_t calibrations() { return g_timed.load(); }

}  // namespace cala::node

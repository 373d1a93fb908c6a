// cala-bench hetero: the node runtime (issue 19) on emulated units, every strategy in the same
// run: NRRP ROUNDED / PRECISE with Static, RandSteal, EffectiveSteal, the column-block baseline,
// DMDA and today's cyclic dealing. Local (rank 0 runs it; other ranks wait).
//
// cala-bench hetero -> cala::node::gemm -> allocation | dmda plan -> runtime -> kernels::gemm
//
//   cala-bench hetero --n 8192 --tile 512 --speeds 1,4,4,8 --runs 5      (the table)
//   cala-bench hetero --n 1024 --tile 128 --speeds 1,4,4,8 --runs 3 --trace hetero.json
//
// Units: --devices (default "cpu,host,host,...": the cpu unit reads host memory, every other unit
// is a HostDevice with its own memory) with one speed each. Emulation: a full-tile task on a unit
// of speed s holds it --tile-ms / s (real compute included; 0: calibrated, 2 x the measured tile
// GEMM x the largest speed, so the fastest unit's real compute fits), each tile moved holds the
// receiving unit's link --link-ms (default: --tile-ms / the largest speed, one task of the fastest
// unit). Strategies run interleaved, one warm-up round, then --runs rounds; each line reports
// the median time and the tiles moved and steals of its median run, and ratios to dmda and
// cyclic measured in the same rounds. ideal_s = tasks · tile-ms / Σ speeds (no transfers).
// --real: no emulation (real devices, e.g. --devices cpu,0): the speeds only steer allocation.
// --calibrate: the allocation's speeds are measured (node::calibrate, one tile GEMM per unit, the
// emulated hold honoured), not given; each line's allocation_speeds shows them.

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cala/node.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "core/trace.hpp"
#include "kernels/blas.hpp"
#include "node/options.hpp"
#include "output.hpp"

namespace cala::bench {

namespace {

struct HeteroArgs {
    index_t n = 2048, m = 0, k = 0, tile = 256;
    std::string speeds = "1,4,4,8", devices, strategies, trace, trace_strategy = "nrrp-rounded-effective";
    double tile_ms = 0, link_ms = -1, max_device_mb = 0;
    int runs = 3;
    bool real = false, calibrate = false;
};

struct Result {
    std::vector<double> seconds;
    std::vector<node::NodeReport> reps;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

// Seconds of one t x t x t GEMM on one thread (best of 3).
double tile_gemm_s(index_t t) {
    std::vector<double> a(static_cast<std::size_t>(t * t), 0.5), b(a), c(a);
    kernels::ThreadScope one(1);
    double best = 1e30;
    for (int r = 0; r < 3; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        kernels::gemm<double>(Op::N, Op::N, t, t, t, 1.0, a.data(), t, b.data(), t, 1.0, c.data(), t);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
}

void run(const HeteroArgs& args) {
    const index_t n = args.n, m = args.m > 0 ? args.m : n, k = args.k > 0 ? args.k : n, t = args.tile;
    std::vector<double> speeds;
    for (const auto& s : node::detail::split_list(args.speeds)) speeds.push_back(std::stod(s));
    std::string devices = args.devices;
    if (devices.empty()) {
        devices = "cpu";
        for (std::size_t u = 1; u < speeds.size(); ++u) devices += ",host";
    }
    node::check_speeds(speeds, static_cast<int>(node::detail::split_list(devices).size()), "cala-bench hetero");
    std::vector<node::Strategy> strategies;
    if (args.strategies.empty()) strategies = node::all_strategies();
    else
        for (const auto& s : node::detail::split_list(args.strategies)) strategies.push_back(node::parse_strategy(s));
    const double smax = *std::max_element(speeds.begin(), speeds.end());
    const double ssum = std::accumulate(speeds.begin(), speeds.end(), 0.0);
    const double tile_s = args.real ? 0.0 : args.tile_ms > 0 ? args.tile_ms * 1e-3 : 2.0 * tile_gemm_s(t) * smax;
    const double link_s = args.real ? 0.0 : args.link_ms >= 0 ? args.link_ms * 1e-3 : tile_s / smax;
    if (world_rank() != 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    std::vector<double> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n)), c0(static_cast<std::size_t>(m * n)), c(c0);
    const std::uint64_t seed = 12345;
    for (index_t j = 0; j < k; ++j)
        for (index_t i = 0; i < m; ++i) a[static_cast<std::size_t>(i + j * m)] = element<double>(seed, i, j);
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < k; ++i) b[static_cast<std::size_t>(i + j * k)] = element<double>(seed + 1, i, j);
    std::vector<double> ref(c0.size(), 0.0);
    kernels::gemm<double>(Op::N, Op::N, m, n, k, 1.0, a.data(), m, b.data(), k, 0.0, ref.data(), m);

    auto one = [&](const node::Strategy& st, node::NodeReport* rep) {
        node::NodeOptions o;
        o.units = devices, o.speeds = speeds, o.strategy = st, o.tile = t;
        if (args.calibrate) o.speeds.clear(), o.emulate_speeds = speeds;  // measured: node::calibrate
        o.emulate_tile_s = tile_s, o.emulate_link_s = link_s;
        o.max_device_bytes = static_cast<std::int64_t>(args.max_device_mb * 1048576.0);
        o.report = rep;
        const auto t0 = std::chrono::steady_clock::now();
        node::gemm<double>(Op::N, Op::N, m, n, k, 1.0, a.data(), m, b.data(), k, 0.0, c.data(), m, o);
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    std::map<std::string, Result> res;
    std::map<std::string, double> err;
    for (int round = 0; round <= args.runs; ++round)
        for (const auto& st : strategies) {
            const std::string name = node::strategy_name(st);
            progress("hetero", name + " round " + std::to_string(round) + " of " + std::to_string(args.runs));
            node::NodeReport rep;
            const double s = one(st, &rep);
            if (round == 0) {  // warm-up: checks the result
                double e = 0;
                for (std::size_t q = 0; q < c.size(); ++q) e = std::max(e, std::abs(c[q] - ref[q]));
                err[name] = e / (std::numeric_limits<double>::epsilon() * static_cast<double>(k));
                continue;
            }
            res[name].seconds.push_back(s);
            res[name].reps.push_back(std::move(rep));
        }
    auto median_rep = [&](const std::string& name) -> const node::NodeReport& {
        const Result& r = res.at(name);
        std::vector<std::size_t> idx(r.seconds.size());
        std::iota(idx.begin(), idx.end(), 0);
        std::sort(idx.begin(), idx.end(), [&](auto x, auto y) { return r.seconds[x] < r.seconds[y]; });
        return r.reps[idx[idx.size() / 2]];
    };
    const index_t mt = ceil_div(m, t), nt = ceil_div(n, t), kt = ceil_div(k, t);
    const double ideal = static_cast<double>(mt * nt * kt) * tile_s / ssum;  // 0 with --real
    for (const auto& st : strategies) {
        const std::string name = node::strategy_name(st);
        const node::NodeReport& rep = median_rep(name);
        nlohmann::ordered_json j;
        j["bench"] = "hetero";
        j["strategy"] = name;
        j["m"] = m, j["n"] = n, j["k"] = k, j["tile"] = t;
        j["devices"] = devices;
        j["speeds"] = speeds;
        j["calibrated"] = args.calibrate;
        std::vector<double> used;
        for (const auto& u : rep.units) used.push_back(u.speed);
        j["allocation_speeds"] = used;
        j["runs"] = args.runs;
        j["seconds"] = median(res[name].seconds);
        j["best_s"] = *std::min_element(res[name].seconds.begin(), res[name].seconds.end());
        j["tiles_moved"] = rep.tiles_moved;
        j["steals"] = rep.steals;
        j["ideal_s"] = ideal;
        j["efficiency"] = ideal / median(res[name].seconds);
        j["gflops"] = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / median(res[name].seconds) * 1e-9;
        for (const char* base : {"dmda", "cyclic"})
            if (res.count(base)) {
                j[std::string("time_vs_") + base] = median(res[name].seconds) / median(res[base].seconds);
                j[std::string("moved_vs_") + base] =
                    static_cast<double>(rep.tiles_moved) / std::max<double>(1.0, static_cast<double>(median_rep(base).tiles_moved));
            }
        nlohmann::ordered_json units = nlohmann::ordered_json::array();
        for (const auto& u : rep.units)
            units.push_back({{"kind", u.kind}, {"speed", u.speed}, {"tasks", u.tasks}, {"stolen", u.stolen},
                             {"tiles_in", u.tiles_in}, {"tiles_out", u.tiles_out}, {"peak_tiles", u.peak_tiles},
                             {"busy_s", u.busy_s}, {"idle_s", u.idle_s}});
        j["units"] = units;
        j["tile_ms"] = tile_s * 1e3, j["link_ms"] = link_s * 1e3;
        j["check_error"] = err[name];
        emit(j);
    }
    if (!args.trace.empty()) {
        const node::Strategy st = node::parse_strategy(args.trace_strategy);
        progress("hetero", "one traced run of " + args.trace_strategy + " to " + args.trace);
        detail::trace::start(MPI_COMM_SELF);
        one(st, nullptr);
        detail::trace::stop();
        detail::trace::write(MPI_COMM_SELF, args.trace);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace

void add_hetero_command(CLI::App& app) {
    auto a = std::make_shared<HeteroArgs>();
    CLI::App* sub = app.add_subcommand("hetero", "node runtime on emulated units: every allocation and stealing strategy, same run");
    sub->add_option("--n", a->n, "columns of C")->capture_default_str()->check(CLI::PositiveNumber);
    sub->add_option("--m", a->m, "rows of C (0: n)")->check(CLI::NonNegativeNumber);
    sub->add_option("--k", a->k, "inner dimension (0: n)")->check(CLI::NonNegativeNumber);
    sub->add_option("--tile", a->tile, "tile size")->capture_default_str()->check(CLI::PositiveNumber);
    sub->add_option("--speeds", a->speeds, "relative speed per unit")->capture_default_str();
    sub->add_option("--devices", a->devices, "unit list (default cpu,host,...: one per speed)");
    sub->add_option("--strategies", a->strategies, "comma-separated (default: all)");
    sub->add_option("--tile-ms", a->tile_ms, "emulated full-tile task time at speed 1 (0: calibrated)");
    sub->add_option("--link-ms", a->link_ms, "emulated time per tile moved (default: tile-ms / largest speed)");
    sub->add_option("--max-device-mb", a->max_device_mb, "memory per non-cpu unit in MiB (0: 1 GiB)");
    sub->add_flag("--calibrate", a->calibrate, "allocate by speeds measured by node::calibrate (the units still emulate --speeds)");
    sub->add_flag("--real", a->real, "no emulation: the units run at their own speed (real devices)");
    sub->add_option("--runs", a->runs, "timed rounds after one warm-up")->capture_default_str()->check(CLI::PositiveNumber);
    sub->add_option("--trace", a->trace, "after the timed rounds, one traced run: a Chrome/Perfetto trace, one track per unit");
    sub->add_option("--trace-strategy", a->trace_strategy, "the strategy of the traced run")->capture_default_str();
    sub->callback([a] { run(*a); });
}

}  // namespace cala::bench

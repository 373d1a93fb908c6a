// cala::node::gemm -> units (cpu | HostDevice | CUDA) and speeds -> allocation (NRRP ROUNDED /
// PRECISE, column blocks, cyclic) or the DMDA plan -> runtime (lib/node/runtime.cpp)

#include <algorithm>
#include <complex>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <omp.h>
#include <sstream>

#include "cala/node.hpp"
#include "core/check.hpp"
#include "kernels/blas.hpp"
#include "node/options.hpp"
#include "node/runtime.hpp"

namespace cala::node {

using cala::detail::cat;

namespace {
const char* placement_name(Placement p) {
    switch (p) {
        case Placement::NrrpRounded: return "nrrp-rounded";
        case Placement::NrrpPrecise: return "nrrp-precise";
        case Placement::Columns: return "columns";
        case Placement::Cyclic: return "cyclic";
        case Placement::Dmda: return "dmda";
    }
    return "?";
}
const char* steal_name(Steal s) {
    switch (s) {
        case Steal::Static: return "static";
        case Steal::Rand: return "rand";
        case Steal::Effective: return "effective";
    }
    return "?";
}
}  // namespace

std::string strategy_name(const Strategy& s) {
    if (s.placement == Placement::Dmda) return "dmda";
    if (s.placement == Placement::Cyclic && s.steal == Steal::Static) return "cyclic";
    return std::string(placement_name(s.placement)) + "-" + steal_name(s.steal);
}

Strategy parse_strategy(const std::string& name) {
    for (Placement p : {Placement::NrrpRounded, Placement::NrrpPrecise, Placement::Columns, Placement::Cyclic, Placement::Dmda})
        for (Steal s : {Steal::Static, Steal::Rand, Steal::Effective}) {
            const Strategy st{p, s};
            if (strategy_name(st) == name && (p != Placement::Dmda || s == Steal::Static)) return st;
        }
    throw Error(cat("node: strategy '", name, "' is not one of nrrp-rounded-{static,rand,effective}, "
                    "nrrp-precise-{...}, columns-{...}, cyclic, cyclic-{rand,effective}, dmda"));
}

std::vector<Strategy> all_strategies() {
    return {{Placement::NrrpRounded, Steal::Effective}, {Placement::NrrpRounded, Steal::Rand},
            {Placement::NrrpRounded, Steal::Static},    {Placement::NrrpPrecise, Steal::Effective},
            {Placement::NrrpPrecise, Steal::Rand},      {Placement::NrrpPrecise, Steal::Static},
            {Placement::Columns, Steal::Effective},     {Placement::Columns, Steal::Static},
            {Placement::Dmda, Steal::Static},           {Placement::Cyclic, Steal::Static}};
}

namespace {

std::vector<double> parse_speeds(const std::string& s) {
    std::vector<double> out;
    for (const auto& item : detail::split_list(s)) {
        char* end = nullptr;
        const double v = std::strtod(item.c_str(), &end);
        if (item.empty() || *end != '\0')
            throw Error(cat("node::gemm: CALA_UNIT_SPEEDS entry '", item, "' of '", s, "' is not a number"));
        out.push_back(v);
    }
    return out;
}

// The DMDA plan (seed 4.2.2): tasks in submission order (l, then C tiles column-major), each to
// the unit with the earliest expected finish: its transfers queue on the unit's link, it starts
// when the unit, its inputs and its C tile (the previous task on it) are ready.
std::vector<std::vector<detail::Task>> dmda_plan(std::span<const detail::Unit> units, index_t mt, index_t nt,
                                                 index_t kt, double tile_s, double link_s) {
    const int g = static_cast<int>(units.size());
    std::vector<std::vector<detail::Task>> lists(static_cast<std::size_t>(g));
    std::vector<double> avail(g, 0), link(g, 0), cready(static_cast<std::size_t>(mt * nt), 0);
    std::vector<int> cloc(static_cast<std::size_t>(mt * nt), -1);
    std::vector<std::vector<char>> has_a(g, std::vector<char>(static_cast<std::size_t>(mt * kt), 0)),
        has_b(g, std::vector<char>(static_cast<std::size_t>(kt * nt), 0));
    for (index_t l = 0; l < kt; ++l)
        for (index_t j = 0; j < nt; ++j)
            for (index_t i = 0; i < mt; ++i) {
                const auto ci = static_cast<std::size_t>(i + j * mt), ai = static_cast<std::size_t>(i + l * mt),
                           bi = static_cast<std::size_t>(l + j * kt);
                int best = -1;
                double best_finish = 0, best_link = 0;
                for (int u = 0; u < g; ++u) {
                    const bool cpu = units[u].dev == nullptr;
                    const int moves = cpu ? (cloc[ci] >= 0 ? 1 : 0) : (!has_a[u][ai]) + (!has_b[u][bi]) + (cloc[ci] != u);
                    const double in = link[u] + moves * link_s;
                    const double finish = std::max({avail[u], in, cready[ci]}) + tile_s / units[u].speed;
                    if (best < 0 || finish < best_finish) best = u, best_finish = finish, best_link = in;
                }
                avail[best] = cready[ci] = best_finish;
                link[best] = best_link;
                if (units[best].dev) has_a[best][ai] = has_b[best][bi] = 1, cloc[ci] = best;
                else cloc[ci] = -1;
                lists[best].push_back({i, j, l, best});
            }
    return lists;
}

void check_ld(const char* name, index_t ld, index_t rows) {
    if (ld < std::max<index_t>(rows, 1))
        throw Error(cat("node::gemm: ", name, " is ", ld, " but must be at least ", std::max<index_t>(rows, 1)));
}

}  // namespace

std::string detail::unit_list(const std::string& units) {
    if (!units.empty()) return units;
    const char* env = std::getenv("CALA_DEVICES");
    return env && *env ? env : "cpu";
}

namespace {
std::mutex g_totals_mu;
std::vector<UnitStats> g_totals;

void add_to_totals(const NodeReport& rep) {
    std::lock_guard<std::mutex> lk(g_totals_mu);
    if (g_totals.size() < rep.units.size()) g_totals.resize(rep.units.size());
    for (std::size_t u = 0; u < rep.units.size(); ++u) {
        const UnitStats& x = rep.units[u];
        UnitStats& t = g_totals[u];
        t.kind = x.kind, t.speed = x.speed;
        t.tasks += x.tasks, t.stolen += x.stolen, t.tiles_in += x.tiles_in, t.tiles_out += x.tiles_out;
        t.tiles_d2d += x.tiles_d2d, t.peak_tiles = std::max(t.peak_tiles, x.peak_tiles);
        t.busy_s += x.busy_s, t.idle_s += x.idle_s;
    }
}
}  // namespace

std::vector<UnitStats> unit_totals() {
    std::lock_guard<std::mutex> lk(g_totals_mu);
    return g_totals;
}

void reset_unit_totals() {
    std::lock_guard<std::mutex> lk(g_totals_mu);
    g_totals.clear();
}

std::vector<double> check_units(const std::string& units_in, std::vector<double> speeds, const char* what) {
    const std::string spec = detail::unit_list(units_in);
    const auto items = detail::split_list(spec);
    if (items.empty()) throw Error(cat(what, ": empty unit list '", spec, "'"));
    for (const auto& item : items) {
        if (item == "cpu" || item == "host") continue;
        char* end = nullptr;
        const long ord = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || ord < 0)
            throw Error(cat(what, ": unit '", item, "' of '", spec, "' is neither 'cpu', 'host' nor a CUDA ordinal"));
    }
    if (speeds.empty()) {
        const char* env = std::getenv("CALA_UNIT_SPEEDS");
        if (env && *env) speeds = parse_speeds(env);
        else speeds.assign(items.size(), 1.0);
    }
    check_speeds(speeds, static_cast<int>(items.size()), what);
    return speeds;
}

template <class T>
void gemm(Op op_a, Op op_b, index_t m, index_t n, index_t k, T alpha, const T* a, index_t lda, const T* b,
          index_t ldb, T beta, T* c, index_t ldc, const NodeOptions& opts) {
    if (m < 0 || n < 0 || k < 0) throw Error(cat("node::gemm: sizes must be non-negative, got m=", m, " n=", n, " k=", k));
    for (auto [name, op] : {std::pair{"op_a", op_a}, std::pair{"op_b", op_b}})
        if (op != Op::N && op != Op::T && op != Op::C)
            throw Error(cat("node::gemm: ", name, " is ", static_cast<int>(op), ", not an Op"));
    check_ld("lda", lda, op_a == Op::N ? m : k);
    check_ld("ldb", ldb, op_b == Op::N ? k : n);
    check_ld("ldc", ldc, m);
    if (opts.tile < 0) throw Error(cat("node::gemm: tile is ", opts.tile, ", must be >= 0"));
    if (!(opts.emulate_tile_s >= 0) || !(opts.emulate_link_s >= 0))
        throw Error(cat("node::gemm: emulate_tile_s ", opts.emulate_tile_s, " and emulate_link_s ", opts.emulate_link_s,
                        " must be >= 0"));
    if (opts.strategy.placement == Placement::Dmda && opts.strategy.steal != Steal::Static)
        throw Error("node::gemm: strategy dmda does not steal (steal must be Static)");

    const std::string spec = detail::unit_list(opts.units);
    const auto items = detail::split_list(spec);
    std::vector<double> speeds = check_units(spec, opts.speeds, "node::gemm");
    if (!opts.emulate_speeds.empty()) {
        check_speeds(opts.emulate_speeds, static_cast<int>(items.size()), "node::gemm: emulate_speeds");
    }
    const bool given = detail::speeds_given(opts.speeds);

    const index_t t = std::max<index_t>(1, std::min(opts.tile > 0 ? opts.tile : index_t{256}, std::max({m, n, k})));
    if (!given && items.size() > 1) {
        // Calibrated at this call's tile (smaller where three tiles of doubles pass the memory cap).
        NodeOptions co = opts;
        co.units = spec;
        co.tile = t;
        const std::int64_t cap = opts.max_device_bytes;
        while (cap > 0 && co.tile > 1 && 3 * static_cast<std::int64_t>(sizeof(double)) * co.tile * co.tile > cap) --co.tile;
        speeds = calibrate(co);
    }
    std::vector<std::unique_ptr<device::Device>> owned;
    std::vector<detail::Unit> units;
    for (std::size_t u = 0; u < items.size(); ++u) {
        if (items[u] == "cpu") {
            units.push_back({nullptr, speeds[u], "cpu"});
            continue;
        }
        auto devs = device::make_devices(items[u], opts.max_device_bytes);
        owned.push_back(std::move(devs.front()));
        device::Device* d = owned.back().get();
        const std::int64_t tiles = d->budget_bytes() / (static_cast<std::int64_t>(sizeof(T)) * t * t);
        if (tiles < 3)
            throw Error(cat("node::gemm: unit ", u, " (", items[u], ") holds ", tiles, " tiles of ", t, " x ", t,
                            " (", d->budget_bytes(), " bytes); one task needs 3 (A, B and C)"));
        units.push_back({d, speeds[u], d->name()});
    }
    for (std::size_t u = 0; u < units.size(); ++u)
        units[u].emulate_speed = detail::emulated_speed(opts, given ? speeds : std::vector<double>{}, u);

    NodeReport rep;
    rep.strategy = strategy_name(opts.strategy);
    rep.tile = t;
    rep.mt = ceil_div(m, t), rep.nt = ceil_div(n, t), rep.kt = ceil_div(k, t);
    rep.units.resize(units.size());
    for (std::size_t u = 0; u < units.size(); ++u) rep.units[u].kind = units[u].kind, rep.units[u].speed = units[u].speed;
    if (m > 0 && n > 0) kernels::scale(m, n, beta, c, ldc);
    if (m == 0 || n == 0 || k == 0 || alpha == T{0}) {
        if (opts.report) *opts.report = std::move(rep);
        return;
    }

    const index_t mt = rep.mt, nt = rep.nt, kt = rep.kt;
    const int g = static_cast<int>(units.size());
    std::vector<std::vector<detail::Task>> lists(static_cast<std::size_t>(g));
    if (opts.strategy.placement == Placement::Dmda) {
        const double tile_s = opts.emulate_tile_s > 0 ? opts.emulate_tile_s : 1.0;
        lists = dmda_plan(units, mt, nt, kt, tile_s, opts.emulate_tile_s > 0 ? opts.emulate_link_s : 0.0);
    } else {
        Allocation al;
        switch (opts.strategy.placement) {
            case Placement::NrrpRounded: al = nrrp_allocation(speeds, mt, nt, Discretization::Rounded); break;
            case Placement::NrrpPrecise: al = nrrp_allocation(speeds, mt, nt, Discretization::Precise); break;
            case Placement::Columns: al = column_blocks(speeds, mt, nt); break;
            default: al = cyclic_columns(g, mt, nt); break;
        }
        for (index_t l = 0; l < kt; ++l)
            for (index_t j = 0; j < nt; ++j)
                for (index_t i = 0; i < mt; ++i) lists[al.owner(i, j)].push_back({i, j, l, al.owner(i, j)});
    }
    detail::RunConfig cfg;
    cfg.steal = opts.strategy.steal;
    cfg.tile = t;
    cfg.tile_s = opts.emulate_tile_s, cfg.link_s = opts.emulate_link_s;
    cfg.seed = opts.seed;
    cfg.threads = opts.threads_per_unit;
    {
        const int cpus = static_cast<int>(std::count_if(units.begin(), units.end(), [](const auto& x) { return !x.dev; }));
        const int others = g - cpus;
        cfg.cpu_threads = detail::cpu_team_threads(opts, cpus, others);
    }
    cfg.record = opts.record_tasks;
    detail::run<T>(units, lists, cfg, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, c, ldc, rep);
    add_to_totals(rep);
    if (opts.report) *opts.report = std::move(rep);
}

#define CALA_INST(T)                                                                                         \
    template void gemm<T>(Op, Op, index_t, index_t, index_t, T, const T*, index_t, const T*, index_t, T, T*, \
                          index_t, const NodeOptions&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::node

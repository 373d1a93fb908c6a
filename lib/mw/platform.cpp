// Platform arithmetic: layouts (mu, beta), validation, strategy names, the steady-state bound,
// and the master's traffic per chunk.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>

#include "core/check.hpp"
#include "mw/plan.hpp"

namespace cala::mw {

const char* to_string(Strategy s) noexcept {
    switch (s) {
        case Strategy::Het:
            return "Het";
        case Strategy::Hom:
            return "Hom";
        case Strategy::HomI:
            return "HomI";
        case Strategy::ORROML:
            return "ORROML";
        case Strategy::OMMOML:
            return "OMMOML";
        case Strategy::ODDOML:
            return "ODDOML";
        case Strategy::BMM:
            return "BMM";
    }
    return "?";
}

Strategy strategy_from_string(const std::string& name) {
    auto lower = [](std::string x) {
        for (auto& ch : x) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        return x;
    };
    for (Strategy s : all_strategies)
        if (lower(to_string(s)) == lower(name)) return s;
    throw Error("mw: unknown strategy '" + name +
                "' (Het, Hom, HomI, ORROML, OMMOML, ODDOML, BMM)");
}

std::int64_t mu_of(std::int64_t m) noexcept {
    std::int64_t mu = static_cast<std::int64_t>(
                          std::sqrt(static_cast<double>(std::max<std::int64_t>(m, 0)) + 4.0)) -
                      2;
    while (mu > 0 && mu * mu + 4 * mu > m) --mu;
    while ((mu + 1) * (mu + 1) + 4 * (mu + 1) <= m) ++mu;
    return std::max<std::int64_t>(mu, 0);
}

std::int64_t bmm_side_of(std::int64_t m) noexcept {
    std::int64_t b = static_cast<std::int64_t>(
        std::sqrt(static_cast<double>(std::max<std::int64_t>(m, 0)) / 3.0));
    while (b > 0 && 3 * b * b > m) --b;
    while (3 * (b + 1) * (b + 1) <= m) ++b;
    return b;
}

namespace detail {

std::string validate_message(const Platform& p, const char* what, int master) {
    using cala::detail::cat;
    if (p.q <= 0) return cat(what, ": platform block size q is ", p.q, ", must be positive");
    if (p.workers.empty()) return cat(what, ": no workers (the platform has none)");
    for (std::size_t i = 0; i < p.workers.size(); ++i) {
        const Worker& x = p.workers[i];
        const int rank =
            static_cast<int>(i) < master ? static_cast<int>(i) : static_cast<int>(i) + 1;
        const auto who = cat(what, ": worker ", i, " (rank ", rank, ")");
        if (!(x.c > 0) || !std::isfinite(x.c))
            return cat(who, " has link cost c = ", x.c,
                       " s per block, must be positive and finite");
        if (!(x.w > 0) || !std::isfinite(x.w))
            return cat(who, " has compute cost w = ", x.w,
                       " s per block update, must be positive and finite");
        if (x.m < 5)
            return cat(
                who, " has memory for ", x.m, " blocks of ", p.q, "x", p.q,
                ", but one step of the maximum re-use layout needs 5 (mu^2 + 4 mu with mu = 1)");
    }
    return {};
}

void add_chunk_traffic(TrafficModel& t, const Dims& d, const Layout& l, const Chunk& c) {
    const ChunkShape sh = shape_of(c, d);
    const index_t nsteps = steps_of(l, d);
    const std::int64_t cw = sh.rows * sh.cols;
    // TASK, C blocks, then per step kb x nj blocks of B and ni x kb blocks of A.
    t.msgs_sent += 1 + c.ni * c.nj;
    t.words_sent += 6 + cw;
    t.data_words_sent += cw;
    for (index_t s = 0; s < nsteps; ++s) {
        index_t k0 = 0, len = 0;
        step_range(l, d, s, k0, len);
        const index_t kb = ceil_div(len, d.q);
        t.msgs_sent += kb * (c.ni + c.nj);
        t.words_sent += len * (sh.rows + sh.cols);
        t.data_words_sent += len * (sh.rows + sh.cols);
    }
    // READY_C, one READY_STEP per step, READY_RESULT, then the C blocks back.
    t.msgs_recv += 2 + nsteps + c.ni * c.nj;
    t.words_recv += 2 + nsteps + cw;
    t.data_words_recv += cw;
}

void add_worker_traffic(TrafficModel& t) {
    t.msgs_sent += 1;  // STOP
    t.words_sent += 6;
    t.msgs_recv += 1;  // DONE with the worker's peak memory
    t.words_recv += 1;
}

}  // namespace detail

void validate(const Platform& p, const char* what, int master) {
    if (auto e = detail::validate_message(p, what, master); !e.empty()) throw Error(e);
}

SteadyState steady_state(const Platform& p, index_t m, index_t n, index_t k) {
    validate(p, "mw::steady_state");
    const std::size_t np = p.workers.size();
    std::vector<std::size_t> order(np);
    std::iota(order.begin(), order.end(), 0);
    auto cost = [&](std::size_t i) {
        return 2 * p.workers[i].c / static_cast<double>(mu_of(p.workers[i].m));
    };
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return cost(a) < cost(b); });
    SteadyState ss;
    ss.x.assign(np, 0.0);
    double port = 0;  // fraction of the master's port in use
    for (std::size_t i : order) {
        const double share = cost(i) / p.workers[i].w;  // port fraction to keep worker i busy
        if (port + share <= 1) {
            ss.x[i] = 1 / p.workers[i].w;
            port += share;
        } else {
            ss.x[i] = (1 - port) / cost(i);
            break;
        }
    }
    ss.throughput = std::accumulate(ss.x.begin(), ss.x.end(), 0.0);
    const double q = static_cast<double>(p.q);
    const double updates =
        static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / (q * q * q);
    ss.makespan_bound_s = updates / ss.throughput;
    return ss;
}

}  // namespace cala::mw

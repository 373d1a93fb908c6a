// Exact cost of cala::potrf per rank: the engine's schedule (geometry.hpp) counted with the
// Traffic convention of comm.hpp, plus the conversions; and the planner built on it.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "cala/error.hpp"
#include "cholesky/plan.hpp"
#include "cholesky/planner.hpp"
#include "comm/node_slots.hpp"
#include "core/check.hpp"
#include "model/check.hpp"
#include "model/costs.hpp"
#include "node/options.hpp"
#include "node/route.hpp"

namespace cala {

namespace detail {
namespace {

struct Tally {
    std::int64_t sent = 0, recv = 0, msgs = 0;
    void send(std::int64_t w) {
        if (w > 0) sent += w, msgs += 1;
    }
    void receive(std::int64_t w) {
        if (w > 0) recv += w, msgs += 1;
    }
};

// The tile loop on process (layer, r, c): traffic, flops (real count) and the peak of its
// buffers in elements.
struct LoopTotals {
    Tally t;
    double flops = 0;
    std::int64_t buffers = 0;
};

// With devices (EngineArgs::devices), each step's update holds L(j, l) of my columns j > l
// stacked (engine.cpp, update_on_node) and the units' memory of its device_gemm calls, at most
// that of one call over all my rows at or below the first such column (node/route.hpp); added to
// the step's peak, in elements of `elem` bytes.
// node_shared: the panels may live in node-shared slots instead (comm/node_slots.hpp, one thread a
// rank, no devices): the peak is then bounded for either path.
LoopTotals engine_cost(const CholGeom& g, int me, int r, int c, bool cplx, const DeviceGemmOptions* dev = nullptr,
                       std::size_t elem = 8, bool node_shared = false) {
    LoopTotals out;
    Tally& t = out.t;
    const int h = g.h, p = g.p(), q = g.q();
    const double fm = cplx ? 4.0 : 1.0;  // flops of a complex multiply-add over a real one
    std::int64_t panel_peak[3] = {0, 0, 0}, node_prev = 0;
    std::int64_t group_now = 0, group_prev = 0;  // delayed updates: two groups' stacked panels
    std::int64_t no_panels = 0;                   // the peak without the panels (node-shared slots)
    for (index_t l = 0; l < g.mt(); ++l) {
        if (g.delay > 1 && l == g.group_first(l)) {
            index_t rows = g.rows_of(g.panel_rows(l, r, -1));
            for (index_t j = l + 1; j < g.mt(); ++j)
                if (g.co(j) == c) rows += g.size(j);
            const index_t l1 = g.group_last(l);
            group_prev = group_now;
            group_now = rows * (g.start(l1) + g.size(l1) - g.start(l));
        }
        const index_t b = g.size(l);
        const bool diag = r == g.ro(l) && c == g.co(l), in_col = c == g.co(l);
        std::int64_t step_buf = 0, transient = 0;
        if (diag) {
            if (h > 1) t.send(b * b), t.receive(b * b), transient = std::max<std::int64_t>(transient, b * b);
            out.flops += fm * double(b) * b * b / 3.0;
        }
        const auto mine = g.panel_rows(l, r, me);
        if (in_col && g.layer_solves(l, me) && p > 1) {
            if (r == g.ro(l)) t.send(b * b);
            else t.receive(b * b);
            step_buf += b * b;
        }
        if (in_col && h > 1) {
            std::int64_t red = 0;
            for (int x = 0; x < h; ++x) {
                const auto tl = g.panel_rows(l, r, x);
                if (tl.empty()) continue;
                const std::int64_t w = g.rows_of(tl) * b;
                red += w;
                if (x == me) t.receive(w);
                else t.send(w);
            }
            transient = std::max(transient, step_buf + red);
        }
        if (in_col && !mine.empty()) {
            out.flops += fm * double(g.rows_of(mine)) * b * b;
            transient = std::max(transient, b * b);  // L(l, l)⁻¹ (panel.cpp, solve_panel)
        }
        const auto [s0, s1] = g.slice(l, me);
        const index_t width = s1 - s0;
        const auto rows = g.panel_rows(l, r, -1);
        const index_t nrows = g.rows_of(rows);
        if (in_col && h > 1) {
            std::int64_t io = 0;
            if (!mine.empty())
                for (int s = 0; s < h; ++s) {
                    if (s == me) continue;
                    const auto [a0, a1] = g.slice(l, s);
                    if (a1 > a0) t.send(g.rows_of(mine) * (a1 - a0)), io += g.rows_of(mine) * (a1 - a0);
                }
            if (width > 0)
                for (int x = 0; x < h; ++x) {
                    if (x == me) continue;
                    const auto tl = g.panel_rows(l, r, x);
                    if (!tl.empty()) t.receive(g.rows_of(tl) * width), io += g.rows_of(tl) * width;
                }
            transient = std::max(transient, step_buf + io + nrows * width);
        }
        std::int64_t panel = 0;
        if (width > 0) {
            panel += nrows * width;
            if (q > 1 && nrows > 0) {
                if (c == g.co(l)) t.send(nrows * width);
                else t.receive(nrows * width);
            }
            if (p > 1)
                for (int rp = 0; rp < p; ++rp) {
                    const auto ct = g.column_tiles(l, rp, c);
                    if (ct.empty()) continue;
                    const std::int64_t w = g.rows_of(ct) * width;
                    panel += w;
                    if (rp == r) t.send(w);
                    else t.receive(w);
                }
            // Trailing update of my columns j > l: rows of my panel tiles at or below j.
            std::vector<index_t> suffix(rows.size() + 1, 0);
            for (std::size_t x = rows.size(); x-- > 0;) suffix[x] = suffix[x + 1] + g.size(rows[x]);
            for (index_t j = l + 1; j < g.mt(); ++j) {
                if (g.co(j) != c) continue;
                const auto it = std::lower_bound(rows.begin(), rows.end(), j);
                const index_t below = suffix[static_cast<std::size_t>(it - rows.begin())];
                const bool has_diag = it != rows.end() && *it == j;
                const double bj = double(g.size(j));
                if (has_diag) out.flops += fm * (bj * (bj + 1) * width + 2.0 * (below - bj) * bj * width);
                else out.flops += fm * 2.0 * below * bj * width;
            }
        }
        std::int64_t node = 0;
        if (dev != nullptr && width > 0) {
            index_t ncols = 0, j0 = -1, mrows = 0;
            for (index_t j = l + 1; j < g.mt(); ++j)
                if (g.co(j) == c) ncols += g.size(j), j0 = j0 < 0 ? j : j0;
            for (index_t i = std::max<index_t>(j0, 0); j0 >= 0 && i < g.mt(); ++i)
                if (g.ro(i) == r) mrows += g.size(i);
            if (mrows > 0) {
                const std::int64_t e = static_cast<std::int64_t>(elem);
                node = ncols * width + (node::detail::device_workspace_bound(*dev, mrows, ncols, width, elem) + e - 1) / e;
            }
        }
        // Three steps' panels are alive at once (an upper bound with delayed updates: there a
        // panel is freed once stacked into its group) (panel l+1 is built while step l-1's update
        // tasks may still read panel l-1), plus this step's transient buffers.
        // With lookahead, panel l runs beside step l-1's update on the node (engine.cpp).
        panel_peak[l % 3] = panel;
        out.buffers = std::max(out.buffers, panel_peak[0] + panel_peak[1] + panel_peak[2] + transient + step_buf +
                                                std::max(node, node_prev) + group_now + group_prev);
        no_panels = std::max(no_panels, transient + step_buf + std::max(node, node_prev) + group_now + group_prev);
        node_prev = node;
    }
    if (node_shared && dev == nullptr && q > 1) {
        index_t width = 0;
        for (index_t i = 0; i < g.mt(); ++i) width = std::max(width, g.size(i));
        const std::int64_t e = static_cast<std::int64_t>(elem);
        const std::int64_t share = NodeSlots::share_bytes(g.rows.local_size(r) * width, e, q);
        out.buffers = std::max(out.buffers, no_panels + (share + e - 1) / e);
    }
    return out;
}

}  // namespace

Cost potrf_plan_cost(const CholPlan& plan, Uplo uplo, const BlockCyclic& a, GridOrder order, int rank,
                     std::size_t elem, bool cplx, const DeviceGemmOptions* dev) {
    (void)uplo;
    Cost cost;
    std::int64_t convert_words = 0, convert_recv = 0, convert_msgs = 0, convert_store = 0, redist_peak = 0;
    int me = 0, r = 0, c = 0;
    bool active = true;
    if (plan.h == 1) {
        const Placement up = user_placement(a, order);
        const int idx = up.index_of(rank);
        r = idx / a.q(), c = idx % a.q();
        if (plan.convert) {
            const Cost in = redistribute_cost(plan.op, a, plan.work, r, c);
            const Cost back = redistribute_cost(plan.op, plan.work, a, r, c);
            convert_words = in.words + back.words, convert_recv = in.words_recv + back.words_recv;
            convert_msgs = in.msgs + back.msgs;
            convert_store = plan.work.rows.local_size(r) * plan.work.cols.local_size(c);
            const RedistGeometry gi(plan.op, a, plan.work), gb(plan.op, plan.work, a);
            const auto ti = redist_traffic(gi, up, user_placement(plan.work, order), rank);
            const auto tb = redist_traffic(gb, user_placement(plan.work, order), up, rank);
            redist_peak = std::max(ti.send_total + ti.recv_others, tb.send_total + tb.recv_others);
        }
    } else {
        const Placement up = user_placement(a, order);
        const Placement cp = chol_compact_placement(plan);
        const RedistGeometry gi(plan.op, a, cp.layout), gb(plan.op, cp.layout, a);
        const auto ti = redist_traffic(gi, up, cp, rank);
        const auto tb = redist_traffic(gb, cp, up, rank);
        convert_words = ti.words + tb.words, convert_recv = ti.recv_others + tb.recv_others;
        convert_msgs = ti.msgs + tb.msgs;
        redist_peak = std::max(ti.send_total + ti.recv_others, tb.send_total + tb.recv_others);
        active = rank < plan.p * plan.q * plan.h;
        if (active) {
            me = rank / (plan.p * plan.q), r = (rank / plan.q) % plan.p, c = rank % plan.q;
            const int idx = cp.index_of(rank);
            convert_store = cp.layout.rows.local_size(idx / plan.q) * cp.layout.cols.local_size(idx % plan.q);
        }
    }
    cost.words = convert_words;
    cost.words_recv = convert_recv;
    cost.msgs = convert_msgs;
    std::int64_t peak = convert_store + redist_peak;
    if (active) {
        const LoopTotals lt = engine_cost(plan.geom, me, r, c, cplx, dev, elem, plan.node_shared);
        cost.words += lt.t.sent + lt.t.recv;
        cost.words_recv += lt.t.recv;
        cost.msgs += lt.t.msgs;
        cost.flops = lt.flops;
        const std::int64_t layer = plan.h > 1 ? local_elems(plan.work, r, c) : 0;
        peak = std::max(peak, convert_store + layer + lt.buffers);
    }
    cost.extra_bytes = peak * static_cast<std::int64_t>(elem);
    return cost;
}

namespace {

std::int64_t memory_limit(const CholeskyOptions& o) {
    if (o.memory_limit_bytes > 0) return o.memory_limit_bytes;
    if (const char* s = std::getenv("CALA_MAX_MEMORY_MB")) {
        const double mb = std::atof(s);
        if (mb > 0) return static_cast<std::int64_t>(mb * 1024 * 1024);
    }
    return 0;
}

struct Scored {
    CholeskyOptions opts;
    CholeskyPlanInfo info;
};

// Busiest-rank figures of a plan: all ranks up to 16, else a sample of 16.
CholeskyPlanInfo score(const CholPlan& plan, Uplo uplo, const BlockCyclic& a, GridOrder order, std::size_t elem,
                       bool cplx, const MachineModel& m, const DeviceGemmOptions* dev) {
    CholeskyPlanInfo info;
    info.variant = plan.variant;
    info.grid = {plan.p, plan.q, plan.h};
    info.block_size = plan.work.rows.nb;
    info.delay = plan.geom.delay;
    info.converted = plan.convert;
    const int nranks = a.p() * a.q();
    info.idle_ranks = plan.h > 1 ? nranks - plan.p * plan.q * plan.h : 0;
    std::vector<int> ranks;
    if (nranks <= 16) {
        for (int x = 0; x < nranks; ++x) ranks.push_back(x);
    } else {  // a sample: the first and last ranks of each layer and grid row are the busiest
        for (int x = 0; x < 16; ++x) ranks.push_back(static_cast<int>(std::int64_t(x) * (nranks - 1) / 15));
    }
    double worst = 0;
    for (int x : ranks) {
        const Cost cst = potrf_plan_cost(plan, uplo, a, order, x, elem, cplx, dev);
        const double wmax = double(std::max(cst.words - cst.words_recv, cst.words_recv));
        const double tm = m.latency_s * cst.msgs + m.seconds_per_byte * wmax * elem + m.seconds_per_flop * cst.flops;
        info.words = std::max(info.words, wmax);
        info.msgs = std::max(info.msgs, double(cst.msgs));
        info.flops = std::max(info.flops, cst.flops);
        info.memory_bytes = std::max(info.memory_bytes, cst.extra_bytes);
        worst = std::max(worst, tm);
    }
    info.predicted_time_s = worst;
    return info;
}

}  // namespace

CholeskyPlanInfo plan_info(Uplo uplo, const BlockCyclic& a, GridOrder order, const CholeskyOptions& opts,
                           std::size_t elem, bool cplx, CholeskyOptions* chosen,
                           const MachineModel& m = MachineModel::from_env()) {
    const int nranks = a.p() * a.q();
    std::vector<CholeskyOptions> cands;
    const bool layered = opts.variant == CholeskyVariant::Repl || opts.variant == CholeskyVariant::ReplPart;
    // 2D with the plan's delay and, when it is the plan's to choose, without (the same time, less
    // memory: what a tight memory limit takes).
    auto add_2d = [&](CholeskyOptions o) {
        cands.push_back(o);
        if (o.delay == 0) cands.push_back((o.delay = 1, o));
    };
    if (opts.variant == CholeskyVariant::TwoD) {
        add_2d(opts);
    } else if (layered && opts.grid3d.p > 0) {
        cands.push_back(opts);
    } else {
        // 2D on the user's grid, and every p x q x h with h >= 2, P/2 < p·q·h <= P.
        if (!layered) {
            CholeskyOptions o = opts;
            o.variant = CholeskyVariant::TwoD;
            o.grid3d = {};
            add_2d(o);
        }
        // h up to twice the cube root of P (the 3D optimum is h = P^(1/3)) and the tile count.
        const int hmax = std::min<index_t>(nranks, std::min<index_t>(
            std::max<index_t>(2, static_cast<index_t>(2.0 * std::cbrt(double(nranks)) + 0.5)),
            (a.m() + std::max<index_t>(1, opts.block_size > 0 ? opts.block_size : a.cols.nb) - 1) /
                std::max<index_t>(1, opts.block_size > 0 ? opts.block_size : a.cols.nb)));
        for (int h = 2; h <= hmax; ++h) {
            const int layer = nranks / h;
            if (layer < 1 || 2 * layer * h <= nranks) continue;
            const auto [p, q] = Grid2D::squarest(layer);
            for (CholeskyVariant v : {CholeskyVariant::ReplPart, CholeskyVariant::Repl}) {
                if (layered && v != opts.variant) continue;
                CholeskyOptions o = opts;
                o.variant = v;
                o.grid3d = {p, q, h};
                cands.push_back(o);
            }
        }
    }
    const std::int64_t limit = memory_limit(opts);
    // The node's workspace (devices) counts against the limit too.
    DeviceGemmOptions dev;
    const bool on_dev = node::detail::local_devices(opts.devices, opts.max_device_bytes, opts.unit_speeds,
                                                    opts.node_strategy, dev);
    bool found = false;
    CholeskyPlanInfo best, cheapest;
    CholeskyOptions best_opts;
    double best_time = 0;
    for (const auto& o : cands) {
        const CholPlan plan = make_chol_plan(uplo, a, nranks, o);
        const CholeskyPlanInfo info = score(plan, uplo, a, order, elem, cplx, m, on_dev ? &dev : nullptr);
        if (cheapest.memory_bytes == 0 || info.memory_bytes < cheapest.memory_bytes) cheapest = info;
        if (limit > 0 && info.memory_bytes > limit) continue;
        // A layered plan against 2D (when the caller left the variant open) must promise 10% less
        // time (12% with the 2% tie rule below): what the sum of the model's terms does not see (each step's fiber reduction on
        // the panel's critical path, the conversions' copies) cost it 1.2-1.5x on the 2-rank
        // grids where both run on real cores (2x1: ReplPart 1x1x2 46-51 GF/s, 2D 63, n = 4096;
        // 43 against 68 at 8192), while the model said 3.5% faster. Prefer 2D on ties.
        const bool layer_plan = o.variant == CholeskyVariant::Repl || o.variant == CholeskyVariant::ReplPart;
        const double t = info.predicted_time_s * (layer_plan && !layered ? 1.0 / 0.9 : 1.0);
        if (!found || t < best_time * 0.98) {
            best = info, best_opts = o, best_time = t, found = true;
        }
    }
    if (!found)
        throw Error(cat("potrf: no plan fits the memory limit of ", limit / (1024 * 1024), " MB per rank; the cheapest plan needs ",
                        (cheapest.memory_bytes + 1024 * 1024 - 1) / (1024 * 1024), " MB per rank"));
    if (chosen) *chosen = best_opts;
    return best;
}

CholeskyOptions resolve_potrf(Uplo uplo, const BlockCyclic& a, GridOrder order, const CholeskyOptions& opts,
                              std::size_t elem, bool cplx) {
    const bool fixed = opts.variant == CholeskyVariant::TwoD ||
                       ((opts.variant == CholeskyVariant::Repl || opts.variant == CholeskyVariant::ReplPart) &&
                        opts.grid3d.p > 0);
    if (fixed && memory_limit(opts) == 0) return opts;
    CholeskyOptions chosen;
    plan_info(uplo, a, order, opts, elem, cplx, &chosen);
    return chosen;
}

}  // namespace detail

std::string CholeskyPlanInfo::describe() const {
    std::ostringstream s;
    s << to_string(variant) << ' ' << grid.p << 'x' << grid.q << 'x' << grid.c << " nb=" << block_size
      << (delay > 1 ? " delay=" + std::to_string(delay) : std::string()) << (converted ? " converted" : "") << " words=" << words << " msgs=" << msgs
      << " mem=" << memory_bytes << "B predicted=" << predicted_time_s << "s";
    if (idle_ranks > 0) s << " idle=" << idle_ranks;
    return s.str();
}

void detail::check_potrf_model(const char* fn, Uplo uplo, const BlockCyclic& a, const CholeskyOptions& o,
                               std::size_t elem_size) {
    using detail::cat;
    if (uplo != Uplo::Lower && uplo != Uplo::Upper) throw Error(cat(fn, ": uplo must be Lower or Upper"));
    if (a.m() != a.n()) throw Error(cat(fn, ": A must be square, got ", a.m(), " x ", a.n()));
    if (const std::string e = check_potrf_options(o, a.p() * a.q()); !e.empty())
        throw Error(fn + e.substr(std::string("potrf").size()));
    detail::check_at_least(fn, "elem_size", static_cast<std::int64_t>(elem_size), 1);
}

CholeskyPlanInfo plan_potrf(Uplo uplo, const BlockCyclic& a, GridOrder order, const CholeskyOptions& opts,
                            std::size_t elem_size, bool is_complex) {
    detail::check_potrf_model("plan_potrf", uplo, a, opts, elem_size);
    return detail::plan_info(uplo, a, order, opts, elem_size, is_complex, nullptr);
}

CholeskyPlanInfo plan_potrf(index_t n, int nranks, const CholeskyOptions& opts, const MachineModel& machine,
                            index_t user_block, std::size_t elem_size) {
    detail::check_at_least("plan_potrf", "n", n, 0);
    detail::check_at_least("plan_potrf", "nranks", nranks, 1);
    detail::check_at_least("plan_potrf", "user_block", user_block, 1);
    detail::check_potrf_model("plan_potrf", Uplo::Lower, BlockCyclic(0, 0, 1, 1, nranks, 1), opts, elem_size);
    const auto [p, q] = Grid2D::squarest(nranks);
    const BlockCyclic a(n, n, user_block, user_block, p, q);
    return detail::plan_info(Uplo::Lower, a, GridOrder::RowMajor, opts, elem_size, false, nullptr, machine);
}

Cost potrf_cost(Uplo uplo, const BlockCyclic& a, GridOrder order, const CholeskyOptions& opts, int rank,
                std::size_t elem_size, bool is_complex) {
    detail::check_potrf_model("potrf_cost", uplo, a, opts, elem_size);
    detail::check_rank("potrf_cost", a, rank);
    const CholeskyOptions o = detail::resolve_potrf(uplo, a, order, opts, elem_size, is_complex);
    const detail::CholPlan plan = detail::make_chol_plan(uplo, a, a.p() * a.q(), o);
    // The node's memory (devices): each step's stacked panel and units' tiles; before the
    // factorization, a calibration's three tiles on one device unit at a time.
    DeviceGemmOptions dev;
    const bool on_dev = node::detail::local_devices(opts.devices, opts.max_device_bytes, opts.unit_speeds,
                                                    opts.node_strategy, dev);
    Cost cost = detail::potrf_plan_cost(plan, uplo, a, order, rank, elem_size, is_complex, on_dev ? &dev : nullptr);
    if (on_dev) cost.extra_bytes = std::max(cost.extra_bytes, node::detail::calibration_workspace(dev));
    return cost;
}

}  // namespace cala

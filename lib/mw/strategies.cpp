// The seven strategies of Section 6.2 as plans:
//   Het     the 8 selection variants (selection.cpp), each simulated; the fastest is the plan
//   Hom     for each memory size M present: the virtual homogeneous platform of the workers with
//           m_i >= M, at the slowest c and w among them, P = min(|V|, ceil(mu·w / (2c))) workers
//           (Section 4); simulated; the fastest candidate runs round robin on the P best workers
//   HomI    the same over every threshold triple (M, C, W): workers with m_i >= M, c_i <= C,
//           w_i <= W, seen as (mu(M), C, W)
//   ORROML  every worker, own mu_i, panels and steps dealt round robin
//   OMMOML  every worker, own mu_i, min-min selection
//   ODDOML  every worker, own mu_i, dynamic: first ready worker served
//   BMM     every worker, beta_i x beta_i squares of A, B, C (memory in thirds), dynamic

#include <algorithm>
#include <cmath>
#include <set>

#include "cala/error.hpp"
#include "core/check.hpp"
#include "mw/plan.hpp"

namespace cala::mw::detail {

namespace {

std::vector<Layout> ml_layouts(const Platform& p, const Dims& d) {
    std::vector<Layout> l;
    for (const Worker& w : p.workers) l.push_back(ml_layout(mu_of(w.m), d));
    return l;
}

// The homogeneous algorithm with common mu on the workers `v` (every one qualifies), seen as
// identical workers of cost (c, w): its predicted makespan, and the workers it would enroll.
struct HomCandidate {
    double makespan = INFINITY;
    std::int64_t mu = 0;
    std::vector<int> workers;
};

HomCandidate hom_candidate(const Platform& p, const Dims& d, std::int64_t m_blocks, double c,
                           double w, const std::vector<int>& v) {
    HomCandidate h;
    h.mu = mu_of(m_blocks);
    if (h.mu < 1 || v.empty()) return h;
    const double want = std::ceil(static_cast<double>(h.mu) * w / (2 * c) - 1e-12);
    const std::size_t np = std::min(v.size(), static_cast<std::size_t>(std::max(1.0, want)));
    Platform virt{p.q, std::vector<Worker>(np, Worker{c, w, m_blocks})};
    std::vector<int> all(np);
    for (std::size_t i = 0; i < np; ++i) all[i] = static_cast<int>(i);
    const Plan plan = round_robin_plan(d, std::vector<Layout>(np, ml_layout(h.mu, d)), all);
    h.makespan = run_plan(virt, d, plan).makespan;
    // The np workers of v best at this mu: shortest step (port time or compute, whichever binds).
    std::vector<int> sorted = v;
    auto step = [&](int i) {
        const double mu = static_cast<double>(h.mu);
        return std::max(2 * mu * p.workers[i].c, mu * mu * p.workers[i].w);
    };
    std::stable_sort(sorted.begin(), sorted.end(), [&](int a, int b) { return step(a) < step(b); });
    h.workers.assign(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(np));
    std::sort(h.workers.begin(), h.workers.end());
    return h;
}

Plan homogeneous_plan(const Platform& p, const Dims& d, bool improved) {
    const int np = static_cast<int>(p.workers.size());
    std::set<std::int64_t> mems;
    std::set<double> cs, ws;
    for (const Worker& w : p.workers) {
        mems.insert(w.m);
        cs.insert(w.c);
        ws.insert(w.w);
    }
    HomCandidate best;
    std::string best_name;
    auto consider = [&](std::int64_t M, double C, double W, bool by_c, bool by_w) {
        std::vector<int> v;
        double cmax = 0, wmax = 0;
        for (int i = 0; i < np; ++i) {
            const Worker& x = p.workers[i];
            if (x.m < M || (by_c && x.c > C) || (by_w && x.w > W)) continue;
            v.push_back(i);
            cmax = std::max(cmax, x.c);
            wmax = std::max(wmax, x.w);
        }
        if (v.empty()) return;
        const HomCandidate h = hom_candidate(p, d, M, by_c ? C : cmax, by_w ? W : wmax, v);
        if (h.makespan < best.makespan) {
            best = h;
            best_name = cala::detail::cat("m>=", M);
            if (by_c) best_name += cala::detail::cat(",c<=", C);
            if (by_w) best_name += cala::detail::cat(",w<=", W);
        }
    };
    for (std::int64_t M : mems) {
        if (!improved) {
            consider(M, 0, 0, false, false);
            continue;
        }
        for (double C : cs)
            for (double W : ws) consider(M, C, W, true, true);
    }
    std::vector<Layout> layout(np);
    for (int i : best.workers) layout[i] = ml_layout(best.mu, d);
    Plan plan = round_robin_plan(d, layout, best.workers);
    plan.variant =
        best_name + ",P=" + std::to_string(best.workers.size()) + ",mu=" + std::to_string(best.mu);
    return plan;
}

}  // namespace

Plan make_plan(const Platform& p, const Dims& d, Strategy s) {
    const int np = static_cast<int>(p.workers.size());
    Plan plan;
    switch (s) {
        case Strategy::Het: {
            double best = INFINITY;
            for (int v = 0; v < 8; ++v) {
                const Selection sel{(v & 4) == 0, (v & 2) != 0, (v & 1) != 0, false};
                Plan cand = select_plan(p, d, ml_layouts(p, d), sel);
                const double t = run_plan(p, d, cand).makespan;
                if (t < best) {
                    best = t;
                    plan = std::move(cand);
                }
            }
            break;
        }
        case Strategy::Hom:
            plan = homogeneous_plan(p, d, false);
            break;
        case Strategy::HomI:
            plan = homogeneous_plan(p, d, true);
            break;
        case Strategy::ORROML: {
            std::vector<int> all(np);
            for (int i = 0; i < np; ++i) all[i] = i;
            plan = round_robin_plan(d, ml_layouts(p, d), all);
            break;
        }
        case Strategy::OMMOML:
            plan = select_plan(p, d, ml_layouts(p, d), {true, false, true, true});
            break;
        case Strategy::ODDOML:
            plan.layout = ml_layouts(p, d);
            plan.dynamic = true;
            break;
        case Strategy::BMM:
            for (const Worker& w : p.workers)
                plan.layout.push_back(bmm_layout(bmm_side_of(w.m), d));
            plan.dynamic = true;
            break;
        default:
            throw Error("mw: strategy " + std::to_string(static_cast<int>(s)) +
                        " is not a Strategy");
    }
    plan.strategy = s;
    if (!plan.dynamic && plan.chunks.size() != static_cast<std::size_t>(np))
        plan.chunks.assign(np, {});
    return plan;
}

}  // namespace cala::mw::detail

// Discrete-event simulation of a plan under the one-port model (Section 2 of the paper):
//   * the master's port carries one operation at a time; sending or receiving b blocks of
//     q x q elements to/from worker i takes b·c_i (partial blocks by their area);
//   * worker i computes a step of a rows x cols chunk over len elements of k in
//     rows·cols·len / q^3 · w_i, after the step has fully arrived and the previous step is done;
//   * a worker posts the receive of step s + nbuf when step s is computed (READY_STEP), asks
//     for its C to be fetched after its last step (READY_RESULT); control messages take no time.
// The decisions are MasterCore's, exactly as in a real run.

#include <queue>

#include "cala/error.hpp"
#include "mw/master_core.hpp"
#include "mw/plan.hpp"

namespace cala::mw::detail {

namespace {

enum class Ev { ReadyC, ReadyStep, ReadyResult, PortDone };

struct Event {
    double t;
    std::int64_t seq;
    Ev kind;
    int w;
    PortOp op;
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

}  // namespace

SimResult run_plan(const Platform& p, const Dims& d, const Plan& plan) {
    const int np = static_cast<int>(plan.layout.size());
    const double q = static_cast<double>(d.q), q2 = q * q, q3 = q2 * q;
    MasterCore core(plan, d);
    SimResult res;
    res.chunks.assign(np, 0);
    std::priority_queue<Event, std::vector<Event>, std::greater<>> pq;
    std::int64_t seq = 0;
    std::vector<double> comp_free(np, 0.0);
    auto push = [&](double t, Ev k, int w, PortOp op = {}) { pq.push({t, seq++, k, w, op}); };
    auto task = [&](const TaskOut& to, double t) {
        if (to.stop) {
            add_worker_traffic(res.traffic);
            return;
        }
        const Layout& l = plan.layout[to.worker];
        add_chunk_traffic(res.traffic, d, l, to.chunk);
        push(t, Ev::ReadyC, to.worker);
        for (index_t s = 0; s < std::min<index_t>(l.nbuf, steps_of(l, d)); ++s)
            push(t, Ev::ReadyStep, to.worker);
    };
    for (const TaskOut& to : core.start()) task(to, 0);

    double now = 0;
    bool port_busy = false;
    for (;;) {
        while (!pq.empty() && pq.top().t <= now) {
            const Event e = pq.top();
            pq.pop();
            switch (e.kind) {
                case Ev::ReadyC:
                    core.on_ready_c(e.w, e.t);
                    break;
                case Ev::ReadyStep:
                    core.on_ready_step(e.w, e.t);
                    break;
                case Ev::ReadyResult:
                    core.on_ready_result(e.w, e.t);
                    break;
                case Ev::PortDone: {
                    port_busy = false;
                    const PortOp& op = e.op;
                    const Layout& l = plan.layout[op.worker];
                    if (op.kind == OpKind::SendStep) {
                        const ChunkShape sh = shape_of(op.chunk, d);
                        index_t k0 = 0, len = 0;
                        step_range(l, d, op.step, k0, len);
                        const double dur = static_cast<double>(sh.rows) *
                                           static_cast<double>(sh.cols) * static_cast<double>(len) /
                                           q3 * p.workers[op.worker].w;
                        const double end = std::max(e.t, comp_free[op.worker]) + dur;
                        comp_free[op.worker] = end;
                        const index_t nsteps = steps_of(l, d);
                        if (op.step + l.nbuf < nsteps) push(end, Ev::ReadyStep, op.worker);
                        if (op.step == nsteps - 1) push(end, Ev::ReadyResult, op.worker);
                    } else if (op.kind == OpKind::RecvResult) {
                        res.makespan = std::max(res.makespan, e.t);
                        ++res.chunks[op.worker];
                    }
                    if (auto to = core.op_done(op)) task(*to, e.t);
                    break;
                }
            }
        }
        if (!port_busy) {
            if (auto op = core.next_op()) {
                const ChunkShape sh = shape_of(op->chunk, d);
                double blocks;
                if (op->kind == OpKind::SendStep) {
                    index_t k0 = 0, len = 0;
                    step_range(plan.layout[op->worker], d, op->step, k0, len);
                    blocks = static_cast<double>(len) * static_cast<double>(sh.rows + sh.cols) / q2;
                } else {
                    blocks = static_cast<double>(sh.rows) * static_cast<double>(sh.cols) / q2;
                }
                const double dur = blocks * p.workers[op->worker].c;
                res.port_busy += dur;
                port_busy = true;
                push(now + dur, Ev::PortDone, op->worker, *op);
                continue;
            }
        }
        if (pq.empty()) break;
        now = pq.top().t;
    }
    if (!core.finished()) throw Error("mw: internal error: the simulated schedule stalled");
    return res;
}

}  // namespace cala::mw::detail

namespace cala::mw {

Prediction simulate(const Platform& p, index_t m, index_t n, index_t k, Strategy s) {
    validate(p, "mw::simulate");
    if (m < 0 || n < 0 || k < 0)
        throw Error("mw::simulate: sizes m = " + std::to_string(m) + ", n = " + std::to_string(n) +
                    ", k = " + std::to_string(k) + " must be >= 0");
    const detail::Dims d = detail::make_dims(m, n, k, p.q);
    const detail::Plan plan = detail::make_plan(p, d, s);
    const detail::SimResult r = detail::run_plan(p, d, plan);
    Prediction pr;
    pr.strategy = s;
    pr.variant = plan.variant;
    pr.makespan_s = r.makespan;
    pr.port_busy_s = r.port_busy;
    pr.traffic = r.traffic;
    pr.chunks = r.chunks;
    pr.blocks.assign(p.workers.size(), 0);
    for (std::size_t i = 0; i < p.workers.size(); ++i)
        if (r.chunks[i] > 0) {
            pr.enrolled.push_back(static_cast<int>(i));
            pr.blocks[i] = plan.layout[i].blocks();
        }
    const double q = static_cast<double>(p.q);
    pr.block_updates =
        static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / (q * q * q);
    return pr;
}

std::vector<Prediction> simulate_all(const Platform& p, index_t m, index_t n, index_t k) {
    std::vector<Prediction> out;
    for (Strategy s : all_strategies) out.push_back(simulate(p, m, n, k, s));
    return out;
}

}  // namespace cala::mw

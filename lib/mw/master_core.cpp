// The master's decisions (see master_core.hpp): static plans follow their step sequence; dynamic
// plans serve the worker that has been ready longest.

#include "mw/master_core.hpp"

#include "cala/error.hpp"

namespace cala::mw::detail {

MasterCore::MasterCore(const Plan& plan, const Dims& d)
    : plan_(plan), d_(d), w_(plan.layout.size()) {}

std::vector<TaskOut> MasterCore::start() {
    std::vector<TaskOut> out;
    for (int w = 0; w < static_cast<int>(w_.size()); ++w) out.push_back(assign(w));
    return out;
}

TaskOut MasterCore::assign(int w) {
    W& x = w_[w];
    const Layout& l = plan_.layout[w];
    bool have = false;
    Chunk c;
    if (l.used() && d_.t > 0) {
        if (!plan_.dynamic) {
            if (x.next_chunk < plan_.chunks[w].size()) {
                c = plan_.chunks[w][x.next_chunk++];
                have = true;
            }
        } else {
            // Finish the current panel top to bottom, then take the next l.cols block columns.
            if (x.has_panel && x.panel_i >= d_.r) x.has_panel = false;
            if (!x.has_panel && next_col_ < d_.s) {
                x.panel_j0 = next_col_;
                x.panel_w = std::min(l.cols, d_.s - next_col_);
                x.panel_i = 0;
                x.has_panel = true;
                next_col_ += x.panel_w;
            }
            if (x.has_panel) {
                c = {x.panel_i, std::min(l.rows, d_.r - x.panel_i), x.panel_j0, x.panel_w};
                x.panel_i += l.rows;
                have = true;
            }
        }
    }
    if (!have) {
        x.ph = Phase::Stopped;
        ++stopped_;
        return {w, true, {}};
    }
    x.chunk = c;
    x.nsteps = steps_of(l, d_);
    x.next_step = 0;
    x.ph = Phase::WaitReadyC;
    return {w, false, c};
}

void MasterCore::on_ready_c(int w, double now) {
    if (w_[w].ph != Phase::WaitReadyC)
        throw Error("mw: protocol error: READY_C from a worker without a task");
    w_[w].ph = Phase::ReadyC;
    w_[w].t_ready_c = now;
}

void MasterCore::on_ready_step(int w, double now) { w_[w].credits.push_back(now); }

void MasterCore::on_ready_result(int w, double now) {
    if (w_[w].ph != Phase::WaitResult)
        throw Error("mw: protocol error: READY_RESULT before the last step");
    w_[w].ph = Phase::ResultReady;
    w_[w].t_result = now;
}

PortOp MasterCore::op_for(int w, OpKind k) {
    W& x = w_[w];
    PortOp op{w, k, 0, x.chunk};
    if (k == OpKind::SendStep) {
        op.step = x.next_step++;
        x.credits.pop_front();
        if (x.next_step == x.nsteps) x.ph = Phase::WaitResult;
    } else if (k == OpKind::SendC) {
        x.ph = Phase::Steps;
    } else {
        x.ph = Phase::Idle;  // the receive is under way; op_done hands out the next task
    }
    return op;
}

// The worker whose pending operation became possible first (ties: lowest index).
std::optional<PortOp> MasterCore::earliest_ready(bool results_only) {
    int best = -1;
    OpKind kind = OpKind::SendC;
    double t_best = 0;
    for (int w = 0; w < static_cast<int>(w_.size()); ++w) {
        const W& x = w_[w];
        double t;
        OpKind k;
        if (x.ph == Phase::ResultReady) {
            t = x.t_result;
            k = OpKind::RecvResult;
        } else if (results_only) {
            continue;
        } else if (x.ph == Phase::ReadyC) {
            t = x.t_ready_c;
            k = OpKind::SendC;
        } else if (x.ph == Phase::Steps && !x.credits.empty()) {
            t = x.credits.front();
            k = OpKind::SendStep;
        } else {
            continue;
        }
        if (best < 0 || t < t_best) {
            best = w;
            t_best = t;
            kind = k;
        }
    }
    if (best < 0) return std::nullopt;
    return op_for(best, kind);
}

std::optional<PortOp> MasterCore::next_op() {
    if (plan_.dynamic) return earliest_ready(false);
    if (pos_ < plan_.sequence.size()) {
        const int w = plan_.sequence[pos_];
        const W& x = w_[w];
        if (x.ph == Phase::ResultReady) return op_for(w, OpKind::RecvResult);
        if (x.ph == Phase::ReadyC) return op_for(w, OpKind::SendC);
        if (x.ph == Phase::Steps && !x.credits.empty()) {
            ++pos_;
            return op_for(w, OpKind::SendStep);
        }
    }
    // The next worker in the sequence is not ready (or the sequence is over): fetch a finished
    // C chunk meanwhile rather than leave the port idle.
    return earliest_ready(true);
}

std::optional<TaskOut> MasterCore::op_done(const PortOp& op) {
    if (op.kind != OpKind::RecvResult) return std::nullopt;
    ++w_[op.worker].done;
    return assign(op.worker);
}

}  // namespace cala::mw::detail

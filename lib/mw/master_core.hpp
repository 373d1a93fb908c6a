#pragma once
// Internal: the master's decisions, with no MPI and no clock of its own. The simulator feeds it
// events at model times, the real master at MPI_Wtime: both take the same decisions from the
// same sequence of events.
//
// A worker, seen from the master:
//
//   Idle --TASK sent--> WaitReadyC --READY_C--> ReadyC --C sent--> Steps --last step sent-->
//   WaitResult --READY_RESULT--> ResultReady --C received--> Idle (next TASK, or STOP: Stopped)
//
// In Steps, each READY_STEP credit (a receive posted for one step) allows one step send. The
// port carries one operation at a time (send C, send a step, receive C): one-port.

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "mw/plan.hpp"

namespace cala::mw::detail {

enum class OpKind { SendC, SendStep, RecvResult };

struct PortOp {
    int worker = 0;
    OpKind kind = OpKind::SendC;
    index_t step = 0;
    Chunk chunk;
};

/// A TASK message: the next chunk of a worker, or STOP.
struct TaskOut {
    int worker = 0;
    bool stop = false;
    Chunk chunk;
};

class MasterCore {
public:
    MasterCore(const Plan& plan, const Dims& d);

    /// First TASK (or STOP) of every worker.
    std::vector<TaskOut> start();
    void on_ready_c(int w, double now);
    void on_ready_step(int w, double now);
    void on_ready_result(int w, double now);
    /// The port operation to start now (the port is free), or none: wait for an event.
    std::optional<PortOp> next_op();
    /// The operation finished; a finished C receive yields the worker's next TASK or STOP.
    std::optional<TaskOut> op_done(const PortOp& op);
    /// Every worker has been sent STOP.
    bool finished() const { return stopped_ == static_cast<int>(w_.size()); }

    const Layout& layout(int w) const { return plan_.layout[w]; }
    std::int64_t chunks_done(int w) const { return w_[w].done; }
    index_t steps(int w) const { return w_[w].nsteps; }

private:
    enum class Phase { Idle, WaitReadyC, ReadyC, Steps, WaitResult, ResultReady, Stopped };
    struct W {
        Phase ph = Phase::Idle;
        Chunk chunk;
        index_t nsteps = 0, next_step = 0;
        std::deque<double> credits;  ///< arrival time of each unused READY_STEP
        double t_ready_c = 0, t_result = 0;
        std::size_t next_chunk = 0;                      // static
        index_t panel_j0 = 0, panel_w = 0, panel_i = 0;  // dynamic: current panel, next block row
        bool has_panel = false;
        std::int64_t done = 0;
    };
    TaskOut assign(int w);
    std::optional<PortOp> earliest_ready(bool results_only);
    PortOp op_for(int w, OpKind k);

    const Plan& plan_;
    Dims d_;
    std::vector<W> w_;
    std::size_t pos_ = 0;   // static: next entry of plan_.sequence
    index_t next_col_ = 0;  // dynamic: first block column not yet dealt
    int stopped_ = 0;
};

}  // namespace cala::mw::detail

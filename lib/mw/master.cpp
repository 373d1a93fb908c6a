// The master of mw::gemm: MasterCore decides, this loop executes. One port operation (send a
// chunk of C, send a step, receive a chunk of C) at a time, and within it one block transfer at a
// time: the one-port model, tracked in Report::max_port_transfers. Control messages (TASK out,
// READY_* in) are not port transfers. Between polls the master sleeps (runtime.hpp).

#include <time.h>

#include <list>
#include <optional>

#include "core/trace.hpp"
#include "core/workspace.hpp"
#include "mw/master_core.hpp"
#include "mw/runtime.hpp"
#include "kernels/blas.hpp"

namespace cala::mw::detail {

namespace trace = cala::detail::trace;

namespace {

double thread_cpu_s() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// One block of a port operation: where it lives in A, B or C, and its shape.
template <class T>
struct BlockRef {
    const T* src = nullptr;  // send: top-left element in A, B or C
    T* dst = nullptr;        // receive: top-left element in C
    index_t rows = 0, cols = 0, ld = 0;
};

template <class T>
std::vector<BlockRef<T>> blocks_of(const PortOp& op, const Layout& l, const Dims& d, const T* a,
                                   index_t lda, const T* b, index_t ldb, T* c, index_t ldc) {
    const ChunkShape sh = shape_of(op.chunk, d);
    const index_t q = d.q, rb = nblocks(sh.rows, q), cb = nblocks(sh.cols, q);
    std::vector<BlockRef<T>> out;
    if (op.kind != OpKind::SendStep) {
        for (index_t j = 0; j < cb; ++j)
            for (index_t i = 0; i < rb; ++i) {
                T* p = c + (sh.row0 + i * q) + (sh.col0 + j * q) * ldc;
                out.push_back({p, p, bsize(sh.rows, q, i), bsize(sh.cols, q, j), ldc});
            }
        return out;
    }
    index_t k0 = 0, len = 0;
    step_range(l, d, op.step, k0, len);
    const index_t kb = nblocks(len, q);
    for (index_t j = 0; j < cb; ++j)
        for (index_t kk = 0; kk < kb; ++kk)
            out.push_back({b + (k0 + kk * q) + (sh.col0 + j * q) * ldb, nullptr, bsize(len, q, kk),
                           bsize(sh.cols, q, j), ldb});
    for (index_t kk = 0; kk < kb; ++kk)
        for (index_t i = 0; i < rb; ++i)
            out.push_back({a + (sh.row0 + i * q) + (k0 + kk * q) * lda, nullptr,
                           bsize(sh.rows, q, i), bsize(len, q, kk), lda});
    return out;
}

}  // namespace

template <class T>
void run_master(const Comm& comm, const Plan& plan, const Dims& d, const T* a, index_t lda,
                const T* b, index_t ldb, T* c, index_t ldc,
                const std::vector<double>& link_slowdown, double poll, Report& rep) {
    const int np = static_cast<int>(plan.layout.size());
    const int master = comm.rank();
    MasterCore core(plan, d);

    std::vector<std::int64_t> ctrl(np, 0);
    std::vector<Request> ctrl_req(np);
    std::vector<bool> finished(np, false);
    for (int w = 0; w < np; ++w)
        ctrl_req[w] = comm.irecv(&ctrl[w], 1, rank_of(w, master), kTagCtrl);

    struct TaskSend {
        std::int64_t v[6];
        Request r;
    };
    std::list<TaskSend> tasks;
    auto send_task = [&](const TaskOut& to) {
        TaskSend& t = tasks.emplace_back();
        if (to.stop) {
            t.v[0] = -1;
            for (int i = 1; i < 6; ++i) t.v[i] = 0;
        } else {
            const Layout& l = plan.layout[to.worker];
            const ChunkShape sh = shape_of(to.chunk, d);
            const std::int64_t v[6] = {sh.rows, sh.cols, d.k, l.depth * d.q, l.nbuf, d.q};
            std::copy(v, v + 6, t.v);
        }
        t.r = comm.isend(t.v, 6, rank_of(to.worker, master), kTagTask);
    };

    Buffer<T> pack(d.q * d.q);
    std::optional<PortOp> op;
    std::vector<BlockRef<T>> blocks;
    std::size_t next_block = 0;
    Request xfer;
    bool in_flight = false;
    double t_block = 0, hold_until = 0;
    int transfers = 0;
    // The trace (when on): one transfer span per block, the emulated link's hold included; the
    // next block starts after the hold, and its span after the previous one's end.
    std::int64_t tr_begin = 0, tr_end = 0;

    const double cpu0 = thread_cpu_s();
    const double t0 = now_s();
    double t_last = 0;
    int reports = 0;
    rep.blocks_peak.assign(np, 0);
    for (const TaskOut& to : core.start()) send_task(to);

    auto start_block = [&] {
        t_block = now_s();  // the copy out of A, B or C is part of the transfer (as in discover())
        if (trace::on()) tr_begin = trace::now_ns();
        const BlockRef<T>& blk = blocks[next_block];
        const int peer = rank_of(op->worker, master);
        if (op->kind == OpKind::RecvResult) {
            xfer = comm.irecv(pack.data(), blk.rows * blk.cols, peer, kTagResult);
        } else {
            kernels::copy<T>(Op::N, blk.rows, blk.cols, blk.src, blk.ld, pack.data(), blk.rows);
            xfer = comm.isend(pack.data(), blk.rows * blk.cols, peer,
                              op->kind == OpKind::SendC ? kTagC : kTagStep);
        }
        ++transfers;
        rep.max_port_transfers = std::max(rep.max_port_transfers, transfers);
        in_flight = true;
    };

    while (reports < np) {
        bool moved = false;
        for (int w = 0; w < np; ++w) {
            if (finished[w] || !ctrl_req[w].test()) continue;
            moved = true;
            const double t = now_s() - t0;
            const std::int64_t v = ctrl[w];
            switch (v % 16) {
                case kReadyC:
                    core.on_ready_c(w, t);
                    break;
                case kReadyStep:
                    core.on_ready_step(w, t);
                    break;
                case kReadyResult:
                    core.on_ready_result(w, t);
                    break;
                default:
                    rep.blocks_peak[w] = v / 16;
                    finished[w] = true;
                    ++reports;
            }
            if (!finished[w]) ctrl_req[w] = comm.irecv(&ctrl[w], 1, rank_of(w, master), kTagCtrl);
        }
        if (op && in_flight && xfer.test()) {
            in_flight = false;
            --transfers;
            const BlockRef<T>& blk = blocks[next_block];
            if (op->kind == OpKind::RecvResult)
                kernels::copy<T>(Op::N, blk.rows, blk.cols, pack.data(), blk.rows, blk.dst, blk.ld);
            const double t = now_s();
            if (op->kind == OpKind::RecvResult) t_last = t - t0;
            const double f = link_slowdown.empty() ? 1.0 : link_slowdown[op->worker];
            hold_until = t + (f - 1) * (t - t_block);
            if (trace::on()) {
                // (MPI_Wtime decides when the hold ends, the trace clock draws it: a span starts no
                // earlier than the previous one ended)
                const std::int64_t now = trace::now_ns(), begin = std::max(tr_begin, tr_end);
                tr_end = std::max(begin, now + static_cast<std::int64_t>((f - 1) * static_cast<double>(now - tr_begin)));
                trace::record(trace::Kind::Transfer,
                              op->kind == OpKind::SendC      ? "send C"
                              : op->kind == OpKind::SendStep ? "send step"
                                                             : "receive C",
                              begin, tr_end);
            }
            rep.port_busy_s += hold_until - t_block;
            ++rep.port_blocks;
            ++next_block;
            moved = true;
        }
        if (op && !in_flight && now_s() >= hold_until) {
            if (next_block < blocks.size()) {
                start_block();
            } else {
                if (auto to = core.op_done(*op)) send_task(*to);
                op.reset();
            }
            moved = true;
        }
        if (!op) {
            if ((op = core.next_op())) {
                blocks = blocks_of(*op, plan.layout[op->worker], d, a, lda, b, ldb, c, ldc);
                next_block = 0;
                start_block();
                moved = true;
            }
        }
        while (!tasks.empty() && tasks.front().r.test()) tasks.pop_front();
        if (!moved) {
            // An emulated slow link ends its hold on time, not at the next poll.
            const double hold = op && !in_flight ? hold_until - now_s() : poll;
            nap(std::min(poll, hold));
        }
    }
    poll_until(
        [&] {
            while (!tasks.empty() && tasks.front().r.test()) tasks.pop_front();
            return tasks.empty();
        },
        poll);
    rep.makespan_s = t_last;
    rep.master_cpu_s = thread_cpu_s() - cpu0;
    for (int w = 0; w < np; ++w)
        if (core.chunks_done(w) > 0) rep.enrolled_ranks.push_back(rank_of(w, master));
}

#define CALA_MW_MASTER_INST(T)                                                              \
    template void run_master<T>(const Comm&, const Plan&, const Dims&, const T*, index_t,   \
                                const T*, index_t, T*, index_t, const std::vector<double>&, \
                                double, Report&);
CALA_FOR_EACH_TYPE(CALA_MW_MASTER_INST)

}  // namespace cala::mw::detail

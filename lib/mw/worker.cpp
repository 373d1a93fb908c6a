// The worker of mw::gemm: for each TASK, receive a chunk of C, then its steps into nbuf
// buffers, multiply block by block, testing MPI between two block products so that the next
// step arrives meanwhile, and return C. Memory held (blocks with a posted receive or live data)
// is counted.
//
// Worker with nbuf = 2, one chunk of t steps (time flows down; "post s" = receives of step s
// posted and READY_STEP sent):
//
//   TASK; post C; post 1; post 2; READY_C
//   wait C, wait 1; C += A1·B1 block by block (step 2 arrives between the blocks)
//   post 3; wait 2; C += A2·B2 (step 3 arrives)
//   ...
//   READY_RESULT; send the C blocks

#include "core/trace.hpp"
#include "core/workspace.hpp"
#include "mw/runtime.hpp"
#include "kernels/blas.hpp"

namespace cala::mw::detail {

using cala::detail::trace::Kind;
using cala::detail::trace::Span;

template <class T>
std::int64_t run_worker(const Comm& comm, int master, double slowdown, double master_poll) {
    // A waiting worker has nothing else to do: it polls 5 times as often as the master, so that
    // it answers within one of the master's poll intervals (see docs/mw.md).
    const double poll = master_poll / 5;
    CtrlSender ctrl(comm, master);
    std::int64_t held = 0, peak = 0;
    auto hold = [&](std::int64_t blocks) {
        held += blocks;
        peak = std::max(peak, held);
    };
    auto all_done = [](std::vector<Request>& rs) {
        bool ok = true;
        for (auto& r : rs) ok = r.test() && ok;
        return ok;
    };
    for (;;) {
        std::int64_t task[6] = {};
        Request rt = comm.irecv(task, 6, master, kTagTask);
        {
            Span w(Kind::Wait, "wait task");
            poll_until(
                [&] {
                    ctrl.progress();
                    return rt.test();
                },
                poll);
        }
        if (task[0] < 0) break;
        const index_t rows = task[0], cols = task[1], k = task[2], kd = task[3], q = task[5];
        const int nbuf = static_cast<int>(task[4]);
        const index_t rb = nblocks(rows, q), cb = nblocks(cols, q), nsteps = ceil_div(k, kd),
                      kbmax = nblocks(kd, q);
        const index_t slot = q * q;
        auto br = [&](index_t i) { return bsize(rows, q, i); };
        auto bc = [&](index_t j) { return bsize(cols, q, j); };

        Buffer<T> cbuf(rb * cb * slot);
        std::vector<Buffer<T>> sbuf;
        for (int b = 0; b < nbuf; ++b) sbuf.emplace_back((kbmax * cb + rb * kbmax) * slot);
        auto cblk = [&](index_t i, index_t j) { return cbuf.data() + (i + j * rb) * slot; };
        auto bblk = [&](int b, index_t kk, index_t j) {
            return sbuf[b].data() + (kk + j * kbmax) * slot;
        };
        auto ablk = [&](int b, index_t i, index_t kk) {
            return sbuf[b].data() + (kbmax * cb + i + kk * rb) * slot;
        };
        auto len_of = [&](index_t s) { return std::min(kd, k - s * kd); };

        std::vector<Request> creq;
        for (index_t j = 0; j < cb; ++j)
            for (index_t i = 0; i < rb; ++i)
                creq.push_back(comm.irecv(cblk(i, j), br(i) * bc(j), master, kTagC));
        hold(rb * cb);
        std::vector<std::vector<Request>> sreq(nbuf);
        auto post_step = [&](index_t s) {
            const int b = static_cast<int>(s % nbuf);
            const index_t len = len_of(s), kb = nblocks(len, q);
            sreq[b].clear();
            for (index_t j = 0; j < cb; ++j)
                for (index_t kk = 0; kk < kb; ++kk)
                    sreq[b].push_back(
                        comm.irecv(bblk(b, kk, j), bsize(len, q, kk) * bc(j), master, kTagStep));
            for (index_t kk = 0; kk < kb; ++kk)
                for (index_t i = 0; i < rb; ++i)
                    sreq[b].push_back(
                        comm.irecv(ablk(b, i, kk), br(i) * bsize(len, q, kk), master, kTagStep));
            hold(kb * (rb + cb));
        };
        const index_t first = std::min<index_t>(nbuf, nsteps);
        for (index_t s = 0; s < first; ++s) post_step(s);
        ctrl.send(kReadyC);
        for (index_t s = 0; s < first; ++s) ctrl.send(kReadyStep);
        {
            Span w(Kind::Wait, "wait C");
            poll_until(
                [&] {
                    ctrl.progress();
                    return all_done(creq);
                },
                poll);
        }

        for (index_t s = 0; s < nsteps; ++s) {
            const int b = static_cast<int>(s % nbuf);
            const index_t len = len_of(s), kb = nblocks(len, q);
            {
                Span w(Kind::Wait, "wait step");
                poll_until(
                    [&] {
                        ctrl.progress();
                        return all_done(sreq[b]);
                    },
                    poll);
            }
            // Multiply block by block; between blocks, drive MPI so that the next step keeps
            // arriving (its receives are posted) and the control messages leave.
            auto progress = [&] {
                ctrl.progress();
                if (nbuf > 1) all_done(sreq[(b + 1) % nbuf]);
            };
            for (index_t kk = 0; kk < kb; ++kk)
                for (index_t j = 0; j < cb; ++j)
                    for (index_t i = 0; i < rb; ++i) {
                        Span g(Kind::Gemm, slowdown > 1 ? "gemm (and emulated slowdown)" : "gemm");
                        const double t0 = now_s();
                        const index_t bk = bsize(len, q, kk);
                        kernels::gemm<T>(Op::N, Op::N, br(i), bc(j), bk, T(1), ablk(b, i, kk),
                                         br(i), bblk(b, kk, j), bk, T(1), cblk(i, j), br(i));
                        const double t1 = now_s();
                        progress();
                        if (slowdown > 1) {  // idle (slowdown - 1) times as long, still driving MPI
                            const double until = t1 + (slowdown - 1) * (t1 - t0);
                            poll_until(
                                [&] {
                                    progress();
                                    return now_s() >= until;
                                },
                                poll);
                        }
                    }
            hold(-kb * (rb + cb));
            if (s + nbuf < nsteps) {
                post_step(s + nbuf);
                ctrl.send(kReadyStep);
            }
        }
        ctrl.send(kReadyResult);
        std::vector<Request> rres;
        for (index_t j = 0; j < cb; ++j)
            for (index_t i = 0; i < rb; ++i)
                rres.push_back(comm.isend(cblk(i, j), br(i) * bc(j), master, kTagResult));
        {
            Span w(Kind::Transfer, "send result");
            poll_until(
                [&] {
                    ctrl.progress();
                    return all_done(rres);
                },
                poll);
        }
        hold(-rb * cb);
    }
    ctrl.send(kDone + 16 * peak);
    poll_until(
        [&] {
            ctrl.progress();
            return ctrl.empty();
        },
        poll);
    return peak;
}

#define CALA_MW_WORKER_INST(T) \
    template std::int64_t run_worker<T>(const Comm&, int, double, double);
CALA_FOR_EACH_TYPE(CALA_MW_WORKER_INST)

}  // namespace cala::mw::detail

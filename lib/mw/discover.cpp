// Platform discovery as in Section 6.2 of the paper (medians of block transfers and block
// products), measured in the conditions of a run: every worker multiplies q x q blocks without
// pause while the master streams blocks to one worker at a time into the two receives that
// worker keeps posted. w_i: median of the worker's block products. c_i: median over `reps`
// samples, each the mean of 4 consecutive block transfers (a transfer takes one or two poll
// intervals, depending on where the worker is in its block product: a bimodal time whose mean
// the model needs). Emulated slowdowns apply, so they show in c_i and w_i. Also the choice of q
// from the BLAS rate.

#include <chrono>

#include "core/workspace.hpp"
#include "mw/runtime.hpp"
#include "kernels/blas.hpp"

namespace cala::mw::detail {

namespace {

template <class T>
void fill(Buffer<T>& x) {
    for (std::int64_t i = 0; i < x.size(); ++i)
        x[i] = T(static_cast<real_t<T>>(1.0 / (1 + i % 97)));
}

// Seconds of one block product C += A·B (q x q), slowed down by f as in the run.
template <class T>
double block_product_s(index_t q, Buffer<T>& a, Buffer<T>& b, Buffer<T>& c, double f) {
    const auto t0 = std::chrono::steady_clock::now();
    kernels::gemm<T>(Op::N, Op::N, q, q, q, T(1), a.data(), q, b.data(), q, T(1), c.data(), q);
    if (f > 1)
        nap((f - 1) * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

template <class T>
index_t choose_block_size(index_t max_dim) {
    std::vector<index_t> qs;
    for (index_t q : {32, 48, 64, 96, 128, 192, 256})
        if (q == 32 || q <= max_dim) qs.push_back(q);
    std::vector<double> rate;
    for (index_t q : qs) {
        Buffer<T> a(q * q), b(q * q), c(q * q);
        fill(a), fill(b), fill(c);
        block_product_s(q, a, b, c, 1);
        std::vector<double> t;
        for (int r = 0; r < 5; ++r) t.push_back(block_product_s(q, a, b, c, 1));
        rate.push_back(static_cast<double>(q * q * q) / median(t));
    }
    const double best = *std::max_element(rate.begin(), rate.end());
    for (std::size_t i = 0; i < qs.size(); ++i)
        if (rate[i] >= 0.85 * best) return qs[i];
    return qs.back();
}

template <class T>
Platform discover(const Comm& comm, int master, index_t q,
                  const std::vector<std::int64_t>& m_blocks, const Emulation& emu, double poll,
                  int reps) {
    const int np = comm.size() - 1;
    const std::int64_t burst = 4, blocks = reps * burst;
    Platform p{q, std::vector<Worker>(np)};
    if (comm.rank() == master) {
        std::vector<std::int64_t> go(3 * np), stop(np, 0);
        std::vector<double> w(np);
        std::vector<Request> rs;
        for (int i = 0; i < np; ++i) {
            go[3 * i] = q;
            go[3 * i + 1] = blocks;
            go[3 * i + 2] = m_blocks[i];
            rs.push_back(comm.isend(&go[3 * i], 3, rank_of(i, master), kTagProbe));
        }
        // Blocks are copied out of a strided matrix first, as the run copies them out of A, B, C.
        Buffer<T> src(4 * q * q), blk(q * q);
        fill(src);
        for (int i = 0; i < np; ++i) {
            // A stream of blocks into the two receives the worker keeps posted, as in a run.
            const double f = emu.link_slowdown.empty() ? 1.0 : emu.link_slowdown[i];
            std::vector<double> t;
            double sum = 0;
            for (std::int64_t r = 0; r < blocks; ++r) {
                std::int64_t ready = 0;
                std::vector<Request> x;
                x.push_back(comm.irecv(&ready, 1, rank_of(i, master), kTagCtrl));
                wait_polling(x, poll);
                const double t0 = now_s();
                kernels::copy<T>(Op::N, q, q, src.data() + (r % 2) * q, 2 * q, blk.data(), q);
                x.clear();
                x.push_back(comm.isend(blk.data(), q * q, rank_of(i, master), kTagProbe));
                wait_polling(x, poll);
                const double dt = now_s() - t0;
                nap((f - 1) * dt);
                sum += f * dt;
                if ((r + 1) % burst == 0) {
                    t.push_back(sum / burst);
                    sum = 0;
                }
            }
            p.workers[i].c = median(t);
            p.workers[i].m = m_blocks[i];
        }
        for (int i = 0; i < np; ++i) {
            rs.push_back(comm.isend(&stop[i], 1, rank_of(i, master), kTagProbe));
            rs.push_back(comm.irecv(&w[i], 1, rank_of(i, master), kTagProbeReply));
        }
        wait_polling(rs, poll);
        for (int i = 0; i < np; ++i) p.workers[i].w = w[i];
    } else {
        // Multiply blocks without pause, as in a run, until the master says stop; meanwhile
        // receive the master's stream of blocks, two receives posted at a time.
        const int me = worker_of(comm.rank(), master);
        const double f = emu.compute_slowdown.empty() ? 1.0 : emu.compute_slowdown[me];
        poll /= 5;  // as in run_worker
        std::int64_t go[3] = {}, stop = 0;
        std::vector<Request> rs;
        rs.push_back(comm.irecv(go, 3, master, kTagProbe));
        wait_polling(rs, poll);
        // The products update, in turn, the mu^2 blocks of C this worker would hold in a run
        // (its memory's maximum re-use layout), so that C comes from where it would come from.
        const std::int64_t nc = std::max<std::int64_t>(1, mu_of(go[2]) * mu_of(go[2]));
        Buffer<T> a(q * q), b(q * q), c(nc * q * q), in(2 * q * q);
        fill(a), fill(b), fill(c);
        CtrlSender ctrl(comm, master);
        Request in_req[2];
        std::int64_t posted = 0, arrived = 0;
        auto post = [&](int slot) {
            in_req[slot] = comm.irecv(in.data() + slot * q * q, q * q, master, kTagProbe);
            ctrl.send(kReadyStep);
            ++posted;
        };
        for (int slot = 0; slot < 2 && posted < go[1]; ++slot) post(slot);
        Request stop_req;
        bool stopping = false;
        auto progress = [&] {
            ctrl.progress();
            for (int slot = 0; slot < 2; ++slot)
                if (!in_req[slot].done() && in_req[slot].test()) {
                    ++arrived;
                    if (posted < go[1]) post(slot);
                }
            if (arrived == go[1] &&
                !stopping) {  // the stream is over; STOP comes after the others'
                stop_req = comm.irecv(&stop, 1, master, kTagProbe);
                stopping = true;
            }
            return stopping && stop_req.test();
        };
        block_product_s(q, a, b, c, 1);  // warm-up
        std::vector<double> t;
        for (std::int64_t j = 0;; j = (j + 1) % nc) {
            const auto t0 = std::chrono::steady_clock::now();
            kernels::gemm<T>(Op::N, Op::N, q, q, q, T(1), a.data(), q, b.data(), q, T(1),
                             c.data() + j * q * q, q);
            const double d =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            bool done = progress();
            if (f > 1) {
                const double until = now_s() + (f - 1) * d;
                poll_until(
                    [&] {
                        done = progress() || done;
                        return now_s() >= until;
                    },
                    poll);
            }
            t.push_back(f * d);
            if (done) break;
        }
        const double w = median(t);
        rs.clear();
        rs.push_back(comm.isend(&w, 1, master, kTagProbeReply));
        wait_polling(rs, poll);
        poll_until(
            [&] {
                ctrl.progress();
                return ctrl.empty();
            },
            poll);
    }
    return p;
}

#define CALA_MW_DISCOVER_INST(T)                                                               \
    template index_t choose_block_size<T>(index_t);                                            \
    template Platform discover<T>(const Comm&, int, index_t, const std::vector<std::int64_t>&, \
                                  const Emulation&, double, int);
CALA_FOR_EACH_TYPE(CALA_MW_DISCOVER_INST)

}  // namespace cala::mw::detail

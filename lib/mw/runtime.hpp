#pragma once
// Internal: what the real run of mw::gemm needs besides the plan. The message protocol between
// master and workers, waiting without spinning, control messages.
//
// Messages (tags on the duplicated communicator; control words are std::int64_t):
//   master -> worker  TASK    6 words {rows, cols, k, kd, nbuf, q}: the next C chunk (rows < 0: STOP)
//   master -> worker  C       one message per q x q block of the chunk (block-column order)
//   master -> worker  STEP    per step: the B blocks (kd/q x cols/q, block-column order), then
//                             the A blocks (rows/q x kd/q, block-column order)
//   worker -> master  CTRL    1 word: READY_C (receives of the C blocks posted), READY_STEP (the
//                             receives of one step posted), READY_RESULT (C computed),
//                             DONE + 16·peak (the most blocks held)
//   worker -> master  RESULT  one message per C block
// The master sends a block only into a receive the worker has announced as posted, so no data
// waits in MPI's unexpected queue and the worker's memory holds exactly what it counts.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "cala/comm.hpp"
#include "cala/mw.hpp"
#include "core/workspace.hpp"
#include "mw/plan.hpp"

namespace cala::mw::detail {

using cala::detail::Buffer;

enum Tag : int {
    kTagTask = 7101,
    kTagCtrl,
    kTagC,
    kTagStep,
    kTagResult,
    kTagProbe,
    kTagProbeReply
};
enum Ctrl : std::int64_t { kReadyC = 1, kReadyStep = 2, kReadyResult = 3, kDone = 4 };

/// Sleeps about `seconds` (nanosleep; the kernel's timer slack, 50 us by default, adds to it).
void nap(double seconds);
/// Wall-clock seconds (MPI_Wtime).
double now_s();

/// Polls `done` (which should drive MPI progress, e.g. Request::test) and naps `interval`
/// between polls; interval 0 spins.
template <class F>
void poll_until(F&& done, double interval) {
    while (!done())
        if (interval > 0) nap(interval);
}

/// Waits for every request of `rs` by polling (see poll_until).
void wait_polling(std::vector<Request>& rs, double interval);

/// Median of a small sample (mean of the two middle values for an even count).
double median(std::vector<double> v);

/// Sends 1-word control messages and keeps them until MPI is done with them.
class CtrlSender {
public:
    CtrlSender(const Comm& comm, int dest) : comm_(comm), dest_(dest) {}
    void send(std::int64_t v);
    void progress();  ///< drops the finished sends
    bool empty() const { return live_.empty(); }

private:
    struct Msg {
        std::unique_ptr<std::int64_t> v;
        Request r;
    };
    const Comm& comm_;
    int dest_;
    std::vector<Msg> live_;
};

/// The worker side of a product: serves TASKs until STOP. Returns its peak blocks held.
template <class T>
std::int64_t run_worker(const Comm& comm, int master, double compute_slowdown, double poll);

/// The master side: executes `plan`; fills the run fields of `rep` (makespan, port, peaks).
template <class T>
void run_master(const Comm& comm, const Plan& plan, const Dims& d, const T* a, index_t lda,
                const T* b, index_t ldb, T* c, index_t ldc,
                const std::vector<double>& link_slowdown, double poll, Report& rep);

/// Platform discovery (collective over comm): `reps` block transfers and block products per
/// worker, medians; significant on the master. Workers apply their compute slowdown, the master
/// the link slowdowns.
template <class T>
Platform discover(const Comm& comm, int master, index_t q,
                  const std::vector<std::int64_t>& m_blocks, const Emulation& emu, double poll,
                  int reps);

/// The block size whose block product reaches 85% of the best rate among 32..256 (local).
template <class T>
index_t choose_block_size(index_t max_dim);

/// Blocks of q along an extent, and the size of block i.
inline index_t nblocks(index_t extent, index_t q) { return ceil_div(extent, q); }
inline index_t bsize(index_t extent, index_t q, index_t i) { return std::min(q, extent - i * q); }

/// Rank of worker w, and worker index of a rank.
inline int rank_of(int w, int master) { return w < master ? w : w + 1; }
inline int worker_of(int rank, int master) { return rank < master ? rank : rank - 1; }

}  // namespace cala::mw::detail

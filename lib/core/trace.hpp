#pragma once
// Internal: a recorder of timed spans (kernels, waits, transfers) for Chrome/Perfetto traces.
//
// Off by default; then a span costs one relaxed atomic load. On (between start() and stop()),
// each thread appends to a buffer of its own (no lock after the thread's first span), so spans may
// be recorded from any thread, OpenMP tasks included. write() gathers every rank's spans to rank 0,
// which writes one file in the Trace Event format:
//
//   {"traceEvents":[{"name":"gemm","cat":"gemm","ph":"X","ts":1234.567,"dur":89.012,"pid":0,"tid":1},
//                   ...],
//    "displayTimeUnit":"ms"}
//
// pid = rank in the communicator given to start(), tid = the recording thread, numbered 0, 1, ...
// on each rank in the order of their first span since start(); ts and dur in microseconds from
// start() (the ranks' clocks are aligned by the barrier in start()). cat is the kind (Kind below).
// Spans of one thread never overlap: instrument leaf operations only (a kernel call, a wait), not
// code that may run other spans on the same thread (an OpenMP taskwait).
//
// Kinds: potrf (a diagonal tile's factorization), trsm (a panel solve, trsm or trmm by the
// inverse), gemm and herk (updates), panel (other work of a panel: its inverse), bcast (a blocking
// broadcast or reduction inside a panel), wait (waiting for messages: a panel's broadcasts, the
// next step of the master-worker product), transfer (a master-worker block transfer).

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <string>

namespace cala::detail::trace {

enum class Kind : std::uint8_t { Potrf, Trsm, Gemm, Herk, Panel, Bcast, Wait, Transfer };

/// "potrf", "trsm", ...: the cat of the kind.
const char* kind_name(Kind k) noexcept;

extern std::atomic<bool> g_on;

/// Tracing is on (a relaxed load: the cost of a span when it is off).
inline bool on() noexcept { return g_on.load(std::memory_order_relaxed); }

/// The trace clock (steady), nanoseconds.
std::int64_t now_ns() noexcept;

/// Records a span [t0, t1] (now_ns() values) of the calling thread. `name` must outlive write()
/// (a string literal). No-op when tracing is off.
void record(Kind kind, const char* name, std::int64_t t0, std::int64_t t1) noexcept;

/// Puts the calling thread's spans since start() on track (tid) `tid` instead of the next free
/// number (the node runtime: one track per unit). No-op when tracing is off.
void set_thread_track(int tid) noexcept;

/// A span from construction to destruction.
class Span {
public:
    Span(Kind kind, const char* name) noexcept : on_(on()), kind_(kind), name_(name) {
        if (on_) t0_ = now_ns();
    }
    ~Span() {
        if (on_) record(kind_, name_, t0_, now_ns());
    }
    Span(const Span&) = delete;
    Span& operator=(const Span&) = delete;

private:
    bool on_;
    Kind kind_;
    const char* name_;
    std::int64_t t0_ = 0;
};

/// Collective over comm: drops what was recorded, aligns the clocks (barrier), turns tracing on.
/// No span may be in progress on any thread.
void start(MPI_Comm comm);

/// Turns tracing off (local; what was recorded stays for write()).
void stop() noexcept;

/// Collective over comm (the one given to start()): every rank's spans to rank 0, which writes
/// them to `path`. Throws cala::Error on every rank if rank 0 cannot write the file.
void write(MPI_Comm comm, const std::string& path);

/// This rank's spans as Trace Event objects, comma-separated (no brackets); pid = `pid`.
std::string local_events_json(int pid);

}  // namespace cala::detail::trace

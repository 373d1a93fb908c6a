#pragma once
// cala::Comm: MPI made safe and counted.
//
// Traffic convention (the cost model uses the same one):
//   * a "word" is one element of the payload type (one double, one complex<float>, ...);
//   * counts are logical, per operation, not per internal hop of the MPI implementation:
//       ibcast of w words over s > 1 ranks: the root sends 1 message of w words,
//                                            every other rank receives 1 message of w words;
//       ireduce of w words over s > 1 ranks: every non-root sends 1 message of w words,
//                                            the root receives 1 message of w words;
//       iallreduce of w words over s > 1:    every rank sends 1 and receives 1 message of w words;
//       isend / irecv of w words to a peer:  1 message of w words sent / received;
//   * an operation over a single rank, a message to oneself, or of zero words counts nothing;
//   * the words and messages a rank "moved" are those it sent plus those it received.
// Control traffic (argument agreement before a collective) is counted apart, in `control_msgs`.

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cala/error.hpp"
#include "cala/types.hpp"

namespace cala {

/// Per-rank traffic counters (this process; all of cala's communicators add to one set).
struct Traffic {
    std::int64_t msgs_sent = 0, msgs_recv = 0;
    std::int64_t words_sent = 0, words_recv = 0;
    std::int64_t bytes_sent = 0, bytes_recv = 0;
    std::int64_t control_msgs = 0;

    std::int64_t words() const noexcept { return words_sent + words_recv; }
    std::int64_t msgs() const noexcept { return msgs_sent + msgs_recv; }
    Traffic& operator+=(const Traffic& o) noexcept;
    friend Traffic operator-(Traffic a, const Traffic& b) noexcept;
    friend bool operator==(const Traffic&, const Traffic&) = default;
};

/// This rank's counters since the last reset.
Traffic traffic() noexcept;
void reset_traffic() noexcept;

/// MPI handles cala created on this rank and has not released yet: communicators it owns
/// (Comm::adopt, dup, split; freed with the last owner), pending requests (Request objects not
/// yet completed) and derived datatypes. Zero once every cala object is gone and no cache
/// holds one; a leak test compares these before and after a run.
struct Handles {
    std::int64_t comms = 0, requests = 0, datatypes = 0;
    friend bool operator==(const Handles&, const Handles&) = default;
};
Handles live_handles() noexcept;

/// A pending non-blocking operation. Move-only; the destructor waits (and never throws).
///
/// It holds one or two MPI requests and, for a reduction done over point-to-point messages, a
/// local step run once both completed (adding the received partial sum; it owns the buffer).
class Request {
public:
    Request() = default;
    explicit Request(MPI_Request r);
    Request(MPI_Request a, MPI_Request b, std::function<void()> then);
    Request(Request&& o) noexcept
        : r_(std::exchange(o.r_, MPI_REQUEST_NULL)), r2_(std::exchange(o.r2_, MPI_REQUEST_NULL)),
          then_(std::exchange(o.then_, nullptr)) {}
    Request& operator=(Request&& o) noexcept;
    Request(const Request&) = delete;
    Request& operator=(const Request&) = delete;
    ~Request();

    void wait();
    bool test();  ///< true once complete; drives MPI progress
    bool done() const noexcept { return r_ == MPI_REQUEST_NULL && r2_ == MPI_REQUEST_NULL && !then_; }

private:
    void finish() noexcept;  ///< both MPI requests done: the local step, once
    MPI_Request r_ = MPI_REQUEST_NULL, r2_ = MPI_REQUEST_NULL;
    std::function<void()> then_;
};

void wait_all(std::span<Request> rs);
/// Drive progress on every pending request (call between chunks of local work).
void test_all(std::span<Request> rs);

/// An MPI communicator, owned or borrowed.
///
/// Every collective method is collective over this communicator: all ranks call it in the
/// same order with matching counts.
class Comm {
public:
    static Comm borrow(MPI_Comm c);  ///< never freed by cala
    static Comm adopt(MPI_Comm c);   ///< MPI_Comm_free in ~Comm()
    Comm() = default;
    Comm(Comm&& o) noexcept;
    Comm& operator=(Comm&& o) noexcept;
    Comm(const Comm&) = delete;
    Comm& operator=(const Comm&) = delete;
    ~Comm();

    Comm dup() const;                      ///< collective; cala always works on a duplicate
    Comm split(int color, int key) const;  ///< collective
    int rank() const noexcept { return rank_; }
    int size() const noexcept { return size_; }
    MPI_Comm get() const noexcept { return comm_; }

    void barrier() const;
    /// Whether every rank of this communicator runs on one node (MPI_COMM_TYPE_SHARED), so that
    /// they can map one another's memory. Collective the first time it is asked for a
    /// communicator (every rank asks), then cached on it.
    bool shares_node() const;
    template <class T> Request ibcast(T* buf, std::int64_t count, int root) const;
    /// Sum of `send` over the ranks into `recv` on root. At the root, send == recv is in place.
    template <class T> Request ireduce_sum(const T* send, T* recv, std::int64_t count, int root) const;
    /// In-place sum over all ranks.
    template <class T> Request iallreduce_sum(T* buf, std::int64_t count) const;
    template <class T> Request isend(const T* buf, std::int64_t count, int dest, int tag) const;
    template <class T> Request irecv(T* buf, std::int64_t count, int src, int tag) const;

    /// Argument agreement: collective, uncounted except in control_msgs. Every rank passes its
    /// local verdict (empty when fine) and a fingerprint of the arguments that must agree; if any
    /// rank failed, or fingerprints differ, every rank throws cala::Error with the message of the
    /// lowest failing rank.
    void agree(const std::string& local_error, std::uint64_t fingerprint, const char* what) const;

private:
    Comm(MPI_Comm c, bool owned);
    void release() noexcept;
    MPI_Comm comm_ = MPI_COMM_NULL;
    bool owned_ = false;
    int rank_ = 0, size_ = 0;
};

/// Thread level MPI provides (MPI_Init_thread must have been called).
int mpi_thread_level();

}  // namespace cala

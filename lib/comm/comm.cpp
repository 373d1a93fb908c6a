#include "cala/comm.hpp"

#include <algorithm>
#include <climits>
#include <complex>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "comm/mpi_type.hpp"
#include "comm/shared.hpp"
#include "comm/traffic.hpp"
#include "core/check.hpp"

namespace cala {

namespace {
// Element counts of the counted calls. MPI 4 (MPICH 4) has the large-count calls (MPI_Ibcast_c,
// ...); an MPI 3.1 library (Open MPI 4) has only the int ones, and a message of 2^31 elements or
// more is then a clear error rather than a wrapped count.
#if MPI_VERSION >= 4
#define CALA_MPI_LARGE(fn) fn##_c
MPI_Count mpi_count(std::int64_t n, const char*) { return n; }
#else
#define CALA_MPI_LARGE(fn) fn
int mpi_count(std::int64_t n, const char* call) {
    if (n > INT_MAX)
        throw Error(std::string(call) + ": a message of " + std::to_string(n) +
                    " elements; this MPI library (MPI " + std::to_string(MPI_VERSION) + "." +
                    std::to_string(MPI_SUBVERSION) + ") has no large-count calls, at most " +
                    std::to_string(INT_MAX) + " elements per message");
    return static_cast<int>(n);
}
#endif
}  // namespace

// ---- Request ----------------------------------------------------------------------------

// Every non-null MPI_Request a Request holds is counted live (cala::live_handles) until MPI
// completes it (MPI_Wait, or an MPI_Test that reports completion, sets it to MPI_REQUEST_NULL).

Request::Request(MPI_Request r) : r_(r) {
    if (r_ != MPI_REQUEST_NULL) detail::count_request(+1);
}

Request::Request(MPI_Request a, MPI_Request b, std::function<void()> then) : r_(a), r2_(b), then_(std::move(then)) {
    if (r_ != MPI_REQUEST_NULL) detail::count_request(+1);
    if (r2_ != MPI_REQUEST_NULL) detail::count_request(+1);
}

namespace {
void wait_quietly(MPI_Request& r) noexcept {
    if (r == MPI_REQUEST_NULL) return;
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    detail::count_request(-1);
}
}  // namespace

void Request::finish() noexcept {
    if (r_ == MPI_REQUEST_NULL && r2_ == MPI_REQUEST_NULL && then_) std::exchange(then_, nullptr)();
}

Request& Request::operator=(Request&& o) noexcept {
    if (this != &o) {
        wait_quietly(r_);
        wait_quietly(r2_);
        finish();
        r_ = std::exchange(o.r_, MPI_REQUEST_NULL);
        r2_ = std::exchange(o.r2_, MPI_REQUEST_NULL);
        then_ = std::exchange(o.then_, nullptr);
    }
    return *this;
}

Request::~Request() {
    // A buffer may still be in use by MPI: finish the operation, never throw.
    wait_quietly(r_);
    wait_quietly(r2_);
    finish();
}

void Request::wait() {
    for (MPI_Request* r : {&r_, &r2_}) {
        if (*r == MPI_REQUEST_NULL) continue;
        CALA_CHECK_MPI(MPI_Wait(r, MPI_STATUS_IGNORE));
        detail::count_request(-1);
    }
    finish();
}

bool Request::test() {
    for (MPI_Request* r : {&r_, &r2_}) {
        if (*r == MPI_REQUEST_NULL) continue;
        int flag = 0;
        CALA_CHECK_MPI(MPI_Test(r, &flag, MPI_STATUS_IGNORE));
        if (flag != 0) detail::count_request(-1);
    }
    finish();
    return done();
}

void wait_all(std::span<Request> rs) {
    for (auto& r : rs) r.wait();
}

void test_all(std::span<Request> rs) {
    for (auto& r : rs) r.test();
}

// ---- Comm -------------------------------------------------------------------------------

Comm::Comm(MPI_Comm c, bool owned) : comm_(c), owned_(owned) {
    if (c != MPI_COMM_NULL) {
        CALA_CHECK_MPI(MPI_Comm_rank(c, &rank_));
        CALA_CHECK_MPI(MPI_Comm_size(c, &size_));
        if (owned) detail::count_comm(+1);  // live until release()
    }
}

Comm Comm::borrow(MPI_Comm c) { return Comm(c, false); }
Comm Comm::adopt(MPI_Comm c) { return Comm(c, true); }

Comm::Comm(Comm&& o) noexcept
    : comm_(std::exchange(o.comm_, MPI_COMM_NULL)), owned_(std::exchange(o.owned_, false)),
      rank_(o.rank_), size_(o.size_) {}

Comm& Comm::operator=(Comm&& o) noexcept {
    if (this != &o) {
        release();
        comm_ = std::exchange(o.comm_, MPI_COMM_NULL);
        owned_ = std::exchange(o.owned_, false);
        rank_ = o.rank_;
        size_ = o.size_;
    }
    return *this;
}

Comm::~Comm() { release(); }

void Comm::release() noexcept {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owned_ && comm_ != MPI_COMM_NULL) {
        if (!finalized) MPI_Comm_free(&comm_);
        detail::count_comm(-1);
    }
    comm_ = MPI_COMM_NULL;
    owned_ = false;
}

Comm Comm::dup() const {
    MPI_Comm c = MPI_COMM_NULL;
    CALA_CHECK_MPI(MPI_Comm_dup(comm_, &c));
    return adopt(c);
}

Comm Comm::split(int color, int key) const {
    MPI_Comm c = MPI_COMM_NULL;
    CALA_CHECK_MPI(MPI_Comm_split(comm_, color, key, &c));
    return adopt(c);
}

void Comm::barrier() const { CALA_CHECK_MPI(MPI_Barrier(comm_)); }

bool Comm::shares_node() const { return detail::on_one_node(*this); }

template <class T>
Request Comm::ibcast(T* buf, std::int64_t count, int root) const {
    if (size_ == 1 || count == 0) return {};
    MPI_Request r;
    CALA_CHECK_MPI(CALA_MPI_LARGE(MPI_Ibcast)(buf, mpi_count(count, "MPI_Ibcast"),
                   detail::mpi_type<T>(), root, comm_, &r));
    if (rank_ == root) detail::count_sent(count, count * std::int64_t(sizeof(T)));
    else detail::count_recv(count, count * std::int64_t(sizeof(T)));
    return Request(r);
}

// On two ranks a sum is one message (each way, for allreduce) and a local addition. MPICH 4.0's
// MPI_Ireduce and MPI_Iallreduce on one node took 27 and 14 ms for 3.9 MB on a Zen 5 machine,
// the messages and the addition 0.4 ms (docs/performance.md, "Stop 40"); a 2.5D or 3D
// algorithm with two layers reduces a panel or a C block at every step. The words and messages
// counted are the collective's, as before. kSumTag is used by nothing else.
namespace {
constexpr int kSumTag = 32001;

template <class T>
std::function<void()> add_on_arrival(std::shared_ptr<std::vector<T>> got, T* into) {
    return [got = std::move(got), into] {
        const T* g = got->data();
        const std::size_t n = got->size();
        for (std::size_t i = 0; i < n; ++i) into[i] += g[i];
    };
}
}  // namespace

template <class T>
Request Comm::ireduce_sum(const T* send, T* recv, std::int64_t count, int root) const {
    if (count == 0) return {};
    if (size_ == 1) {
        if (send != recv) std::copy(send, send + count, recv);
        return {};
    }
    MPI_Request r;
    if (size_ == 2) {
        const int other = 1 - rank_;
        if (rank_ == root) {
            if (send != recv) std::copy(send, send + count, recv);
            auto got = std::make_shared<std::vector<T>>(static_cast<std::size_t>(count));
            CALA_CHECK_MPI(CALA_MPI_LARGE(MPI_Irecv)(got->data(), mpi_count(count, "MPI_Irecv"), detail::mpi_type<T>(),
                                                    other, kSumTag, comm_, &r));
            detail::count_recv(count, count * std::int64_t(sizeof(T)));
            return Request(r, MPI_REQUEST_NULL, add_on_arrival(std::move(got), recv));
        }
        CALA_CHECK_MPI(CALA_MPI_LARGE(MPI_Isend)(send, mpi_count(count, "MPI_Isend"), detail::mpi_type<T>(), root,
                                                kSumTag, comm_, &r));
        detail::count_sent(count, count * std::int64_t(sizeof(T)));
        return Request(r);
    }
    const void* s = (rank_ == root && send == recv) ? MPI_IN_PLACE : static_cast<const void*>(send);
    CALA_CHECK_MPI(CALA_MPI_LARGE(MPI_Ireduce)(s, recv, mpi_count(count, "MPI_Ireduce"),
                   detail::mpi_type<T>(), MPI_SUM, root, comm_, &r));
    if (rank_ == root) detail::count_recv(count, count * std::int64_t(sizeof(T)));
    else detail::count_sent(count, count * std::int64_t(sizeof(T)));
    return Request(r);
}

template <class T>
Request Comm::iallreduce_sum(T* buf, std::int64_t count) const {
    if (size_ == 1 || count == 0) return {};
    MPI_Request r;
    if (size_ == 2) {
        // Both ranks add the same two numbers (in either order: the same bits).
        const int other = 1 - rank_;
        auto got = std::make_shared<std::vector<T>>(static_cast<std::size_t>(count));
        MPI_Request s;
        CALA_CHECK_MPI(CALA_MPI_LARGE(MPI_Irecv)(got->data(), mpi_count(count, "MPI_Irecv"), detail::mpi_type<T>(),
                                                other, kSumTag, comm_, &r));
        CALA_CHECK_MPI(CALA_MPI_LARGE(MPI_Isend)(buf, mpi_count(count, "MPI_Isend"), detail::mpi_type<T>(), other,
                                                kSumTag, comm_, &s));
        detail::count_sent(count, count * std::int64_t(sizeof(T)));
        detail::count_recv(count, count * std::int64_t(sizeof(T)));
        return Request(r, s, add_on_arrival(std::move(got), buf));
    }
    CALA_CHECK_MPI(CALA_MPI_LARGE(MPI_Iallreduce)(MPI_IN_PLACE, buf, mpi_count(count, "MPI_Iallreduce"),
                   detail::mpi_type<T>(), MPI_SUM, comm_, &r));
    detail::count_sent(count, count * std::int64_t(sizeof(T)));
    detail::count_recv(count, count * std::int64_t(sizeof(T)));
    return Request(r);
}

template <class T>
Request Comm::isend(const T* buf, std::int64_t count, int dest, int tag) const {
    MPI_Request r;
    CALA_CHECK_MPI(CALA_MPI_LARGE(MPI_Isend)(buf, mpi_count(count, "MPI_Isend"),
                   detail::mpi_type<T>(), dest, tag, comm_, &r));
    if (dest != rank_) detail::count_sent(count, count * std::int64_t(sizeof(T)));
    return Request(r);
}

template <class T>
Request Comm::irecv(T* buf, std::int64_t count, int src, int tag) const {
    MPI_Request r;
    CALA_CHECK_MPI(CALA_MPI_LARGE(MPI_Irecv)(buf, mpi_count(count, "MPI_Irecv"),
                   detail::mpi_type<T>(), src, tag, comm_, &r));
    if (src != rank_) detail::count_recv(count, count * std::int64_t(sizeof(T)));
    return Request(r);
}

void Comm::agree(const std::string& local_error, std::uint64_t fingerprint, const char* what) const {
    // One allreduce(MAX) of {-first failing rank, -fingerprint, fingerprint}; then, only when
    // something failed, the failing rank broadcasts its message.
    const std::int64_t fp = static_cast<std::int64_t>(fingerprint >> 1);
    std::int64_t v[3] = {-(local_error.empty() ? size_ : rank_), -fp, fp};
    if (size_ > 1) {
        CALA_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_INT64_T, MPI_MAX, comm_));
        detail::count_control();
    }
    const int failing = static_cast<int>(-v[0]);
    if (failing < size_) {
        std::int64_t len = rank_ == failing ? static_cast<std::int64_t>(local_error.size()) : 0;
        std::string msg = local_error;
        if (size_ > 1) {
            CALA_CHECK_MPI(MPI_Bcast(&len, 1, MPI_INT64_T, failing, comm_));
            msg.resize(static_cast<std::size_t>(len));
            CALA_CHECK_MPI(MPI_Bcast(msg.data(), static_cast<int>(len), MPI_CHAR, failing, comm_));
            detail::count_control();
        }
        throw Error(msg);
    }
    if (-v[1] != v[2])
        throw Error(std::string(what) +
                    ": ranks passed different arguments (sizes, layouts, scalars or options)");
}

int mpi_thread_level() {
    int level = MPI_THREAD_SINGLE;
    CALA_CHECK_MPI(MPI_Query_thread(&level));
    return level;
}

#define CALA_COMM_INST(T)                                                                   \
    template Request Comm::ibcast<T>(T*, std::int64_t, int) const;                           \
    template Request Comm::ireduce_sum<T>(const T*, T*, std::int64_t, int) const;            \
    template Request Comm::iallreduce_sum<T>(T*, std::int64_t) const;                        \
    template Request Comm::isend<T>(const T*, std::int64_t, int, int) const;                 \
    template Request Comm::irecv<T>(T*, std::int64_t, int, int) const;
CALA_FOR_EACH_TYPE(CALA_COMM_INST)
CALA_COMM_INST(int)
CALA_COMM_INST(std::int64_t)
CALA_COMM_INST(char)

}  // namespace cala

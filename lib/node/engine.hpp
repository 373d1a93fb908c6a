#pragma once
// Internal: the state of one node runtime run (runtime.hpp) and its two halves:
//   runtime.cpp  the per-unit workers: task lists, prefetch windows (refill), the compute
//                thread (one task at a time, emulated speed), the copy thread, the report;
//   tiles.cpp    where tiles live: each unit's memory as an LRU cache of A, B and C tiles,
//                C moved host -> unit, unit -> unit, unit -> host, and the steal cost.
// One mutex guards all of it; the copies run with it released.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <random>
#include <unordered_map>
#include <vector>

#include "node/runtime.hpp"
#include "node/steal.hpp"

namespace cala::node::detail {

template <class T>
class Engine {
public:
    using Clock = std::chrono::steady_clock;

    Engine(std::span<const Unit> units, const RunConfig& cfg, Op oa, Op ob, index_t m, index_t n, index_t k, T alpha,
           const T* a, index_t lda, const T* b, index_t ldb, T* c, index_t ldc)
        : units_(units), cfg_(cfg), oa_(oa), ob_(ob), m_(m), n_(n), k_(k), t_(cfg.tile), alpha_(alpha), a_(a),
          lda_(lda), b_(b), ldb_(ldb), c_(c), ldc_(ldc), mt_(ceil_div(m, cfg.tile)), nt_(ceil_div(n, cfg.tile)),
          kt_(ceil_div(k, cfg.tile)), us_(units.size()), cloc_(static_cast<std::size_t>(mt_ * nt_), -1),
          cbusy_(static_cast<std::size_t>(mt_ * nt_), 0) {
        const std::int64_t tile_bytes = static_cast<std::int64_t>(sizeof(T)) * t_ * t_;
        for (std::size_t u = 0; u < us_.size(); ++u) {
            us_[u].cap = units[u].dev ? units[u].dev->budget_bytes() / tile_bytes : 0;
            us_[u].rng.seed(cfg.seed + 7919u * static_cast<unsigned>(u));
            us_[u].st.kind = units[u].kind;
            us_[u].st.speed = units[u].speed;
        }
    }

    void run(const std::vector<std::vector<Task>>& lists, NodeReport& rep);

private:
    struct TaskSt {
        index_t i, j, l;
        int planned;
        int prefetched = -1, ran = -1;
        bool ready = false;
        double t0 = 0, t1 = 0;
    };
    struct Entry {
        void* p = nullptr;
        int pins = 0;
        bool ready = false;
        std::uint64_t lru = 0;
    };
    struct UnitSt {
        std::deque<int> pre, fetch;
        std::deque<std::uint64_t> inflight;  // Device::mark of the products issued and not waited for
        std::unordered_map<std::int64_t, Entry> cache;
        std::int64_t cap = 0;
        std::mt19937 rng;
        bool done = false;
        UnitStats st;
    };
    enum Kind : int { KA = 0, KB = 1, KC = 2 };

    static double seconds_since(Clock::time_point t0) {
        return std::chrono::duration<double>(Clock::now() - t0).count();
    }

    template <class F>
    void guarded(F&& f) {
        try {
            f();
        } catch (...) {
            std::lock_guard<std::mutex> lk(mu_);
            if (!err_) err_ = std::current_exception();
            abort_ = true;
            cv_.notify_all();
        }
    }

    index_t rows(index_t i) const { return std::min(t_, m_ - i * t_); }
    index_t cols(index_t j) const { return std::min(t_, n_ - j * t_); }
    index_t depth(index_t l) const { return std::min(t_, k_ - l * t_); }
    std::int64_t key_a(const TaskSt& t) const { return KA + 3 * (t.i + t.l * mt_); }
    std::int64_t key_b(const TaskSt& t) const { return KB + 3 * (t.l + t.j * kt_); }
    std::int64_t key_c(index_t i, index_t j) const { return KC + 3 * (i + j * mt_); }
    std::size_t cidx(const TaskSt& t) const { return static_cast<std::size_t>(t.i + t.j * mt_); }

    // The stored host block of a tile key (column-major, ld of its matrix) as a copy source.
    device::Copy2D host_block(std::int64_t key) const;

    std::int64_t tile_bytes() const { return static_cast<std::int64_t>(sizeof(T)) * t_ * t_; }

    void release_entry(UnitSt& U, Entry& e);

    void hold_link(int u, const char* what, std::int64_t t0ns);
    static Clock::time_point start_of(std::int64_t ns) {
        return Clock::time_point(std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(ns)));
    }

    int pinned(const UnitSt& U) const;

    // After a copy into u's memory: waits only where the link is emulated (tiles.cpp).
    void settle_copy(int u);

    // Makes room for one more tile in u's memory (lock held; may wait and unlock). Victims: the
    // least recently used tile no one pins (a task running here pins its A, B and C; a copy
    // pins its source). A C tile goes back to host memory first, even when a task elsewhere
    // has taken it and waits for room to fetch it: that task then fetches it from the host.
    void make_room(int u, std::unique_lock<std::mutex>& lk);

    // Drops C tile `key` from unit w's memory after a copy out of it (lock held).
    void drop_c(int w, std::int64_t key);

    // C tile `key` at unit w goes back to host memory (lock held; unlocks during the copy).
    void write_back(int w, std::int64_t key, std::unique_lock<std::mutex>& lk);

    // True while a copy out of C tile `key` (held at cloc) is in flight: wait, it ends with the
    // tile in host memory. Copies out of one tile never overlap, so no stale copy of a tile ever
    // lands on the host after a newer one.
    bool copying_out(std::size_t ci, std::int64_t key);

    // Brings C(i, j) of task t to unit u and pins it there (lock held, t's C taken by the caller).
    void bring_c(int u, const TaskSt& t, std::unique_lock<std::mutex>& lk);

    // Cost of task t on unit u: tiles to move (0..3).
    int cost(int u, const TaskSt& t) const;

    // Fills u's prefetch window to two tasks: its own list first, then stealing.
    void refill(int u, std::unique_lock<std::mutex>& lk);

    void compute(int u);

    // u's C tiles back to host memory.
    void flush(int u, std::unique_lock<std::mutex>& lk);

    // Pins A or B tile `key` in u's memory, copying it from the host if it is not there. Pinning
    // a tile no one pins waits until u's pins leave a tile free for the running task's C.
    void fetch_tile(int u, std::int64_t key, std::unique_lock<std::mutex>& lk);

    void copier(int u);

    std::span<const Unit> units_;
    RunConfig cfg_;
    Op oa_, ob_;
    index_t m_, n_, k_, t_;
    T alpha_;
    const T* a_;
    index_t lda_;
    const T* b_;
    index_t ldb_;
    T* c_;
    index_t ldc_;
    index_t mt_, nt_, kt_;
    std::vector<UnitSt> us_;
    std::vector<TaskList> lists_;  // per unit: tasks not yet in a prefetch window (steal.hpp)
    std::vector<int> cloc_;
    std::vector<char> cbusy_;
    std::vector<TaskSt> tasks_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::uint64_t clock_ = 0;
    bool abort_ = false;
    std::exception_ptr err_;
    Clock::time_point start_;
};

}  // namespace cala::node::detail

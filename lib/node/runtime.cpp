// The node runtime (see runtime.hpp): prefetch windows of two tasks, Static / RandSteal /
// EffectiveSteal (seed 4.2.1: cost = tiles to move, 0..3; two passes; never a prefetched task),
// one C tile held by one task at a time, emulated speeds and links.
//
// Worked example, units {cpu, host0} with one C tile each, kt = 2: host0's window takes
// T(0,1,0), T(0,1,1); its copy thread loads A(0,0), B(0,1) (2 tiles in), then A(0,1), B(1,1);
// its compute thread takes T(0,1,0), loads C(0,1) (1 in), computes, then T(0,1,1) (C resident),
// finds its list empty, steals nothing (cpu's last task is in cpu's window), writes C(0,1) back
// (1 out): in = kt·(1 + 1) + 1 = 5, out = 1.

#include "node/runtime.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>

#include "core/check.hpp"
#include "core/trace.hpp"
#include "kernels/blas.hpp"

namespace cala::node::detail {

namespace {

namespace tr = cala::detail::trace;
using Clock = std::chrono::steady_clock;

template <class T>
class Engine {
public:
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

    void run(const std::vector<std::vector<Task>>& lists, NodeReport& rep) {
        for (std::size_t u = 0; u < lists.size(); ++u)
            for (const Task& t : lists[u]) {
                us_[u].list.push_back(static_cast<int>(tasks_.size()));
                tasks_.push_back({t.i, t.j, t.l, t.planned});
            }
        start_ = Clock::now();
        std::vector<std::thread> threads;
        for (std::size_t u = 0; u < us_.size(); ++u) {
            threads.emplace_back([this, u] { guarded([&] { compute(static_cast<int>(u)); }); });
            if (units_[u].dev) threads.emplace_back([this, u] { guarded([&] { copier(static_cast<int>(u)); }); });
        }
        for (auto& th : threads) th.join();
        {
            std::unique_lock<std::mutex> lk(mu_);
            if (!err_)
                for (std::size_t u = 0; u < us_.size(); ++u) flush(static_cast<int>(u), lk);
            for (auto& U : us_)
                for (auto& [key, e] : U.cache) release_entry(U, e);
        }
        if (err_) std::rethrow_exception(err_);
        const double wall = seconds_since(start_);
        rep.seconds = wall;
        rep.units.clear();
        rep.steals = rep.tiles_moved = 0;
        for (auto& U : us_) {
            U.st.idle_s = std::max(0.0, wall - U.st.busy_s);
            rep.units.push_back(U.st);
            rep.steals += U.st.stolen;
            rep.tiles_moved += U.st.tiles_in + U.st.tiles_out;
        }
        rep.tasks.clear();
        if (cfg_.record)
            for (const auto& t : tasks_) rep.tasks.push_back({t.i, t.j, t.l, t.planned, t.prefetched, t.ran, t.t0, t.t1});
    }

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
        std::deque<int> list, pre, fetch;
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
    device::Copy2D host_block(std::int64_t key) const {
        const int kind = static_cast<int>(key % 3);
        const std::int64_t q = key / 3;
        const std::size_t e = sizeof(T);
        if (kind == KA) {
            const index_t i = q % mt_, l = q / mt_;
            if (oa_ == Op::N) return {nullptr, t_, a_ + i * t_ + l * t_ * lda_, lda_, rows(i), depth(l), e};
            return {nullptr, t_, a_ + l * t_ + i * t_ * lda_, lda_, depth(l), rows(i), e};
        }
        if (kind == KB) {
            const index_t l = q % kt_, j = q / kt_;
            if (ob_ == Op::N) return {nullptr, t_, b_ + l * t_ + j * t_ * ldb_, ldb_, depth(l), cols(j), e};
            return {nullptr, t_, b_ + j * t_ + l * t_ * ldb_, ldb_, cols(j), depth(l), e};
        }
        const index_t i = q % mt_, j = q / mt_;
        return {nullptr, t_, c_ + i * t_ + j * t_ * ldc_, ldc_, rows(i), cols(j), e};
    }

    std::int64_t tile_bytes() const { return static_cast<std::int64_t>(sizeof(T)) * t_ * t_; }

    void release_entry(UnitSt& U, Entry& e) {
        const auto u = static_cast<std::size_t>(&U - us_.data());
        units_[u].dev->release(e.p, tile_bytes());
        e.p = nullptr;
    }

    void hold_link(int u, const char* what, std::int64_t t0ns) {
        if (cfg_.link_s > 0)
            std::this_thread::sleep_until(start_of(t0ns) + std::chrono::duration<double>(cfg_.link_s));
        if (tr::on()) tr::record(tr::Kind::Transfer, what, t0ns, tr::now_ns());
        (void)u;
    }
    static Clock::time_point start_of(std::int64_t ns) {
        return Clock::time_point(std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(ns)));
    }

    int pinned(const UnitSt& U) const {
        int p = 0;
        for (const auto& [key, e] : U.cache) p += e.pins > 0;
        return p;
    }

    // Makes room for one more tile in u's memory (lock held; may wait and unlock). Victims: the
    // least recently used tile no one pins (a task running here pins its A, B and C; a copy
    // pins its source). A C tile goes back to host memory first, even when a task elsewhere
    // has taken it and waits for room to fetch it: that task then fetches it from the host.
    void make_room(int u, std::unique_lock<std::mutex>& lk) {
        UnitSt& U = us_[u];
        while (static_cast<std::int64_t>(U.cache.size()) >= U.cap) {
            if (abort_) throw Error("node runtime: aborted");
            std::int64_t victim = -1;
            std::uint64_t best = 0;
            for (const auto& [key, e] : U.cache)
                if (e.pins == 0 && e.ready && (victim < 0 || e.lru < best)) victim = key, best = e.lru;
            if (victim < 0) {
                cv_.wait(lk);
                continue;
            }
            if (victim % 3 != KC) {
                release_entry(U, U.cache[victim]);
                U.cache.erase(victim);
                continue;
            }
            write_back(u, victim, lk);
        }
    }

    // Drops C tile `key` from unit w's memory after a copy out of it (lock held).
    void drop_c(int w, std::int64_t key) {
        UnitSt& W = us_[w];
        auto it = W.cache.find(key);
        if (it == W.cache.end() || --it->second.pins > 0) return;
        release_entry(W, it->second);
        W.cache.erase(it);
        if (cloc_[static_cast<std::size_t>(key / 3)] == w) cloc_[static_cast<std::size_t>(key / 3)] = -1;
    }

    // C tile `key` at unit w goes back to host memory (lock held; unlocks during the copy).
    void write_back(int w, std::int64_t key, std::unique_lock<std::mutex>& lk) {
        UnitSt& W = us_[w];
        Entry& e = W.cache[key];
        ++e.pins;
        const device::Copy2D hb = host_block(key);
        const device::Copy2D back{const_cast<void*>(hb.src), hb.ld_src, e.p, t_, hb.rows, hb.cols, sizeof(T)};
        lk.unlock();
        const std::int64_t t0 = tr::now_ns();
        units_[w].dev->copy_to_host(back);
        units_[w].dev->synchronize();
        hold_link(w, "d2h", t0);
        lk.lock();
        ++W.st.tiles_out;
        drop_c(w, key);
        cv_.notify_all();
    }

    // True while a copy out of C tile `key` (held at cloc) is in flight: wait, it ends with the
    // tile in host memory. Copies out of one tile never overlap, so no stale copy of a tile ever
    // lands on the host after a newer one.
    bool copying_out(std::size_t ci, std::int64_t key) {
        const int w = cloc_[ci];
        return w >= 0 && us_[w].cache.at(key).pins > 0;
    }

    // Brings C(i, j) of task t to unit u and pins it there (lock held, t's C taken by the caller).
    void bring_c(int u, const TaskSt& t, std::unique_lock<std::mutex>& lk) {
        const std::size_t ci = cidx(t);
        const std::int64_t key = key_c(t.i, t.j);
        auto settle = [&] {
            cv_.wait(lk, [&] { return abort_ || !copying_out(ci, key); });
            if (abort_) throw Error("node runtime: aborted");
        };
        settle();
        if (!units_[u].dev) {
            if (const int w = cloc_[ci]; w >= 0) write_back(w, key, lk);
            return;
        }
        UnitSt& U = us_[u];
        if (cloc_[ci] == u) {
            Entry& e = U.cache.at(key);
            e.lru = ++clock_;
            ++e.pins;
            return;
        }
        make_room(u, lk);
        {
            Entry& e = U.cache[key];  // reserved: not ready, pinned
            e.p = units_[u].dev->allocate(tile_bytes());
            e.lru = ++clock_;
            e.pins = 1;
        }
        U.st.peak_tiles = std::max<std::int64_t>(U.st.peak_tiles, static_cast<std::int64_t>(U.cache.size()));
        settle();  // the tile may have started back to the host while we made room
        const int w = cloc_[ci];
        void* dst = U.cache.at(key).p;
        const device::Copy2D hb = host_block(key);
        void* src = nullptr;
        if (w >= 0) {
            Entry& s = us_[w].cache.at(key);
            ++s.pins;
            src = s.p;
        }
        lk.unlock();
        const std::int64_t t0 = tr::now_ns();
        if (w < 0) {
            units_[u].dev->copy_to_device({dst, t_, hb.src, hb.ld_src, hb.rows, hb.cols, sizeof(T)});
        } else {
            units_[w].dev->synchronize();
            units_[u].dev->copy_from_peer({dst, t_, src, t_, hb.rows, hb.cols, sizeof(T)}, *units_[w].dev);
        }
        units_[u].dev->synchronize();
        hold_link(u, w < 0 ? "h2d" : "d2d", t0);
        lk.lock();
        U.cache.at(key).ready = true;
        ++U.st.tiles_in;
        if (w >= 0) ++U.st.tiles_d2d, ++us_[w].st.tiles_out, drop_c(w, key);
        cloc_[ci] = u;
        cv_.notify_all();
    }

    // Cost of task t on unit u: tiles to move (0..3).
    int cost(int u, const TaskSt& t) const {
        const int w = cloc_[cidx(t)];
        if (!units_[u].dev) return w >= 0 ? 1 : 0;
        const auto& C = us_[u].cache;
        return (C.count(key_a(t)) ? 0 : 1) + (C.count(key_b(t)) ? 0 : 1) + (w == u ? 0 : 1);
    }

    int take_last(int v) {
        auto& L = us_[v].list;
        if (L.empty()) return -1;
        const int t = L.back();
        L.pop_back();
        return t;
    }

    int rand_steal(int u) {
        const int g = static_cast<int>(us_.size());
        if (g < 2) return -1;
        const int start = std::uniform_int_distribution<int>(0, g - 2)(us_[u].rng);
        for (int q = 0; q < g - 1; ++q) {
            int v = (start + q) % (g - 1);
            if (v >= u) ++v;
            if (const int t = take_last(v); t >= 0) return t;
        }
        return -1;
    }

    // Seed 4.2.1: pass 1 over every list stops at a task of cost 0, else remembers where the
    // cheapest tasks (cost 1 or 2) are; pass 2, after the lists may have changed, takes the
    // cheapest remembered one still there; else RandSteal.
    int effective_steal(int u, std::unique_lock<std::mutex>& lk) {
        const int g = static_cast<int>(us_.size());
        std::vector<std::pair<int, int>> seen;  // (cost, task)
        for (int v = 0; v < g; ++v) {
            if (v == u) continue;
            auto& L = us_[v].list;
            for (auto it = L.rbegin(); it != L.rend(); ++it) {
                const int c = cost(u, tasks_[static_cast<std::size_t>(*it)]);
                if (c == 0) {
                    const int t = *it;
                    L.erase(std::next(it).base());
                    return t;
                }
                if (c <= 2) seen.emplace_back(c, *it);
            }
        }
        lk.unlock();
        std::stable_sort(seen.begin(), seen.end());
        lk.lock();
        for (auto [c, t] : seen)
            for (int v = 0; v < g; ++v) {
                if (v == u) continue;
                auto& L = us_[v].list;
                if (auto it = std::find(L.begin(), L.end(), t); it != L.end()) {
                    L.erase(it);
                    return t;
                }
            }
        return rand_steal(u);
    }

    // Fills u's prefetch window to two tasks: its own list first, then stealing.
    void refill(int u, std::unique_lock<std::mutex>& lk) {
        UnitSt& U = us_[u];
        while (U.pre.size() < 2) {
            int t = -1;
            bool stolen = false;
            if (!U.list.empty()) {
                t = U.list.front();
                U.list.pop_front();
            } else if (cfg_.steal != Steal::Static) {
                t = cfg_.steal == Steal::Rand ? rand_steal(u) : effective_steal(u, lk);
                stolen = t >= 0;
            }
            if (t < 0) return;
            TaskSt& ts = tasks_[static_cast<std::size_t>(t)];
            ts.prefetched = u;
            if (stolen) ++U.st.stolen;
            U.pre.push_back(t);
            if (units_[u].dev) U.fetch.push_back(t);
            else ts.ready = true;
            cv_.notify_all();
        }
    }

    void compute(int u) {
        kernels::ThreadScope scope(std::max(1, units_[u].dev ? cfg_.threads : cfg_.cpu_threads));
        tr::set_thread_track(u);
        UnitSt& U = us_[u];
        std::unique_lock<std::mutex> lk(mu_);
        refill(u, lk);
        while (!abort_ && !U.pre.empty()) {
            const int id = U.pre.front();
            TaskSt& t = tasks_[static_cast<std::size_t>(id)];
            const std::size_t ci = cidx(t);
            cv_.wait(lk, [&] { return abort_ || (t.ready && !cbusy_[ci]); });
            if (abort_) break;
            cbusy_[ci] = 1;
            U.pre.pop_front();
            refill(u, lk);
            const auto t0 = Clock::now();
            const std::int64_t t0ns = tr::now_ns();
            bring_c(u, t, lk);
            t.t0 = std::chrono::duration<double>(t0 - start_).count();
            t.ran = u;
            const void *pa = nullptr, *pb = nullptr;
            void* pc = nullptr;
            if (units_[u].dev) {
                pa = U.cache[key_a(t)].p, pb = U.cache[key_b(t)].p, pc = U.cache[key_c(t.i, t.j)].p;
                U.cache[key_a(t)].lru = U.cache[key_b(t)].lru = ++clock_;
            }
            lk.unlock();
            const index_t mi = rows(t.i), nj = cols(t.j), kl = depth(t.l);
            const auto c0 = Clock::now();
            if (units_[u].dev) {
                const T one{1};
                units_[u].dev->gemm(device::scalar_of<T>(), oa_, ob_, mi, nj, kl, &alpha_, pa, t_, pb, t_, &one, pc, t_);
                units_[u].dev->synchronize();
            } else {
                const device::Copy2D ha = host_block(key_a(t)), hb = host_block(key_b(t));
                kernels::gemm<T>(oa_, ob_, mi, nj, kl, alpha_, static_cast<const T*>(ha.src), lda_,
                                 static_cast<const T*>(hb.src), ldb_, T{1}, c_ + t.i * t_ + t.j * t_ * ldc_, ldc_);
            }
            if (cfg_.tile_s > 0) {
                const double frac = static_cast<double>(mi) * static_cast<double>(nj) * static_cast<double>(kl) /
                                    (static_cast<double>(t_) * static_cast<double>(t_) * static_cast<double>(t_));
                std::this_thread::sleep_until(c0 + std::chrono::duration<double>(cfg_.tile_s * frac / units_[u].speed));
            }
            if (tr::on()) tr::record(tr::Kind::Gemm, "task", t0ns, tr::now_ns());
            lk.lock();
            t.t1 = seconds_since(start_);
            U.st.busy_s += t.t1 - t.t0;
            ++U.st.tasks;
            cbusy_[ci] = 0;
            if (units_[u].dev) --U.cache[key_a(t)].pins, --U.cache[key_b(t)].pins, --U.cache[key_c(t.i, t.j)].pins;
            cv_.notify_all();
            refill(u, lk);
        }
        U.done = true;
        cv_.notify_all();
        if (!abort_) flush(u, lk);
    }

    // u's C tiles back to host memory.
    void flush(int u, std::unique_lock<std::mutex>& lk) {
        if (!units_[u].dev) return;
        std::vector<std::int64_t> keys;
        for (const auto& [key, e] : us_[u].cache)
            if (key % 3 == KC) keys.push_back(key);
        for (std::int64_t key : keys) {
            auto& C = us_[u].cache;
            cv_.wait(lk, [&] { return abort_ || !C.count(key) || (C[key].pins == 0 && C[key].ready); });
            if (abort_) return;
            if (C.count(key)) write_back(u, key, lk);
        }
    }

    // Pins A or B tile `key` in u's memory, copying it from the host if it is not there. Pinning
    // a tile no one pins waits until u's pins leave a tile free for the running task's C.
    void fetch_tile(int u, std::int64_t key, std::unique_lock<std::mutex>& lk) {
        UnitSt& U = us_[u];
        if (auto it = U.cache.find(key); it != U.cache.end() && it->second.pins > 0) {
            ++it->second.pins;
            it->second.lru = ++clock_;
            return;
        }
        cv_.wait(lk, [&] { return abort_ || pinned(U) + 1 <= U.cap - 1; });
        if (abort_) throw Error("node runtime: aborted");
        if (auto it = U.cache.find(key); it != U.cache.end()) {
            ++it->second.pins;
            it->second.lru = ++clock_;
            return;
        }
        make_room(u, lk);
        Entry& e = U.cache[key];
        e.p = units_[u].dev->allocate(tile_bytes());
        e.pins = 1;
        e.lru = ++clock_;
        U.st.peak_tiles = std::max<std::int64_t>(U.st.peak_tiles, static_cast<std::int64_t>(U.cache.size()));
        const device::Copy2D hb = host_block(key);
        void* dst = e.p;
        lk.unlock();
        const std::int64_t t0 = tr::now_ns();
        units_[u].dev->copy_to_device({dst, t_, hb.src, hb.ld_src, hb.rows, hb.cols, sizeof(T)});
        units_[u].dev->synchronize();
        hold_link(u, "h2d", t0);
        lk.lock();
        U.cache[key].ready = true;
        ++U.st.tiles_in;
    }

    void copier(int u) {
        tr::set_thread_track(static_cast<int>(us_.size()) + u);
        UnitSt& U = us_[u];
        std::unique_lock<std::mutex> lk(mu_);
        while (true) {
            cv_.wait(lk, [&] { return abort_ || !U.fetch.empty() || U.done; });
            if (abort_ || U.fetch.empty()) return;
            const int id = U.fetch.front();
            TaskSt& t = tasks_[static_cast<std::size_t>(id)];
            fetch_tile(u, key_a(t), lk);
            fetch_tile(u, key_b(t), lk);
            t.ready = true;
            U.fetch.pop_front();
            cv_.notify_all();
        }
    }

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

}  // namespace

template <class T>
void run(std::span<const Unit> units, const std::vector<std::vector<Task>>& lists, const RunConfig& cfg, Op op_a,
         Op op_b, index_t m, index_t n, index_t k, T alpha, const T* a, index_t lda, const T* b, index_t ldb, T* c,
         index_t ldc, NodeReport& rep) {
    Engine<T> e(units, cfg, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, c, ldc);
    e.run(lists, rep);
}

#define CALA_INST(T)                                                                                              \
    template void run<T>(std::span<const Unit>, const std::vector<std::vector<Task>>&, const RunConfig&, Op, Op,  \
                         index_t, index_t, index_t, T, const T*, index_t, const T*, index_t, T*, index_t, NodeReport&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::node::detail

// The node runtime (see runtime.hpp): prefetch windows of two tasks, Static / RandSteal /
// EffectiveSteal (steal.cpp), one C tile held by one task at a time, emulated speeds and links.
//
// Worked example, units {cpu, host0} with one C tile each, kt = 2: host0's window takes
// T(0,1,0), T(0,1,1); its copy thread loads A(0,0), B(0,1) (2 tiles in), then A(0,1), B(1,1);
// its compute thread takes T(0,1,0), loads C(0,1) (1 in), computes, then T(0,1,1) (C resident),
// finds its list empty, steals nothing (cpu's last task is in cpu's window), writes C(0,1) back
// (1 out): in = kt·(1 + 1) + 1 = 5, out = 1.

#include "node/runtime.hpp"

#include <algorithm>
#include <thread>

#include "core/check.hpp"
#include "core/trace.hpp"
#include "kernels/blas.hpp"
#include "node/engine.hpp"

namespace cala::node::detail {

namespace tr = cala::detail::trace;
using Clock = std::chrono::steady_clock;

template <class T>
void Engine<T>::run(const std::vector<std::vector<Task>>& lists, NodeReport& rep) {
    lists_.assign(us_.size(), {});
    for (std::size_t u = 0; u < lists.size(); ++u)
        for (const Task& t : lists[u]) {
            lists_[u].push_back(static_cast<int>(tasks_.size()));
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

// Fills u's prefetch window to two tasks: its own list first, then stealing.
template <class T>
void Engine<T>::refill(int u, std::unique_lock<std::mutex>& lk) {
    UnitSt& U = us_[u];
    while (U.pre.size() < 2) {
        int t = -1;
        bool stolen = false;
        auto& own = lists_[static_cast<std::size_t>(u)];
        if (!own.empty()) {
            t = own.front();
            own.pop_front();
        } else if (cfg_.steal == Steal::Rand) {
            t = rand_steal(u, lists_, U.rng);
            stolen = t >= 0;
        } else if (cfg_.steal == Steal::Effective) {
            t = effective_steal(u, lists_, U.rng, [&](int x) { return cost(u, tasks_[static_cast<std::size_t>(x)]); }, lk);
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

template <class T>
void Engine<T>::compute(int u) {
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
            // Two products in flight: the next one is queued behind this one, never a whole-device
            // wait per task (the copies of the window's tiles go on meanwhile). Reuse of the
            // tiles this task unpins below is ordered after it by the device (block events).
            U.inflight.push_back(units_[u].dev->mark());
            if (U.inflight.size() > 2) {
                units_[u].dev->wait_mark(U.inflight.front());
                U.inflight.pop_front();
            }
        } else {
            const device::Copy2D ha = host_block(key_a(t)), hb = host_block(key_b(t));
            kernels::gemm<T>(oa_, ob_, mi, nj, kl, alpha_, static_cast<const T*>(ha.src), lda_,
                             static_cast<const T*>(hb.src), ldb_, T{1}, c_ + t.i * t_ + t.j * t_ * ldc_, ldc_);
        }
        if (cfg_.tile_s > 0) {
            const double frac = static_cast<double>(mi) * static_cast<double>(nj) * static_cast<double>(kl) /
                                (static_cast<double>(t_) * static_cast<double>(t_) * static_cast<double>(t_));
            std::this_thread::sleep_until(c0 + std::chrono::duration<double>(cfg_.tile_s * frac / units_[u].emulate_speed));
        }
        if (tr::on()) tr::record(tr::Kind::Gemm, t.planned == u ? "task" : "stolen task", t0ns, tr::now_ns());
        lk.lock();
        t.t1 = seconds_since(start_);
        U.st.busy_s += t.t1 - t.t0;
        ++U.st.tasks;
        cbusy_[ci] = 0;
        if (units_[u].dev) --U.cache[key_a(t)].pins, --U.cache[key_b(t)].pins, --U.cache[key_c(t.i, t.j)].pins;
        cv_.notify_all();
        refill(u, lk);
    }
    if (units_[u].dev) {
        lk.unlock();
        for (std::uint64_t m : U.inflight) units_[u].dev->wait_mark(m);
        U.inflight.clear();
        lk.lock();
    }
    U.done = true;
    cv_.notify_all();
    if (!abort_) flush(u, lk);
}

template <class T>
void Engine<T>::copier(int u) {
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

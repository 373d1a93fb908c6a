// The node runtime's tiles (engine.hpp): per-unit LRU caches, C tile moves, A/B prefetch copies,
// write-backs and the steal cost of a task.

#include <algorithm>
#include <thread>

#include "core/check.hpp"
#include "core/trace.hpp"
#include "node/engine.hpp"

namespace cala::node::detail {

namespace tr = cala::detail::trace;

// The stored host block of a tile key (column-major, ld of its matrix) as a copy source.
template <class T>
device::Copy2D Engine<T>::host_block(std::int64_t key) const {
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

template <class T>
void Engine<T>::release_entry(UnitSt& U, Entry& e) {
    const auto u = static_cast<std::size_t>(&U - us_.data());
    units_[u].dev->release(e.p, tile_bytes());
    e.p = nullptr;
}

template <class T>
void Engine<T>::hold_link(int u, const char* what, std::int64_t t0ns) {
    if (cfg_.link_s > 0)
        std::this_thread::sleep_until(start_of(t0ns) + std::chrono::duration<double>(cfg_.link_s));
    if (tr::on()) tr::record(tr::Kind::Transfer, what, t0ns, tr::now_ns());
    (void)u;
}

// A copy into u's memory is ordered before the products that use the block by the device (block
// events), so nothing waits for it; only the emulated link (link_s > 0) holds until it is done.
template <class T>
void Engine<T>::settle_copy(int u) {
    if (cfg_.link_s > 0) units_[u].dev->synchronize();
}

template <class T>
int Engine<T>::pinned(const UnitSt& U) const {
    int p = 0;
    for (const auto& [key, e] : U.cache) p += e.pins > 0;
    return p;
}

// Makes room for one more tile in u's memory (lock held; may wait and unlock). Victims: the
// least recently used tile no one pins (a task running here pins its A, B and C; a copy
// pins its source). A C tile goes back to host memory first, even when a task elsewhere
// has taken it and waits for room to fetch it: that task then fetches it from the host.
template <class T>
void Engine<T>::make_room(int u, std::unique_lock<std::mutex>& lk) {
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
template <class T>
void Engine<T>::drop_c(int w, std::int64_t key) {
    UnitSt& W = us_[w];
    auto it = W.cache.find(key);
    if (it == W.cache.end() || --it->second.pins > 0) return;
    release_entry(W, it->second);
    W.cache.erase(it);
    if (cloc_[static_cast<std::size_t>(key / 3)] == w) cloc_[static_cast<std::size_t>(key / 3)] = -1;
}

// C tile `key` at unit w goes back to host memory (lock held; unlocks during the copy).
template <class T>
void Engine<T>::write_back(int w, std::int64_t key, std::unique_lock<std::mutex>& lk) {
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
template <class T>
bool Engine<T>::copying_out(std::size_t ci, std::int64_t key) {
    const int w = cloc_[ci];
    return w >= 0 && us_[w].cache.at(key).pins > 0;
}

// Brings C(i, j) of task t to unit u and pins it there (lock held, t's C taken by the caller).
template <class T>
void Engine<T>::bring_c(int u, const TaskSt& t, std::unique_lock<std::mutex>& lk) {
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
    settle_copy(u);
    hold_link(u, w < 0 ? "h2d" : "d2d", t0);
    lk.lock();
    U.cache.at(key).ready = true;
    ++U.st.tiles_in;
    if (w >= 0) ++U.st.tiles_d2d, ++us_[w].st.tiles_out, drop_c(w, key);
    cloc_[ci] = u;
    cv_.notify_all();
}

// Cost of task t on unit u: tiles to move (0..3).
template <class T>
int Engine<T>::cost(int u, const TaskSt& t) const {
    const int w = cloc_[cidx(t)];
    if (!units_[u].dev) return w >= 0 ? 1 : 0;
    const auto& C = us_[u].cache;
    return (C.count(key_a(t)) ? 0 : 1) + (C.count(key_b(t)) ? 0 : 1) + (w == u ? 0 : 1);
}

// u's C tiles back to host memory.
template <class T>
void Engine<T>::flush(int u, std::unique_lock<std::mutex>& lk) {
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
template <class T>
void Engine<T>::fetch_tile(int u, std::int64_t key, std::unique_lock<std::mutex>& lk) {
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
    settle_copy(u);
    hold_link(u, "h2d", t0);
    lk.lock();
    U.cache[key].ready = true;
    ++U.st.tiles_in;
}

#define CALA_INST(T) template class Engine<T>;
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::node::detail

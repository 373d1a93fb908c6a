// Workspace accounting and the cache of freed large buffers (cala/memory.hpp). Atomic counters:
// buffers are made and freed on several threads at once (the node's unit threads, potrf's panel
// beside the node's update); the cache is under a mutex (it sees only buffers of 1 MiB and up).

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "cala/error.hpp"
#include "cala/memory.hpp"
#include "core/workspace.hpp"

namespace cala {

namespace {

std::atomic<std::int64_t> g_current{0}, g_peak{0};

constexpr std::size_t kCachedFrom = std::size_t{1} << 20;  // smaller buffers go straight to malloc

#if defined(__SANITIZE_ADDRESS__)
constexpr std::int64_t kDefaultCacheBytes = 0;
#else
constexpr std::int64_t kDefaultCacheBytes = std::int64_t{1} << 30;
#endif

std::int64_t initial_limit() {
    const char* s = std::getenv("CALA_WORKSPACE_CACHE_MB");
    if (s == nullptr || *s == '\0') return kDefaultCacheBytes;
    char* end = nullptr;
    const double mb = std::strtod(s, &end);
    if (end == s || *end != '\0' || !(mb >= 0) || mb > 1e9)
        throw Error(std::string("CALA_WORKSPACE_CACHE_MB = '") + s + "': expected a number of MiB >= 0");
    return static_cast<std::int64_t>(mb * 1048576.0);
}

// glibc's MALLOC_PERTURB_ (meson test sets it): malloc fills fresh memory with its byte ^ 0xff
// so that a read of what was never written shows; a reused buffer is filled alike, so that it
// cannot hand the previous call's data to code that forgot to write it.
int perturb_byte() {
    const char* s = std::getenv("MALLOC_PERTURB_");
    const int v = s != nullptr ? std::atoi(s) & 0xff : 0;
    return v != 0 ? v ^ 0xff : -1;
}

// Freed buffers by capacity; a buffer taken from here is at most twice the size asked for.
struct Cache {
    std::mutex mu;
    std::multimap<std::size_t, void*> free_blocks;  // capacity -> block
    std::unordered_map<void*, std::size_t> capacity;  // every large block alive or kept
    std::int64_t kept = 0;
    std::int64_t limit = initial_limit();
    int perturb = perturb_byte();  // -1: off

    // Frees kept blocks, largest first, until `kept` <= `cap`. Under mu.
    void trim(std::int64_t cap) {
        while (kept > cap && !free_blocks.empty()) {
            auto it = std::prev(free_blocks.end());
            kept -= static_cast<std::int64_t>(it->first);
            capacity.erase(it->second);
            std::free(it->second);
            free_blocks.erase(it);
        }
    }
};

// Never destroyed: buffers may be freed by other static objects' destructors at exit.
Cache& cache() {
    static Cache* c = new Cache;
    return *c;
}

void count_alloc(std::size_t bytes) {
    const std::int64_t now = g_current.fetch_add(static_cast<std::int64_t>(bytes)) + static_cast<std::int64_t>(bytes);
    std::int64_t peak = g_peak.load();
    while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
    }
}

}  // namespace

MemoryStats memory_stats() noexcept {
    Cache& c = cache();
    std::lock_guard lock(c.mu);
    return {g_current.load(), g_peak.load(), c.kept};
}
void reset_peak_memory() noexcept { g_peak.store(g_current.load()); }

void set_workspace_cache_limit(std::int64_t bytes) {
    if (bytes < 0) throw Error("set_workspace_cache_limit: bytes = " + std::to_string(bytes) + " must be >= 0");
    Cache& c = cache();
    std::lock_guard lock(c.mu);
    c.limit = bytes;
    c.trim(bytes);
}

std::int64_t workspace_cache_limit() noexcept {
    Cache& c = cache();
    std::lock_guard lock(c.mu);
    return c.limit;
}

void release_workspace_cache() noexcept {
    Cache& c = cache();
    std::lock_guard lock(c.mu);
    c.trim(0);
}

namespace detail {

void* workspace_alloc(std::size_t bytes) {
    const std::size_t rounded = (bytes + 63) / 64 * 64;
    void* p = nullptr;
    if (rounded >= kCachedFrom) {
        Cache& c = cache();
        std::lock_guard lock(c.mu);
        auto it = c.free_blocks.lower_bound(rounded);
        if (it != c.free_blocks.end() && it->first / 2 <= rounded) {
            p = it->second;
            c.kept -= static_cast<std::int64_t>(it->first);
            c.free_blocks.erase(it);
            if (c.perturb >= 0) std::memset(p, c.perturb, rounded);
        } else {
            p = std::aligned_alloc(64, rounded);
            if (p == nullptr) {  // memory kept for reuse is memory the system may need
                c.trim(0);
                p = std::aligned_alloc(64, rounded);
            }
            if (p != nullptr) c.capacity.emplace(p, rounded);
        }
    } else {
        p = std::aligned_alloc(64, rounded);
    }
    if (p == nullptr) throw std::bad_alloc();
    count_alloc(bytes);
    return p;
}

void count_workspace(std::int64_t bytes) noexcept {
    if (bytes >= 0) count_alloc(static_cast<std::size_t>(bytes));
    else g_current.fetch_sub(-bytes);
}

void workspace_free(void* p, std::size_t bytes) noexcept {
    if (p == nullptr) return;
    g_current.fetch_sub(static_cast<std::int64_t>(bytes));
    if ((bytes + 63) / 64 * 64 < kCachedFrom) {
        std::free(p);
        return;
    }
    Cache& c = cache();
    std::lock_guard lock(c.mu);
    const auto it = c.capacity.find(p);
    const std::size_t cap = it->second;
    if (static_cast<std::int64_t>(cap) > c.limit) {
        c.capacity.erase(it);
        std::free(p);
        return;
    }
    c.free_blocks.emplace(cap, p);
    c.kept += static_cast<std::int64_t>(cap);
    c.trim(c.limit);
}

}  // namespace detail
}  // namespace cala

// Workspace accounting (cala/memory.hpp). Atomic: buffers are made and freed on several threads
// at once (the node's unit threads, potrf's panel beside the node's update).

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>

#include "cala/memory.hpp"
#include "core/workspace.hpp"

namespace cala {

namespace {
std::atomic<std::int64_t> g_current{0}, g_peak{0};
}

MemoryStats memory_stats() noexcept { return {g_current.load(), g_peak.load()}; }
void reset_peak_memory() noexcept { g_peak.store(g_current.load()); }

namespace detail {

void* workspace_alloc(std::size_t bytes) {
    const std::size_t rounded = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded);
    if (p == nullptr) throw std::bad_alloc();
    const std::int64_t now = g_current.fetch_add(static_cast<std::int64_t>(bytes)) + static_cast<std::int64_t>(bytes);
    std::int64_t peak = g_peak.load();
    while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
    }
    return p;
}

void workspace_free(void* p, std::size_t bytes) noexcept {
    if (p == nullptr) return;
    std::free(p);
    g_current.fetch_sub(static_cast<std::int64_t>(bytes));
}

}  // namespace detail
}  // namespace cala

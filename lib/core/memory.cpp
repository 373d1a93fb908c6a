#include <algorithm>
#include <cstdlib>
#include <new>

#include "cala/memory.hpp"
#include "core/workspace.hpp"

namespace cala {

namespace {
MemoryStats g_stats;
}

MemoryStats memory_stats() noexcept { return g_stats; }
void reset_peak_memory() noexcept { g_stats.peak_bytes = g_stats.current_bytes; }

namespace detail {

void* workspace_alloc(std::size_t bytes) {
    const std::size_t rounded = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded);
    if (p == nullptr) throw std::bad_alloc();
    g_stats.current_bytes += static_cast<std::int64_t>(bytes);
    g_stats.peak_bytes = std::max(g_stats.peak_bytes, g_stats.current_bytes);
    return p;
}

void workspace_free(void* p, std::size_t bytes) noexcept {
    if (p == nullptr) return;
    std::free(p);
    g_stats.current_bytes -= static_cast<std::int64_t>(bytes);
}

}  // namespace detail
}  // namespace cala

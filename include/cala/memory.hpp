#pragma once
// Workspace accounting: every temporary buffer cala allocates is counted here (per process).

#include <cstdint>

namespace cala {

struct MemoryStats {
    std::int64_t current_bytes = 0;
    std::int64_t peak_bytes = 0;
};

MemoryStats memory_stats() noexcept;
/// Sets the peak to the current usage.
void reset_peak_memory() noexcept;

}  // namespace cala

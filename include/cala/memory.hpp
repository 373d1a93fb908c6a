#pragma once
// Workspace accounting: every temporary buffer cala allocates is counted here (per process).
//
// Large workspace (1 MiB and up) is kept for reuse when freed, up to a cap: a fresh buffer of
// hundreds of MB costs the kernel a page fault and a zeroed page per 4 KiB on first touch, which
// at nb = 64 on a tall-skinny product was a quarter of a call's time. The cache is not workspace
// in use: `current_bytes` and `peak_bytes` count only buffers cala holds; `cached_bytes` is what
// it keeps for the next call.

#include <cstdint>

namespace cala {

struct MemoryStats {
    std::int64_t current_bytes = 0;
    std::int64_t peak_bytes = 0;
    std::int64_t cached_bytes = 0;  ///< freed large workspace kept for reuse (not in use)
};

MemoryStats memory_stats() noexcept;
/// Sets the peak to the current usage.
void reset_peak_memory() noexcept;

/// The most freed workspace kept for reuse, in bytes; 0 keeps none. Default: CALA_WORKSPACE_CACHE_MB
/// (MiB) when set, else 1 GiB (0 in AddressSanitizer builds, so that a use after free is still
/// seen). Lowering it frees what no longer fits.
void set_workspace_cache_limit(std::int64_t bytes);
std::int64_t workspace_cache_limit() noexcept;
/// Frees every kept buffer now (the cap stays).
void release_workspace_cache() noexcept;

}  // namespace cala

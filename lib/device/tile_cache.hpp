#pragma once
// A device memory pool with LRU eviction under a byte budget, and tile identity: a block filled
// from a host tile remembers which one, so a later load of the same host tile finds it resident
// (live: shared by reference count; released but not yet evicted: taken back) and skips the
// copy. The policy only: blocks come from an allocate/free pair the backend supplies
// (CudaDevice: cudaMalloc/cudaFree), so it is tested on the host with a fake allocator.
//
// Which block a request gets: an anonymous request (a C tile) first takes the least recently
// released anonymous block of its size; then a new block while physical bytes allow; then a host
// tile takes the least recently released host tile of its size; then plain LRU: the least
// recently released block is reused if it has the size, else freed, until a new one fits.
//
// Invariants: live bytes (blocks with references) <= budget, checked before every acquire
// (DeviceMemoryError past it); physical bytes (live + released blocks kept for reuse) <= budget,
// kept by freeing the least recently released blocks first.
//
// Example, budget 3 blocks of one size: load(A00) load(A01) load(B00) (3 live, 3 physical);
// release all three (0 live, 3 physical, LRU order A00 A01 B00); load(A01): hit, no copy;
// acquire() anonymous: no free room, A00 is the least recently released, so it is reused and
// forgets it held A00; load(A00) now misses and evicts B00.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <string>
#include <unordered_map>

#include "cala/types.hpp"

namespace cala::device {

/// Which host tile a device block holds: the host address and shape it was copied from.
struct TileId {
    const void* src = nullptr;
    index_t ld = 0, rows = 0, cols = 0;
    std::size_t elem = 0;
    bool operator==(const TileId&) const = default;
};

class TileCache {
public:
    using AllocFn = std::function<void*(std::int64_t bytes)>;
    using FreeFn = std::function<void(void* p, std::int64_t bytes)>;

    struct Stats {
        std::int64_t hits = 0;         ///< loads that found their tile resident (no copy)
        std::int64_t misses = 0;       ///< loads that needed a copy
        std::int64_t allocations = 0;  ///< blocks obtained from AllocFn
        std::int64_t evictions = 0;    ///< released blocks freed or reused while still holding a tile
    };

    TileCache(std::int64_t budget_bytes, AllocFn alloc, FreeFn free, std::string owner);
    ~TileCache();  // frees every block (live ones too)
    TileCache(const TileCache&) = delete;
    TileCache& operator=(const TileCache&) = delete;

    /// A block of bytes with no identity (C tiles, peer copies). Throws DeviceMemoryError when
    /// live + bytes > budget.
    void* acquire(std::int64_t bytes);
    /// A block for host tile id: the resident one when there is one (hit = true, the caller must
    /// not copy), else a block now tagged with id (hit = false, the caller fills it).
    void* acquire(std::int64_t bytes, const TileId& id, bool& hit);
    /// Drops one reference to the block at p; at zero it becomes the most recently released.
    void release(void* p) noexcept;
    /// The block containing p no longer matches its identity (written on the device).
    void invalidate(const void* p) noexcept;
    /// Every block forgets its identity (the host data may have changed).
    void forget() noexcept;
    /// Frees every released block.
    void trim() noexcept;

    /// Base address of the block containing device address p, or nullptr.
    void* block_of(const void* p) const noexcept;

    std::int64_t budget_bytes() const noexcept { return budget_; }
    std::int64_t live_bytes() const noexcept { return live_; }
    std::int64_t physical_bytes() const noexcept { return physical_; }
    std::int64_t peak_bytes() const noexcept { return peak_; }
    void reset_peak() noexcept { peak_ = live_; }
    const Stats& stats() const noexcept { return stats_; }
    /// Released blocks, least recently released first (for tests).
    std::list<void*> free_order() const { return lru_; }

private:
    struct Block {
        std::int64_t bytes = 0;
        int refs = 0;
        bool tagged = false;
        TileId id;
        std::list<void*>::iterator pos;  // in lru_ when refs == 0
    };
    struct IdHash {
        std::size_t operator()(const TileId& t) const noexcept;
    };

    void check_room(std::int64_t bytes) const;
    void* take(std::int64_t bytes, bool for_tile);
    void* fresh(std::int64_t bytes);
    void* grab(void* p);
    void untag(Block& b) noexcept;
    void free_block(std::map<std::uintptr_t, Block>::iterator it) noexcept;

    std::int64_t budget_;
    AllocFn alloc_;
    FreeFn free_;
    std::string owner_;
    std::int64_t live_ = 0, physical_ = 0, peak_ = 0;
    std::map<std::uintptr_t, Block> blocks_;  // by base address, for block_of
    std::list<void*> lru_;                    // released blocks, least recently released first
    std::unordered_map<TileId, void*, IdHash> ids_;
    Stats stats_;
};

}  // namespace cala::device

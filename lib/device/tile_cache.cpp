// TileCache: LRU eviction of released blocks under a byte budget; identity-keyed reuse.

#include "device/tile_cache.hpp"

#include <sstream>

#include "device/device.hpp"

namespace cala::device {

std::size_t TileCache::IdHash::operator()(const TileId& t) const noexcept {
    std::size_t h = std::hash<const void*>{}(t.src);
    for (auto v : {t.ld, t.rows, t.cols, static_cast<index_t>(t.elem)})
        h ^= std::hash<index_t>{}(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

TileCache::TileCache(std::int64_t budget, AllocFn alloc, FreeFn free, std::string owner)
    : budget_(budget), alloc_(std::move(alloc)), free_(std::move(free)), owner_(std::move(owner)) {}

TileCache::~TileCache() {
    for (auto& [addr, b] : blocks_) free_(reinterpret_cast<void*>(addr), b.bytes);
}

void TileCache::check_room(std::int64_t bytes) const {
    if (live_ + bytes <= budget_) return;
    std::ostringstream s;
    s << owner_ << ": allocating " << bytes << " bytes with " << live_ << " in use exceeds the budget of " << budget_
      << " bytes";
    throw DeviceMemoryError(s.str());
}

void TileCache::untag(Block& b) noexcept {
    if (!b.tagged) return;
    ids_.erase(b.id);
    b.tagged = false;
}

void TileCache::free_block(std::map<std::uintptr_t, Block>::iterator it) noexcept {
    Block& b = it->second;
    untag(b);
    physical_ -= b.bytes;
    free_(reinterpret_cast<void*>(it->first), b.bytes);
    blocks_.erase(it);
}

void* TileCache::fresh(std::int64_t bytes) {
    void* p = alloc_(bytes);
    ++stats_.allocations;
    physical_ += bytes;
    Block b;
    b.bytes = bytes;
    blocks_.emplace(reinterpret_cast<std::uintptr_t>(p), b);
    auto& nb = blocks_.at(reinterpret_cast<std::uintptr_t>(p));
    nb.refs = 1;
    live_ += bytes;
    peak_ = std::max(peak_, live_);
    return p;
}

void* TileCache::grab(void* p) {
    Block& b = blocks_.at(reinterpret_cast<std::uintptr_t>(p));
    lru_.erase(b.pos);
    if (b.tagged) ++stats_.evictions;
    untag(b);
    b.refs = 1;
    live_ += b.bytes;
    peak_ = std::max(peak_, live_);
    return p;
}

void* TileCache::take(std::int64_t bytes, bool for_tile) {
    // 1. An anonymous request: a released anonymous block of this size (nothing worth keeping).
    //    A host tile does not take one: anonymous blocks are C tiles whose write-back may still
    //    be running, and their next C tiles reuse them in release order, behind the write-back.
    auto oldest = [&](bool tagged) -> void* {
        for (void* p : lru_) {
            const Block& b = blocks_.at(reinterpret_cast<std::uintptr_t>(p));
            if (b.bytes == bytes && b.tagged == tagged) return p;
        }
        return nullptr;
    };
    if (!for_tile)
        if (void* p = oldest(false)) return grab(p);
    // 2. Room for a new block: keeps the resident tiles resident.
    if (physical_ + bytes <= budget_) return fresh(bytes);
    // 3. A host tile reuses the least recently released host tile of its size.
    if (for_tile)
        if (void* p = oldest(true)) return grab(p);
    // 4. Least recently released first: reuse it if it has the size, else free it and retry.
    while (!lru_.empty()) {
        void* p = lru_.front();
        auto it = blocks_.find(reinterpret_cast<std::uintptr_t>(p));
        if (it->second.bytes == bytes) return grab(p);
        lru_.pop_front();
        if (it->second.tagged) ++stats_.evictions;
        free_block(it);
        if (physical_ + bytes <= budget_) return fresh(bytes);
    }
    return fresh(bytes);  // physical == live here, and check_room passed
}

void* TileCache::acquire(std::int64_t bytes) {
    check_room(bytes);
    return take(bytes, false);
}

void* TileCache::acquire(std::int64_t bytes, const TileId& id, bool& hit) {
    if (auto f = ids_.find(id); f != ids_.end()) {
        Block& b = blocks_.at(reinterpret_cast<std::uintptr_t>(f->second));
        if (b.bytes == bytes) {
            if (b.refs == 0) {
                check_room(bytes);
                lru_.erase(b.pos);
                live_ += bytes;
                peak_ = std::max(peak_, live_);
            }
            ++b.refs;
            ++stats_.hits;
            hit = true;
            return f->second;
        }
    }
    check_room(bytes);
    void* p = take(bytes, true);
    Block& b = blocks_.at(reinterpret_cast<std::uintptr_t>(p));
    if (auto f = ids_.find(id); f != ids_.end())  // a stale tag of another size
        untag(blocks_.at(reinterpret_cast<std::uintptr_t>(f->second)));
    b.tagged = true;
    b.id = id;
    ids_[id] = p;
    ++stats_.misses;
    hit = false;
    return p;
}

void TileCache::release(void* p) noexcept {
    auto it = blocks_.find(reinterpret_cast<std::uintptr_t>(p));
    if (it == blocks_.end() || it->second.refs == 0) return;
    Block& b = it->second;
    if (--b.refs > 0) return;
    live_ -= b.bytes;
    b.pos = lru_.insert(lru_.end(), p);
}

void* TileCache::block_of(const void* p) const noexcept {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    auto it = blocks_.upper_bound(a);
    if (it == blocks_.begin()) return nullptr;
    --it;
    return a < it->first + static_cast<std::uintptr_t>(it->second.bytes) ? reinterpret_cast<void*>(it->first)
                                                                         : nullptr;
}

void TileCache::invalidate(const void* p) noexcept {
    if (void* base = block_of(p)) untag(blocks_.at(reinterpret_cast<std::uintptr_t>(base)));
}

void TileCache::forget() noexcept {
    for (auto& [addr, b] : blocks_) b.tagged = false;
    ids_.clear();
}

void TileCache::trim() noexcept {
    while (!lru_.empty()) {
        auto it = blocks_.find(reinterpret_cast<std::uintptr_t>(lru_.front()));
        lru_.pop_front();
        free_block(it);
    }
}

}  // namespace cala::device

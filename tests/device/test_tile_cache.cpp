// TileCache (the pool of CudaDevice) on the host with a counting allocator: LRU eviction order,
// the budget on live and on physical bytes, identity hits (live and released), invalidation.

#include <doctest/doctest.h>

#include <map>
#include <random>
#include <vector>

#include "device/device.hpp"
#include "device/tile_cache.hpp"

using cala::device::TileCache;
using cala::device::TileId;

namespace {

struct Counting {
    std::map<void*, std::int64_t> live;
    std::int64_t bytes = 0, peak = 0, frees = 0;
    TileCache make(std::int64_t budget) {
        return TileCache(
            budget,
            [this](std::int64_t b) {
                void* p = new char[static_cast<std::size_t>(b)];
                live[p] = b;
                bytes += b;
                peak = std::max(peak, bytes);
                return p;
            },
            [this](void* p, std::int64_t b) {
                REQUIRE(live.at(p) == b);
                live.erase(p);
                bytes -= b;
                ++frees;
                delete[] static_cast<char*>(p);
            },
            "test");
    }
};

char host[64 * 64];
TileId tile(int i) { return TileId{host + i, 64, 8, 8, 1}; }

}  // namespace

TEST_CASE("TileCache: the worked example of the header (LRU order, hits, eviction)") {
    Counting mem;
    auto cache = mem.make(300);
    bool hit = true;

    void* a00 = cache.acquire(100, tile(0), hit);
    CHECK_FALSE(hit);
    void* a01 = cache.acquire(100, tile(1), hit);
    void* b00 = cache.acquire(100, tile(2), hit);
    CHECK(cache.live_bytes() == 300);
    cache.release(a00), cache.release(a01), cache.release(b00);
    CHECK(cache.live_bytes() == 0);
    CHECK(cache.physical_bytes() == 300);
    CHECK(cache.free_order() == std::list<void*>{a00, a01, b00});

    CHECK(cache.acquire(100, tile(1), hit) == a01);  // released, still resident: no copy
    CHECK(hit);
    void* anon = cache.acquire(100);  // no room: the least recently released (A00) is reused
    CHECK(anon == a00);
    CHECK(cache.stats().evictions == 1);
    cache.acquire(100, tile(0), hit);  // A00 is gone: a miss, evicting B00 (reusing its block)
    CHECK_FALSE(hit);
    CHECK(cache.stats().evictions == 2);
    CHECK(mem.bytes == 300);
    CHECK(mem.peak == 300);
    CHECK(cache.stats().allocations == 3);
}

TEST_CASE("TileCache: a live tile loaded twice is shared, and freed after its last release") {
    Counting mem;
    auto cache = mem.make(200);
    bool hit = false;

    void* p = cache.acquire(100, tile(5), hit);
    void* q = cache.acquire(100, tile(5), hit);

    CHECK(hit);
    CHECK(p == q);
    CHECK(cache.live_bytes() == 100);  // counted once
    cache.release(p);
    CHECK(cache.live_bytes() == 100);
    cache.release(q);
    CHECK(cache.live_bytes() == 0);
    CHECK(cache.free_order().size() == 1);
}

TEST_CASE("TileCache: the budget bounds live bytes (DeviceMemoryError) and physical bytes") {
    Counting mem;
    auto cache = mem.make(250);
    void* a = cache.acquire(100);
    void* b = cache.acquire(100);

    CHECK_THROWS_AS(cache.acquire(100), cala::device::DeviceMemoryError);
    CHECK(cache.acquire(50) != nullptr);  // exactly at the budget
    cache.release(a);
    cache.release(b);
    void* c = cache.acquire(120);  // other size: both released blocks are freed, oldest first

    CHECK(c != nullptr);
    CHECK(mem.frees == 2);
    CHECK(mem.bytes == 170);
    CHECK(mem.bytes <= 250);
}

TEST_CASE("TileCache: written blocks and forget() lose their identity") {
    Counting mem;
    auto cache = mem.make(1000);
    bool hit = false;
    void* p = cache.acquire(100, tile(1), hit);
    cache.invalidate(static_cast<char*>(p) + 17);  // any address inside the block
    cache.release(p);

    cache.acquire(100, tile(1), hit);
    CHECK_FALSE(hit);
    cache.forget();
    cache.acquire(100, tile(1), hit);
    CHECK_FALSE(hit);
    CHECK(cache.block_of(static_cast<char*>(p) + 99) == p);
    CHECK(cache.block_of(static_cast<char*>(p) + 100) != p);
}

TEST_CASE("TileCache: random loads and releases never exceed the budget, live or physical") {
    Counting mem;
    const std::int64_t budget = 1000;
    auto cache = mem.make(budget);
    std::mt19937 g(42);
    std::vector<void*> held;
    for (int step = 0; step < 5000; ++step) {
        const int what = static_cast<int>(g() % 3);
        const std::int64_t size = 50 * (1 + static_cast<std::int64_t>(g() % 3));
        try {
            bool hit = false;
            if (what == 0) held.push_back(cache.acquire(size));
            if (what == 1) held.push_back(cache.acquire(size, tile(static_cast<int>(g() % 12)), hit));
        } catch (const cala::device::DeviceMemoryError&) {
            CHECK(cache.live_bytes() + size > budget);
        }
        if (what == 2 && !held.empty()) {
            const std::size_t i = g() % held.size();
            cache.release(held[i]);
            held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
        }
        REQUIRE(cache.live_bytes() <= budget);
        REQUIRE(mem.bytes == cache.physical_bytes());
        REQUIRE(mem.bytes <= budget);
    }
    CHECK(cache.stats().hits > 0);
    CHECK(cache.stats().evictions > 0);
}

TEST_CASE("TileCache: host tiles reuse host-tile blocks, C tiles reuse C blocks in release order") {
    Counting mem;
    auto cache = mem.make(400);
    bool hit = false;
    void* c0 = cache.acquire(100);
    void* c1 = cache.acquire(100);
    void* a0 = cache.acquire(100, tile(0), hit);
    void* a1 = cache.acquire(100, tile(1), hit);
    cache.release(c0), cache.release(c1), cache.release(a0), cache.release(a1);

    void* a2 = cache.acquire(100, tile(2), hit);  // not a C block: its write-back may be running
    void* c2 = cache.acquire(100);
    void* c3 = cache.acquire(100);

    CHECK(a2 == a0);
    CHECK(c2 == c0);  // release order: the first written back is the first reused
    CHECK(c3 == c1);
    CHECK(cache.acquire(100, tile(1), hit) == a1);
    CHECK(hit);
}

// The workspace accounting and the cache of freed large buffers (cala/memory.hpp).

#include <doctest/doctest.h>

#include <cstdlib>

#include "cala/error.hpp"
#include "cala/memory.hpp"
#include "core/workspace.hpp"

using cala::detail::Buffer;

TEST_CASE("workspace cache: large buffers are reused, small ones are not kept, the cap holds") {
    cala::release_workspace_cache();
    const std::int64_t limit = cala::workspace_cache_limit();
    cala::set_workspace_cache_limit(std::int64_t{64} << 20);
    const auto before = cala::memory_stats();
    CHECK(before.cached_bytes == 0);

    double* first = nullptr;
    {
        Buffer<double> big(1 << 20);  // 8 MiB
        first = big.data();
        big[0] = 1, big[(1 << 20) - 1] = 2;
        CHECK(cala::memory_stats().current_bytes == before.current_bytes + (std::int64_t{8} << 20));
    }
    // Freed: kept, not in use.
    CHECK(cala::memory_stats().current_bytes == before.current_bytes);
    CHECK(cala::memory_stats().cached_bytes == std::int64_t{8} << 20);
    {
        Buffer<double> again(900000);  // a little smaller: the same block
        CHECK(again.data() == first);
        // Under MALLOC_PERTURB_ (meson test sets it) a reused block is refilled, as glibc fills a
        // fresh one: the previous owner's data does not show through.
        if (const char* s = std::getenv("MALLOC_PERTURB_"); s != nullptr && (std::atoi(s) & 0xff) != 0)
            CHECK(again[0] != 1.0);
        CHECK(cala::memory_stats().cached_bytes == 0);
        Buffer<double> other(1 << 20);  // nothing kept now: a fresh block
        CHECK(other.data() != first);
    }
    CHECK(cala::memory_stats().cached_bytes > std::int64_t{14} << 20);
    {
        Buffer<double> much_smaller(200000);  // 1.6 MB: less than half a kept block, not served from it
        CHECK(much_smaller.data() != first);
    }
    {
        Buffer<char> small(1000);  // below 1 MiB: straight to malloc, never kept
    }
    CHECK(cala::memory_stats().cached_bytes <= std::int64_t{64} << 20);

    // A buffer larger than the cap is freed at once; lowering the cap frees what no longer fits.
    { Buffer<double> huge(std::int64_t{10} << 20); }  // 80 MiB > 64 MiB
    CHECK(cala::memory_stats().cached_bytes <= std::int64_t{64} << 20);
    cala::set_workspace_cache_limit(std::int64_t{9} << 20);
    CHECK(cala::memory_stats().cached_bytes <= std::int64_t{9} << 20);
    cala::release_workspace_cache();
    CHECK(cala::memory_stats().cached_bytes == 0);
    cala::set_workspace_cache_limit(0);
    { Buffer<double> none(1 << 20); }
    CHECK(cala::memory_stats().cached_bytes == 0);

    CHECK_THROWS_AS(cala::set_workspace_cache_limit(-1), cala::Error);
    cala::set_workspace_cache_limit(limit);
    CHECK(cala::workspace_cache_limit() == limit);
}

// Block-cyclic index arithmetic against brute force, for many shapes, block sizes, sources,
// first-block sizes and process counts.

#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "cala/error.hpp"
#include "cala/layout.hpp"
#include "matrix/redist_plan.hpp"

using cala::Dist1D;
using cala::index_t;

namespace {

// Owner of every index, walking the blocks one by one.
std::vector<int> brute_owners(const Dist1D& d) {
    std::vector<int> own(static_cast<std::size_t>(d.n));
    index_t g = 0;
    for (index_t b = 0; g < d.n; ++b) {
        const index_t size = b == 0 ? d.ib : d.nb;
        for (index_t i = 0; i < size && g < d.n; ++i) own[g++] = static_cast<int>((d.src + b) % d.nprocs);
    }
    return own;
}

std::vector<Dist1D> sample_dists() {
    std::vector<Dist1D> out;
    std::mt19937 rng(7);
    for (int trial = 0; trial < 400; ++trial) {
        const int P = 1 + static_cast<int>(rng() % 5);
        const index_t nb = 1 + rng() % 7;
        const index_t ib = 1 + rng() % nb;
        const index_t n = rng() % 60;
        out.emplace_back(n, nb, P, static_cast<int>(rng() % P), ib);
    }
    return out;
}

}  // namespace

TEST_CASE("Dist1D owner, local sizes and local/global maps agree with brute force") {
    for (const Dist1D& d : sample_dists()) {
        CAPTURE(d.n); CAPTURE(d.nb); CAPTURE(d.ib); CAPTURE(d.src); CAPTURE(d.nprocs);
        const auto own = brute_owners(d);

        std::vector<index_t> seen(static_cast<std::size_t>(d.nprocs), 0);
        for (index_t g = 0; g < d.n; ++g) {
            const int p = own[g];
            REQUIRE(d.owner(g) == p);
            REQUIRE(d.to_local(g) == seen[p]);
            REQUIRE(d.to_global(seen[p], p) == g);
            for (int r = 0; r < d.nprocs; ++r) REQUIRE(d.local_before(g, r) == seen[r]);
            ++seen[p];
        }
        index_t total = 0;
        for (int r = 0; r < d.nprocs; ++r) {
            CHECK(d.local_size(r) == seen[r]);
            total += d.local_size(r);
        }
        CHECK(total == d.n);
    }
}

TEST_CASE("Dist1D::sub is the distribution of the index range it selects") {
    std::mt19937 rng(11);
    for (const Dist1D& d : sample_dists()) {
        const index_t off = d.n == 0 ? 0 : rng() % (d.n + 1);
        const index_t len = rng() % (d.n - off + 1);

        const Dist1D s = d.sub(off, len);

        REQUIRE(s.n == len);
        REQUIRE(s.ib >= 1);
        REQUIRE(s.ib <= s.nb);
        for (index_t i = 0; i < len; ++i) {
            const int p = d.owner(off + i);
            REQUIRE(s.owner(i) == p);
            // Local order is preserved: the sub's local index is the parent's minus what precedes off.
            REQUIRE(s.to_local(i) == d.to_local(off + i) - d.local_before(off, p));
        }
    }
}

TEST_CASE("Dist1D rejects bad arguments with a message naming them") {
    CHECK_THROWS_WITH_AS(Dist1D(-1, 4, 2, 0, 0, "rows"), "rows: size is -1, must be >= 0", cala::Error);
    CHECK_THROWS_AS(Dist1D(10, 0, 2), cala::Error);
    CHECK_THROWS_AS(Dist1D(10, 4, 2, 2), cala::Error);
    CHECK_THROWS_AS(Dist1D(10, 4, 2, 0, 5), cala::Error);
    CHECK_THROWS_AS(Dist1D(10, 4, 2).sub(8, 3), cala::Error);
}

TEST_CASE("64-bit sizes: a 10^6 x 10^6 layout does not overflow") {
    const cala::BlockCyclic l(1000000, 1000000, 256, 256, 64, 64, 3, 5);
    index_t rows = 0;
    for (int r = 0; r < 64; ++r) rows += l.rows.local_size(r);
    CHECK(rows == 1000000);
    CHECK(l.rows.to_global(l.rows.to_local(999999), l.rows.owner(999999)) == 999999);
    CHECK(l.rows.local_size(0) * l.cols.local_size(0) > (index_t{1} << 31) / 16);
}

TEST_CASE("redistribution segments cover the range with constant owners") {
    for (const Dist1D& s : sample_dists()) {
        const Dist1D d(s.n, 1 + s.nb % 3, 1 + (s.nprocs + 1) % 4, 0, 0);
        const auto segs = cala::detail::segments(s, d);
        index_t g = 0;
        for (const auto& sg : segs) {
            REQUIRE(sg.g0 == g);
            REQUIRE(sg.g1 > sg.g0);
            for (index_t i = sg.g0; i < sg.g1; ++i) {
                REQUIRE(s.owner(i) == sg.sproc);
                REQUIRE(d.owner(i) == sg.dproc);
            }
            g = sg.g1;
        }
        CHECK(g == s.n);
    }
}

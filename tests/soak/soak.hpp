#pragma once
// The soak test's draws: one call's kind, grid, sizes and blocks come from a generator seeded by
// (seed, call index) alone, the same on every rank; its data from (seed, call index, world rank).
// So a call is reproduced by its seed and index without replaying the calls before it:
//
//   CALA_SOAK_SEED=<s> CALA_SOAK_FROM=<i> CALA_SOAK_CALLS=<i+1> mpiexec.mpich -n N test_soak
//
// World rank 0 belongs to every grid (at a random position): doctest reports from rank 0 only,
// and every check is reduced over the grid (or the world) before it is made.

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cala/cala.hpp"

namespace cala::soak {

/// splitmix64 of a, b, c: independent generator seeds from one seed.
inline std::uint64_t mix(std::uint64_t a, std::uint64_t b, std::uint64_t c = 0) {
    std::uint64_t x = a ^ (b * 0x9e3779b97f4a7c15ull) ^ (c * 0xc2b2ae3d27d4eb4full);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/// CALA_SOAK_SEED, or a fresh seed drawn on rank 0; the same on every rank.
inline std::uint64_t soak_seed() {
    std::uint64_t s = 0;
    if (const char* e = std::getenv("CALA_SOAK_SEED"))
        s = std::strtoull(e, nullptr, 0);
    else
        s = (std::uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
    MPI_Bcast(&s, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    return s;
}

inline std::int64_t env_int(const char* name, std::int64_t fallback) {
    const char* e = std::getenv(name);
    return e ? std::strtoll(e, nullptr, 10) : fallback;
}

/// The draws of one call (identical on every rank).
class Draw {
public:
    Draw(std::uint64_t seed, std::int64_t index) : g_(mix(seed, static_cast<std::uint64_t>(index), 1)) {}

    int pick(int n) { return static_cast<int>(g_() % static_cast<std::uint64_t>(n)); }
    bool coin(int percent = 50) { return pick(100) < percent; }
    index_t between(index_t lo, index_t hi) {
        return lo + static_cast<index_t>(g_() % static_cast<std::uint64_t>(hi - lo + 1));
    }
    /// A size in [0, max]: 0 and 1 one time in ten each, else anything up to max.
    index_t size(index_t max) {
        const int r = pick(10);
        return r == 0 ? 0 : r == 1 ? 1 : between(2, max);
    }
    Op op() { return static_cast<Op>(pick(3)); }
    std::mt19937_64& engine() { return g_; }

private:
    std::mt19937_64 g_;
};

/// A p x q grid over a random subset of the world (rank 0 always in it, at a random position);
/// the other ranks are idle for the call and hold no grid.
struct SubGrid {
    Comm comm;                   ///< the subset's communicator (null on idle ranks)
    std::optional<Grid2D> grid;  ///< on members only
    int size = 0, p = 0, q = 0;
    GridOrder order = GridOrder::RowMajor;

    bool member() const { return grid.has_value(); }
    std::string describe() const {
        return std::to_string(p) + "x" + std::to_string(q) + (order == GridOrder::RowMajor ? "R" : "C") + " of " +
               std::to_string(size);
    }
};

/// Collective over the world. whole_world: every rank in the grid (its shape and the ranks'
/// positions still drawn).
inline SubGrid draw_grid(Draw& d, const Comm& world, bool whole_world) {
    const int w = world.size();
    SubGrid s;
    s.size = whole_world ? w : static_cast<int>(d.between(1, w));
    std::vector<int> ranks(static_cast<std::size_t>(w));
    for (int r = 0; r < w; ++r) ranks[static_cast<std::size_t>(r)] = r;
    std::shuffle(ranks.begin() + 1, ranks.end(), d.engine());  // rank 0 stays in
    std::vector<int> key(static_cast<std::size_t>(s.size));
    for (int i = 0; i < s.size; ++i) key[static_cast<std::size_t>(i)] = i;
    std::shuffle(key.begin(), key.end(), d.engine());  // position in the subset
    std::vector<int> divisors;
    for (int p = 1; p <= s.size; ++p)
        if (s.size % p == 0) divisors.push_back(p);
    s.p = divisors[static_cast<std::size_t>(d.pick(static_cast<int>(divisors.size())))];
    s.q = s.size / s.p;
    s.order = d.coin() ? GridOrder::RowMajor : GridOrder::ColumnMajor;
    int color = MPI_UNDEFINED, mykey = 0;
    for (int i = 0; i < s.size; ++i)
        if (ranks[static_cast<std::size_t>(i)] == world.rank()) {
            color = 0;
            mykey = key[static_cast<std::size_t>(i)];
        }
    s.comm = world.split(color, mykey);
    if (color == 0) s.grid.emplace(s.comm, s.p, s.q, s.order);
    return s;
}

/// A p x q x c shape (c >= 2) of at most `ranks` ranks; c = 0 if ranks < 2.
inline Shape3D draw_shape3d(Draw& d, int ranks) {
    if (ranks < 2) return {0, 0, 0};
    const int c = static_cast<int>(d.between(2, ranks));
    const int p = static_cast<int>(d.between(1, ranks / c));
    const int q = static_cast<int>(d.between(1, ranks / (c * p)));
    return {p, q, c};
}

/// Condition true on every rank of the world.
inline bool world_all(bool ok) {
    int v = ok ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return v == 1;
}

/// Deterministic value of global entry (i, j) of matrix `which` of a call, in [-1, 1)
/// (complex: both parts).
template <class T>
T entry(std::uint64_t call_seed, int which, index_t i, index_t j) {
    auto u = [&](int part) {
        const std::uint64_t x = mix(call_seed ^ static_cast<std::uint64_t>(which * 4 + part),
                                    static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(j));
        return static_cast<real_t<T>>(static_cast<double>(x >> 11) * 0x1.0p-52 - 1.0);
    };
    if constexpr (is_complex_v<T>)
        return T(u(0), u(1));
    else
        return u(0);
}

}  // namespace cala::soak

#pragma once
// Hostile-input tables (issue 16, item 4): one row per bad call of a public entry point.
//
// A row is a call and what it must do:
//   * expect != "": throw cala::Error on every rank, with the same message everywhere, containing
//     `expect` (the argument it names); the caller's arrays (padding included) bitwise unchanged;
//   * expect == "": return normally on every rank, and `after()` hold on every rank (NaN/Inf
//     propagation, an oversized leading dimension whose padding stays untouched, ...).
// Every row runs under a watchdog: a row still running after CALA_HOSTILE_TIMEOUT_S seconds
// (default 60) prints its name and ends the process (mpiexec then ends the job), so a hang is a
// failure with a name, well before meson's timeout.

#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "support/helpers.hpp"

namespace cala::hostile {

struct Row {
    std::string name;
    std::function<void()> call;
    std::string expect;                      ///< substring of the error; "" = no error
    std::function<bool()> after = nullptr;   ///< local condition after a call without error
};

/// Bitwise snapshots of the caller's memory regions.
class Guard {
public:
    void watch(const void* p, std::size_t bytes);
    template <class T>
    void watch(const std::vector<T>& v) { watch(v.data(), v.size() * sizeof(T)); }
    bool untouched() const;

private:
    struct Region {
        const void* p;
        std::vector<unsigned char> bytes;
    };
    std::vector<Region> regions_;
};

/// Runs the rows of `entry`'s table over `comm` (every rank runs every row, in order) and
/// checks each; adds the row count to the summary printed at exit.
void run_table(const Comm& comm, const std::string& entry, const std::vector<Row>& rows, const Guard& guard);

/// Local storage a user owns: `front` elements before the array, ld = max(1, m_loc) + pad, and
/// `back` elements after, all of it filled with a pattern (random values in the array, a
/// sentinel elsewhere) so that any stray write shows.
template <class T>
struct Local {
    static constexpr index_t front = 8, back = 8;
    std::vector<T> store;
    index_t m_loc = 0, n_loc = 0, ld = 1;
    MatrixRef<T> ref;

    Local(const Grid2D& g, const BlockCyclic& l, index_t pad = 2)
        : m_loc(l.rows.local_size(g.row())), n_loc(l.cols.local_size(g.col())),
          ld(std::max<index_t>(1, m_loc) + pad),
          ref(g, l, nullptr, ld) {
        store.assign(static_cast<std::size_t>(front + ld * std::max<index_t>(n_loc, 1) + back), sentinel());
        ref = MatrixRef<T>(g, l, store.data() + front, ld);
        test::randomize(ref);
    }
    Local(const Grid2D& g, index_t m, index_t n, index_t nb, index_t pad = 2)
        : Local(g, BlockCyclic(m, n, nb, nb, g.p(), g.q()), pad) {}
    static T sentinel() { return T(-12345.0f); }
    T* data() { return store.data() + front; }
    /// Nothing outside the m_loc x n_loc array changed.
    bool padding_untouched() const {
        for (std::size_t i = 0; i < store.size(); ++i) {
            const auto k = static_cast<index_t>(i) - front;
            const bool inside = k >= 0 && k < ld * n_loc && k % ld < m_loc;
            if (!inside && std::memcmp(&store[i], &sentinel_value, sizeof(T)) != 0) return false;
        }
        return true;
    }
    /// Sets global entry (i, j) if this rank holds it.
    void set(index_t i, index_t j, T v) {
        const auto& l = ref.layout();
        if (l.rows.owner(i) == ref.grid().row() && l.cols.owner(j) == ref.grid().col())
            ref.local(l.rows.to_local(i), l.cols.to_local(j)) = v;
    }

private:
    inline static const T sentinel_value = sentinel();
};

/// MPI_COMM_WORLD, borrowed.
inline const Comm& world() {
    static const Comm c = Comm::borrow(MPI_COMM_WORLD);
    return c;
}

/// The whole matrix on every rank (gathered on 0, broadcast).
template <class T>
std::vector<T> everywhere(const MatrixRef<T>& a) {
    std::vector<T> all = gather(a, 0);
    all.resize(static_cast<std::size_t>(a.m() * a.n()));
    MPI_Bcast(all.data(), static_cast<int>(all.size() * sizeof(T)), MPI_BYTE, 0, a.grid().comm().get());
    return all;
}

}  // namespace cala::hostile

#pragma once
// on_one_row: a p x 1 grid's matrix moved onto the 1 x p grid of the same ranks (the plan of
// model/one_row.hpp), an algorithm run on it there, and the matrix moved back.

#include <algorithm>
#include <utility>

#include "cala/grid3d.hpp"
#include "core/workspace.hpp"
#include "matrix/redistribute_impl.hpp"

namespace cala::detail {

/// Collective over a's grid: f(MatrixRef over `work` on `one`'s layer grid) between the two moves;
/// `one` is the 1 x p x 1 grid of a's ranks. Returns what f returns.
template <class T, class F>
auto on_one_row(const MatrixRef<T>& a, const Grid3D& one, const BlockCyclic& work, F&& f) {
    const Grid2D& wg = one.layer_grid();
    const index_t mloc = work.rows.local_size(0), nloc = work.cols.local_size(wg.col());
    const index_t ld = std::max<index_t>(1, mloc);
    Buffer<T> store(mloc * nloc);
    const Placement user = placement_of(a.grid(), a.layout()), there = placement_of(wg, work);
    redistribute_placed(Op::N, one.comm(), user, a.data(), a.ld(), there, store.data(), ld, false, T(0));
    auto result = std::forward<F>(f)(MatrixRef<T>(wg, work, store.data(), ld));
    redistribute_placed(Op::N, one.comm(), there, static_cast<const T*>(store.data()), ld, user, a.data(), a.ld(),
                        false, T(0));
    return result;
}

}  // namespace cala::detail

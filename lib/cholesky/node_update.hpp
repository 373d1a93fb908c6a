#pragma once
// Internal: one step's trailing update of cala::potrf on one rank through the units of a device
// list (issue 19, item 4): C(i, j) -= L(i, l)·L(j, l)ᴴ for the rank's row tiles i and column
// tiles j with i >= j (global tile indices), split so that nothing above the diagonal is
// written. stair(J, rmax) covers the tiles (i, j), j in J, j <= i < rmax:
//
//   |J| == 1:  on the calling thread (the rank's cores): herk on the diagonal tile (its lower
//              half only), gemm on the tiles below it
//   otherwise: J = J1 | J2 (halves); the rectangle J1 x {i : first(J2) <= i < rmax}, strictly
//              below the diagonal, goes to cala::device_gemm (the node: the allocation over all
//              units, when the list names more than one kind of unit); then stair(J1, first(J2))
//              and stair(J2, rmax).
//
//   e.g. my columns 2 4 6 8, my rows 2..9:          2  4  6  8
//     rectangle rows 6..9 x columns {2, 4}     2   d
//     stair({2, 4}, 6): rectangle rows 4..5    3   x
//       x column 2, leaves 2 (rows 2..3) and   4   r  d
//       4 (rows 4..5)                          5   r  x
//     stair({6, 8}, inf): rectangle rows 8..9  6   R  R  d
//       x column 6, leaves 6 (rows 6..7) and   7   R  R  x
//       8 (rows 8..9)                          8   R  R  r  d
//                                              9   R  R  r  x
//   (d: herk, x: cpu gemm of a leaf, R and r: device_gemm rectangles)
//
// (The rectangles may go elsewhere: stair_update with a StairRect.)
// |J| - 1 device_gemm calls per step; the first carries about half of the step's flops. The
// node's tile moves stay inside the rank: no message changes.

#include <functional>
#include <vector>

#include "cala/device.hpp"
#include "cala/types.hpp"

namespace cala::detail {

/// One step's lower trailing update on a rank, in the rank's local coordinates.
template <class T>
struct StairUpdate {
    std::vector<index_t> row_g;   ///< my row tiles in order: global tile index
    std::vector<index_t> row_at;  ///< their first row in a and c, and (last entry) the end
    std::vector<index_t> col_g;   ///< my column tiles in order: global tile index
    std::vector<index_t> col_at;  ///< their first row in b / column in c, and the end
    index_t k = 0;
    const T* a = nullptr;  ///< L(i, l) of my rows: row_at.back() x k
    index_t lda = 0;
    const T* b = nullptr;  ///< L(j, l) of my columns: col_at.back() x k
    index_t ldb = 0;
    T* c = nullptr;  ///< the trailing tiles: row_at.back() x col_at.back()
    index_t ldc = 0;
};

/// Runs the update (see above) with the rectangles on `dev`; poll() between them (MPI progress).
template <class T>
void stair_update(const StairUpdate<T>& s, const DeviceGemmOptions& dev, const std::function<void()>& poll);

/// The same with the rectangles (c -= a·bᴴ, m x n, depth s.k, s's leading dimensions) given to
/// `rect` (delayed.cpp: one host GEMM each, wide where per-column calls are narrow).
template <class T>
using StairRect = std::function<void(index_t m, index_t n, const T* a, const T* b, T* c)>;
template <class T>
void stair_update(const StairUpdate<T>& s, const StairRect<T>& rect, const std::function<void()>& poll);

}  // namespace cala::detail

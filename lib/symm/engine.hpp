#pragma once
// The stationary-A SYMM/HEMM engine, written once for every layout of A (2DBC, SBC, TBC): A's
// stored tiles never move; B's block row l travels to the ranks that hold A's block row and
// column l (its "row set"), and their partial sums of C's block row l travel back to C's owner.
//
//   TBC c = 2 (P = 6), block row l with l mod 4 = 0, row set {0, 2, 4}, B(l, x) on rank 2:
//     ibcast B(l, x) from 2 over {0, 2, 4}       (2 words·|tile| received in all)
//     each of 0, 2, 4: W(l, :) += A(l, j)·B(j, :) + A(i, l)ᵀ·B(i, :) on its own tiles of A
//     0 and 4 isend their W(l, x) to 2; 2 sums: C(l, x) = alpha·ΣW + beta·C(l, x)
//
// Lookahead: every broadcast and every receive of a partial sum is posted first; a product waits
// only for its own two block rows of B, and W(l) leaves as soon as the last column of A that adds
// to it on this rank is done (in ascending l, the order in which the owners posted their receives).
//
// Right side (C := B·A) runs as the left side of Cᵀ = A·Bᵀ (Cᴴ = A·Bᴴ for HEMM): the roots
// transpose B's tile into the broadcast buffer and the sum back into C's tile; the wire carries
// the same words.

#include <functional>
#include <utility>
#include <vector>

#include "cala/comm.hpp"
#include "cala/layout.hpp"
#include "cala/model.hpp"
#include "cala/tiled_matrix.hpp"
#include "core/workspace.hpp"

namespace cala::detail {

/// Where A's tiles, B's and C's tiles and the row sets are, for one call.
struct SymmGeometry {
    index_t nblk = 0;                                ///< blocks of A along each dimension
    std::function<index_t(index_t)> bsize;           ///< size of A's block l (square tiles)
    Dist1D ncut;                                     ///< blocks along n (B's columns, Left; rows, Right)
    bool lower = true;                               ///< A's stored triangle
    std::function<int(index_t, index_t)> owner_a;    ///< rank of stored tile (i, j) of A
    std::function<int(index_t, index_t)> owner_bc;   ///< rank of B's and C's tile (A block l, n block x)
    std::vector<std::vector<int>> sets;              ///< row sets, ascending ranks
    std::function<int(index_t)> set_of;              ///< row set of A's block l
};

/// The geometry of A on a p x q grid (block-cyclic, square tiles, B's and C's blocks along A's
/// dimension distributed like A's rows (Left) or columns (Right)): row set of block l = process
/// row of A's block row l and process column of A's block column l, p + q − 1 ranks.
SymmGeometry geometry_2dbc(Side side, bool lower, const BlockCyclic& a, const BlockCyclic& b, GridOrder order);
/// The geometry of A on a symmetric layout (lower half) and B, C paired with it.
SymmGeometry geometry_tiled(Side side, const TileLayout& a, const TileLayout& b);

/// Local storage of one operand: tile (i, j) (A: block indices; B, C: A block l, n block x) on
/// this rank, with its leading dimension.
template <class T>
using TileAt = std::function<std::pair<T*, index_t>(index_t, index_t)>;

/// C := alpha·A·B + beta·C (Left) or alpha·B·A + beta·C (Right) with A symmetric (herm: Hermitian).
/// Collective over comm; arguments already checked and agreed.
template <class T>
void symm_engine(const Comm& comm, const SymmGeometry& g, Side side, bool herm, T alpha, const TileAt<T>& a,
                 const TileAt<T>& b, T beta, const TileAt<T>& c);

/// The communicators of the row sets (each made once per communicator and set, then cached; an
/// empty Comm where this rank is not in the set). Collective over comm when one is made.
std::vector<const Comm*> set_comms(const Comm& comm, const std::vector<std::vector<int>>& sets);
void release_set_comms() noexcept;

/// The row-set broadcasts (SYMM's first phase, all of SYRK's communication): B'(l, :), nb_l x n
/// (Right: top(B(:, l))), for every block row l whose row set holds this rank, at offset pos[l]
/// of the returned buffer (pos[l] = -1 elsewhere). Collective over comm. pending null: returns
/// with every broadcast complete; else returns at once, (*pending)[l] holding row l's requests.
template <class T>
Buffer<T> broadcast_rows(const Comm& comm, const SymmGeometry& g, Side side, Op top, const TileAt<T>& b,
                         std::vector<index_t>& pos, std::vector<std::vector<Request>>* pending = nullptr);
Cost broadcast_rows_cost(const SymmGeometry& g, int rank);

/// Exact words, messages and flops of symm_engine on communicator rank `rank`.
Cost symm_engine_cost(const SymmGeometry& g, int rank, bool is_complex);

}  // namespace cala::detail

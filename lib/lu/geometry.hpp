#pragma once
// The step geometry of cala::getrf on a p x q grid, shared by the engine (engine.cpp) and the
// cost model (model.cpp) so that the two walk the same schedule. Pure arithmetic, no MPI.
//
// Rows and columns are cut alike (mb == nb, the same first block ib): step l factors the panel
// of columns [k0, k0 + kb), k0 = start(l), kb = width(l), whose diagonal block lives on process
// (pr, pc) = (ro(l), co(l)). Step l on rank (r, c):
//   T  [c == pc] tournament: local getrf on my rows >= k0 of the panel, kb candidates; a binary
//      tree over the process rows rooted at pr (relative row v sends its kb x (kb+2) candidates,
//      values and row indices, to v - s at the first level s where v mod 2s == s)
//   I  the root's LU of the winning rows with their indices (kb x (kb+2)) down column pc from pr,
//      then along every process row from pc: to row pr all of it and the step's first zero pivot
//      (+1 word), to the other rows the indices and the zero pivot (2·kb + 1): every rank knows
//      the pivots and info, row pr and column pc L11\U11
//   X  the interchanges on all my columns: only the rows that change place move, point to point
//      between process row pr (the diagonal block row D) and the process rows that hold pivots
//      (exchange_counts: one message each way per such row, rows x n_loc words)
//   P  [c == pc] rows below the block: A21 := A21·U11⁻¹; [r == pr] columns right of the panel:
//      A12 := L11⁻¹·A12
//   B  L21 along every process row from pc (my rows below the block x kb); U12 down every process
//      column from pr (kb x my columns right of the panel)
//   U  A22 -= L21·U12 on my rows below the block and columns right of the panel

#include <algorithm>
#include <span>
#include <utility>
#include <vector>

#include "cala/layout.hpp"

namespace cala::detail {

/// One step's row movement as (position, source) pairs, position != source, sorted by position:
/// after it, row `position` holds what row `source` held. Every source of a position outside
/// [k0, k0 + kb) lies inside it (and so does every such position's inverse): every move touches D.
using Moves = std::vector<std::pair<index_t, index_t>>;
/// The moves of the interchanges ipiv[k0 .. k0 + kb) (global, ipiv[i] >= i) applied in order.
Moves step_moves(std::span<const index_t> ipiv, index_t k0, index_t kb);
/// The moves that undo `m`.
Moves inverse_moves(const Moves& m);

/// The messages of one step's interchanges over the p process rows, D = rows [k0, k0 + kb) on
/// process row pr: process row r != pr sends to_d[r] rows into D and receives from_d[r] of D's
/// rows (one message each way where nonzero); the moves inside one process row are local.
struct ExchangeCounts {
    std::vector<index_t> to_d, from_d;
};
ExchangeCounts exchange_counts(const Dist1D& rows, index_t k0, index_t kb, const Moves& moves);

struct LuGeom {
    Dist1D rows, cols;

    index_t kmax() const noexcept { return std::min(rows.n, cols.n); }
    /// Panel steps: the blocks that start below min(m, n).
    index_t steps() const noexcept { return kmax() == 0 ? 0 : rows.block_of(kmax() - 1) + 1; }
    index_t start(index_t l) const noexcept { return rows.block_start(l); }
    index_t width(index_t l) const noexcept {
        const index_t full = l == 0 ? rows.ib : rows.nb;
        return std::min(full, kmax() - start(l));
    }
    int p() const noexcept { return rows.nprocs; }
    int q() const noexcept { return cols.nprocs; }
    int ro(index_t l) const noexcept { return rows.block_owner(l); }
    int co(index_t l) const noexcept { return cols.block_owner(l); }
    /// My local rows (columns) with global index >= g: the suffix [first, local size).
    index_t row_from(index_t g, int r) const noexcept { return rows.local_before(g, r); }
    index_t col_from(index_t g, int c) const noexcept { return cols.local_before(g, c); }

    /// The tournament tree of step l on process row r: the level s at which r sends (0: the root,
    /// it never sends) and the number of candidate sets it receives before.
    struct TreeRole {
        int send_to = -1;   ///< process row it sends to, -1 for the root
        int receives = 0;   ///< messages received
    };
    TreeRole tree_role(index_t l, int r) const noexcept {
        const int pp = p(), root = ro(l);
        const int v = (r - root + pp) % pp;
        TreeRole t;
        for (int s = 1; s < pp; s *= 2) {
            if (v % (2 * s) == s) {
                t.send_to = (v - s + root) % pp;
                break;
            }
            if (v + s < pp) ++t.receives;
        }
        return t;
    }
};

}  // namespace cala::detail

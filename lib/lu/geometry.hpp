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
#include <functional>
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

/// The messages of a general row permutation over the p process rows (permute_rows): process row
/// `row` sends send[q] rows to process row q and receives recv[q] rows from it (0 for q == row:
/// those moves are local copies).
struct PermuteCounts {
    std::vector<index_t> send, recv;
};
PermuteCounts permute_counts(const Dist1D& rows, int row, const Moves& moves);

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

/// The interchanges of L's columns deferred to the end of getrf on p > 1 process rows (on one,
/// swap_left does it in place): block b's columns (panel b, final after step b but for the later
/// steps' interchanges) take, at every row x, the row that steps b+1, b+2, ... bring to x:
/// sigma_b(x) = mu_{b+1}(mu_{b+2}(...(x))), mu_l(x) the source of position x in step l's moves.
/// Walked backwards (back_to(steps - 2), ..., back_to(0)), each step in O(kb); moves() lists
/// sigma_b's non-identity entries in O(m). Every rank computes the same, from ipiv alone.
class DeferredMoves {
public:
    DeferredMoves(const LuGeom& g, std::span<const index_t> ipiv);
    /// Now sigma_b: step b+1's moves composed in (call with b = steps - 2 down to 0, in order).
    void back_to(index_t b);
    /// sigma_b's moves (position, source), by position (all positions >= start(b + 1)).
    Moves moves() const;

private:
    const LuGeom& g_;
    std::span<const index_t> ipiv_;
    std::vector<index_t> src_, inv_;  // sigma_b and its inverse over rows [0, m)
    index_t from_ = 0;                // start(b + 1): rows above never move
};

/// The deferred interchanges of process column c in messages: the blocks b it owns whose
/// composite (DeferredMoves) moves any row, the last first, consecutive ones in one group while the
/// group's rows x widths stay within one step's exchange buffer (nb x the column's local width; a
/// larger block alone). fn(blocks, their moves) per group, in order. The same groups on every rank
/// of the column.
using DeferredGroupFn = std::function<void(const std::vector<index_t>& blocks, const std::vector<Moves>& moves)>;
void for_each_deferred_group(const LuGeom& g, int c, std::span<const index_t> ipiv, const DeferredGroupFn& fn);

}  // namespace cala::detail

#pragma once
// Internal: the schedule of the resident 2D Cholesky (lib/resident/potrf_2d.cpp), shared with its
// cost model (potrf_model.cpp) so that the two walk the same steps. Pure arithmetic, no MPI.
//
// Written once for the lower triangle. Uplo::Upper factors Aᴴ's lower triangle in place: the
// "virtual" grid is the transposed one (virtual rows are A's column distribution, virtual
// columns its row distribution) and a virtual tile (i, j) is A's tile (j, i) read transposed.
// Tile (i, j), i >= j, lives at virtual process (ro(i), co(j)). Step l:
//   1 potrf of tile (l, l) on (ro(l), co(l))
//   2 L(l, l) down virtual column co(l) from ro(l)            [vp > 1 and l + 1 < mt]
//   3 trsm of the panel tiles (i > l, ro(i) = r) on column co(l)
//   4 the panel rows of virtual row r along the row from co(l) [vq > 1, r holds a panel tile]
//   5 for each r', the tiles j > l with ro(j) = r', co(j) = c down column c from r'  [vp > 1]
//   6 trailing update of my tiles (i, j), i >= j > l: herk on i = j, gemm below
// (the 2D schedule of cala::potrf's host engine, lib/cholesky/geometry.hpp with h = 1).

#include <algorithm>
#include <vector>

#include "cala/layout.hpp"
#include "cholesky/plan.hpp"

namespace cala::detail {

struct ResPotrfGeom : CholGeom {
    // CholGeom's rows and cols are the virtual rows (the panel's dimension) and columns; with
    // h > 1 (the replicated-diagonal 2.5D schedule, lib/resident/potrf_25d.cpp: Lower only)
    // they are each layer's p x q layout and `me` this rank's layer.
    int r = 0, c = 0;  ///< this rank's virtual row and column
    int me = 0;        ///< this rank's layer

    int vp() const noexcept { return p(); }
    int vq() const noexcept { return q(); }
    /// Local virtual row / column offset of tile i (an owner's).
    index_t xr(index_t i) const noexcept { return rows.local_before(start(i), r); }
    index_t yc(index_t j) const noexcept { return cols.local_before(cols.block_start(j), c); }
    index_t rows_loc() const noexcept { return rows.local_size(r); }
    /// Rows of my panel tiles of step l (tiles i > l of my virtual row), and where they start.
    index_t x0(index_t l) const noexcept { return l + 1 < mt() ? xr(l + 1) : rows_loc(); }
    index_t nrows(index_t l) const noexcept { return rows_loc() - x0(l); }
    /// Columns of tile column l this layer updates with (all of them on one layer).
    index_t width(index_t l) const noexcept {
        const auto [s0, s1] = slice(l, me);
        return s1 - s0;
    }
    /// Whether step 2, 4 travel on this rank's communicators (the same on all of them).
    bool diag_travels(index_t l) const noexcept { return vp() > 1 && c == co(l) && layer_solves(l, me); }
    bool row_travels(index_t l) const noexcept { return vq() > 1 && nrows(l) > 0 && width(l) > 0; }

    /// Device slots in elements: L(l, l) (vp > 1), two panels of my rows (vq > 1, or h > 1: the
    /// assembled panel), two sets of the column pieces of my columns (vp > 1); each the largest
    /// over the steps.
    struct Slots {
        index_t diag = 0, rows = 0, cols = 0;
        index_t total() const noexcept { return diag + 2 * rows + 2 * cols; }
    };
    Slots slots() const {
        Slots s;
        for (index_t l = 0; l < mt(); ++l) {
            const index_t b = size(l), w = width(l);
            if (vp() > 1) {
                if (c == co(l) && layer_solves(l, me)) s.diag = std::max(s.diag, b * b);
                index_t cols = 0;
                for (index_t j = l + 1; j < mt(); ++j)
                    if (co(j) == c) cols += size(j);
                s.cols = std::max(s.cols, cols * w);
            }
            if (vq() > 1 || h > 1) s.rows = std::max(s.rows, nrows(l) * w);
        }
        return s;
    }
};

/// The layout the factorization runs on: A's own where its tiles are square and aligned with the
/// diagonal, or on one rank (the whole matrix is one local array); else nb x nb tiles (nb: A's
/// column block) from A's source process, A redistributed into it and back.
inline BlockCyclic res_potrf_layout(const BlockCyclic& a) {
    if (a.p() * a.q() == 1 || chol_aligned(a)) return a;
    return BlockCyclic(a.m(), a.n(), a.cols.nb, a.cols.nb, a.p(), a.q(), a.rows.src, a.cols.src);
}

/// The geometry of process (row, col) for Uplo `upper` on layout a (square tiles, aligned).
inline ResPotrfGeom res_potrf_geom(bool upper, const BlockCyclic& a, int row, int col) {
    ResPotrfGeom g;
    g.rows = upper ? a.cols : a.rows;
    g.cols = upper ? a.rows : a.cols;
    g.r = upper ? col : row;
    g.c = upper ? row : col;
    return g;
}

}  // namespace cala::detail

#pragma once
// What cala::trsm moves before its tile loop, and the loop's buffers. Pure arithmetic, shared by
// the driver (trsm.cpp) and the cost model (trsm_model.cpp).
//
// The loop (trsm_2d.cpp) needs square tiles of op(A) that line up with B's row blocks:
//   A's row and column Dist1D equal in n, nb, ib;  B's row Dist1D == A's row Dist1D.
// Otherwise, and always for op = T/C (the loop solves with op(A) stored explicitly):
//   * op = N, A has square tiles, B does not line up with them, 2·nrhs < n:
//       B moves to (A's rows, B's columns) and back (2·n·nrhs words instead of n²);
//   * else A moves, transposed by op, to (B's rows, columns blocked alike over q).

#include <algorithm>

#include "cala/cholesky.hpp"

namespace cala::detail {

struct TrsmPlan {
    bool lower = true;      ///< triangle of op(A) the loop reads (op = T/C flips uplo)
    bool move_a = false;    ///< op(A) is redistributed (with a_op) into a_layout
    Op a_op = Op::N;
    BlockCyclic a_layout;   ///< layout the loop reads op(A) in
    bool move_b = false;    ///< B is redistributed into b_layout, solved there, and moved back
    BlockCyclic b_layout;   ///< layout the loop solves B in
    int lookahead = 1;
};

inline bool square_tiles(const BlockCyclic& a) {
    return a.rows.n == a.cols.n && a.rows.nb == a.cols.nb && a.rows.ib == a.cols.ib;
}

inline TrsmPlan plan_trsm(Uplo uplo, Op op, const BlockCyclic& a, const BlockCyclic& b, const TrsmOptions& o) {
    TrsmPlan pl;
    pl.lookahead = o.lookahead;
    pl.lower = (uplo == Uplo::Lower) == (op == Op::N);
    pl.a_layout = a;
    pl.b_layout = b;
    const bool tiles = square_tiles(a);
    if (op == Op::N && tiles && a.rows == b.rows) return pl;
    if (op == Op::N && tiles && 2 * b.n() < a.n()) {
        pl.move_b = true;
        pl.b_layout = BlockCyclic(a.rows, b.cols);
        return pl;
    }
    pl.move_a = true;
    pl.a_op = op;
    const Dist1D& r = b.rows;
    pl.a_layout = BlockCyclic(r, Dist1D(r.n, r.nb, a.q(), a.cols.src, r.ib, "trsm: columns of op(A)"));
    return pl;
}

/// Buffers of the tile loop on one rank: panel slots (m_loc x wmax each, when q > 1) and solved
/// block rows (wmax x nrhs_loc each, when p > 1), in elements.
struct TrsmBuffers {
    index_t wmax = 0, slots_a = 0, slots_x = 0, panel_elems = 0, x_elems = 0;
};

inline TrsmBuffers trsm_buffers(const BlockCyclic& a, const BlockCyclic& b, int lookahead, int row, int col) {
    TrsmBuffers t;
    const Dist1D& d = a.rows;
    const index_t nblk = d.num_blocks();
    if (nblk == 0 || b.n() == 0) return t;
    t.wmax = d.block_size(0);
    if (nblk > 1) t.wmax = std::max(t.wmax, d.block_size(1));
    t.slots_a = std::min<index_t>(lookahead + 1, nblk);
    t.slots_x = lookahead > 0 && nblk > 1 ? 2 : 1;
    const index_t m_loc = d.local_size(row), n_loc = b.cols.local_size(col);
    if (a.q() > 1 && m_loc > 0) t.panel_elems = t.slots_a * m_loc * t.wmax;
    if (a.p() > 1 && n_loc > 0) t.x_elems = t.slots_x * t.wmax * n_loc;
    return t;
}

/// The tile loop on aligned operands (see trsm_2d.cpp): B := op(A)⁻¹·B with op(A) stored in a.
template <class T>
void trsm_2d(bool lower, bool unit, int lookahead, const MatrixRef<T>& a, const MatrixRef<T>& b);

}  // namespace cala::detail

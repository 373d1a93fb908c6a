#pragma once
// What cala::trsm moves before its tile loops, and the loops' buffers and row ranges. Pure
// arithmetic, shared by the driver (trsm.cpp), the loops (trsm_2d*.cpp) and the cost model.
//
// The loops need square tiles of A that line up with B's row blocks:
//   A's row and column Dist1D equal in n, nb, ib;  B's row Dist1D == A's row Dist1D.
// Otherwise (the same decision for every op, so potrs moves once for both solves):
//   * A has square tiles, B does not line up with them, 2·nrhs < n:
//       B moves to (A's rows, B's columns) and back (2·n·nrhs words instead of n²);
//   * else A moves to (B's rows, columns blocked alike over q).
// op = T/C needs no transposed copy: trsm_2d_trans.cpp reads the stored triangle as it is.

#include <algorithm>

#include "cala/cholesky.hpp"

namespace cala::detail {

struct TrsmPlan {
    bool move_a = false;    ///< A is redistributed into a_layout
    BlockCyclic a_layout;   ///< layout the loops read A in
    bool move_b = false;    ///< B is redistributed into b_layout, solved there, and moved back
    BlockCyclic b_layout;   ///< layout the loops solve B in
    int lookahead = 1;
};

inline bool square_tiles(const BlockCyclic& a) {
    return a.rows.n == a.cols.n && a.rows.nb == a.cols.nb && a.rows.ib == a.cols.ib;
}

inline TrsmPlan plan_trsm(const BlockCyclic& a, const BlockCyclic& b, const TrsmOptions& o) {
    TrsmPlan pl;
    pl.lookahead = o.lookahead;
    pl.a_layout = a;
    pl.b_layout = b;
    const bool tiles = square_tiles(a);
    if (tiles && a.rows == b.rows) return pl;
    if (tiles && 2 * b.n() < a.n()) {
        pl.move_b = true;
        pl.b_layout = BlockCyclic(a.rows, b.cols);
        return pl;
    }
    pl.move_a = true;
    const Dist1D& r = b.rows;
    pl.a_layout = BlockCyclic(r, Dist1D(r.n, r.nb, a.q(), a.cols.src, r.ib, "trsm: columns of A"));
    return pl;
}

/// A right-side solve X·op(A) = alpha·B as a left-side one: Bᵀ (Bᴴ for op = C) in `bt_layout`
/// (rows: A's rows, so the loops need no move when A has square tiles; columns: B's row blocking
/// over q), solved with op(A) replaced by `op`, moved back with `move`.
struct RightProblem {
    Op move = Op::T;  ///< the redistribution into and out of bt_layout
    Op op = Op::T;    ///< op of the left-side solve on the stored triangle
    BlockCyclic bt_layout;
};

inline RightProblem right_problem(Op op, const BlockCyclic& a, const BlockCyclic& b) {
    RightProblem r;
    r.move = op == Op::C ? Op::C : Op::T;
    r.op = op == Op::N ? Op::T : Op::N;
    const Dist1D& br = b.rows;
    r.bt_layout = BlockCyclic(a.rows, Dist1D(br.n, br.nb, a.q(), 0, br.ib, "trsm: columns of B transposed"));
    return r;
}

/// Buffers of a tile loop on one rank, in elements: panel slots (m_loc x wmax each, when q > 1)
/// and block-row slots (wmax x nrhs_loc each, when p > 1): solved block rows broadcast (op = N)
/// or partial sums reduced (op = T/C).
struct TrsmBuffers {
    index_t wmax = 0, slots_a = 0, slots_x = 0, panel_elems = 0, x_elems = 0;
};

inline TrsmBuffers trsm_buffers(const BlockCyclic& a, const BlockCyclic& b, Op op, int lookahead, int row, int col) {
    TrsmBuffers t;
    const Dist1D& d = a.rows;
    const index_t nblk = d.num_blocks();
    if (nblk == 0 || b.n() == 0) return t;
    t.wmax = d.block_size(0);
    if (nblk > 1) t.wmax = std::max(t.wmax, d.block_size(1));
    t.slots_a = std::min<index_t>(lookahead + 1, nblk);
    t.slots_x = op != Op::N ? t.slots_a : lookahead > 0 && nblk > 1 ? 2 : 1;
    const index_t m_loc = d.local_size(row), n_loc = b.cols.local_size(col);
    if (a.q() > 1 && m_loc > 0) t.panel_elems = t.slots_a * m_loc * t.wmax;
    if (a.p() > 1 && n_loc > 0) t.x_elems = t.slots_x * t.wmax * n_loc;
    return t;
}

/// Local row ranges of block k on process row r for the stored triangle (lower or upper): the
/// panel [p0, p1) of A(:, k) a rank holds, the diagonal block [d0, d0 + w) (its owner row only),
/// and the rest of the panel [u0, u1) (rows updated by X_k, or summed into the partial of X_k).
struct StepRows {
    index_t p0, p1, d0, w, u0, u1;
    bool owner;
};

inline StepRows step_rows(const Dist1D& d, bool lower, index_t k, int r) {
    StepRows s{};
    const index_t g0 = d.block_start(k);
    s.w = d.block_size(k);
    s.owner = d.block_owner(k) == r;
    const index_t before = d.local_before(g0, r), after = before + (s.owner ? s.w : 0);
    if (lower) {
        s.p0 = before, s.p1 = d.local_size(r), s.d0 = before, s.u0 = after, s.u1 = s.p1;
    } else {
        s.p0 = 0, s.p1 = after, s.d0 = before, s.u0 = 0, s.u1 = before;
    }
    return s;
}

/// Block solved at step s: forward (k = s) for op(A) lower, backward for op(A) upper.
inline index_t block_of_step(bool lower, Op op, index_t nblk, index_t s) {
    return lower == (op == Op::N) ? s : nblk - 1 - s;
}

/// The tile loops on aligned operands: B := op(A)⁻¹·B, A's `lower` triangle stored in a.
template <class T>
void trsm_2d(bool lower, bool unit, int lookahead, const MatrixRef<T>& a, const MatrixRef<T>& b);
template <class T>
void trsm_2d_trans(bool lower, Op op, bool unit, int lookahead, const MatrixRef<T>& a, const MatrixRef<T>& b);

}  // namespace cala::detail

#pragma once
// cala::geqrf, cala::ormqr: Householder QR with TSQR panels (CAQR) and applying its Q.
//
// cala::geqrf -> right-looking panel loop: TSQR down the process column (local LAPACK geqrf on
//   each rank's rows, a reduction tree over the process rows), the Householder vectors rebuilt
//   from TSQR's Q (Ballard et al.) so that the output is LAPACK's and ScaLAPACK's (R on and above
//   the diagonal, V below it, TAU), the panel's V broadcast along the process row, the trailing
//   update (I - V·T·Vᴴ)ᴴ·A with one reduction of Vᴴ·A down the process column, lookahead
//   -> kernels (LAPACK geqrf/larft, BLIS gemm/trmm)
// cala::ormqr -> the same blocked reflector applications on C (Right: V gathered along C's
//   process columns)
//
// References: Demmel, Grigori, Hoemmen and Langou, "Communication-optimal parallel and
// sequential QR and LU factorizations" (SIAM J. Sci. Comput., 2012); Ballard, Demmel, Grigori,
// Jacquelin, Nguyen and Solomonik, "Reconstructing Householder vectors from tall-skinny QR"
// (IPDPS 2014).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cala/matrix.hpp"
#include "cala/model.hpp"

namespace cala {

struct QrOptions {
    /// 1: panel l+1 is factored while the trailing update of step l runs; 0: one step at a time.
    int lookahead = 1;
    /// On one process row (p = 1): panels per group of delayed trailing updates. The columns right
    /// of a group take its panels' reflectors at once (V of delay·nb columns, one triangular factor
    /// T), in products of depth delay·nb instead of nb; the group's own columns take each panel's
    /// as it comes. 0: the planner's (128 / nb panels, 1 to 4); 1: every panel at once. The
    /// traffic does not change. Ignored on p > 1, where each panel's W is summed down the process
    /// column. docs/qr.md.
    int delay = 0;
};

/// QR factorization A = Q·R of the m x n matrix A: R overwrites the upper trapezoid, the
/// Householder vectors v_i (v_i(i) = 1 implicit) the part below the diagonal, and `tau` receives
/// min(m, n) scalars, so that Q = H_0·H_1···H_{k-1}, H_i = I - tau_i·v_i·v_iᴴ: LAPACK's and
/// ScaLAPACK's representation exactly (any later LAPACK/ScaLAPACK call on it works).
/// The same `tau` on every rank.
///
/// Collective over the grid of A; every rank passes the same shape, layout and options.
/// A must have square blocks (mb == nb) aligned as for getrf; otherwise cala::Error on every
/// rank, A untouched.
template <class T>
void geqrf(const MatrixRef<T>& a, std::vector<T>& tau, const QrOptions& opts = {});

/// C := op(Q)·C (Left) or C := C·op(Q) (Right), Q of geqrf (`a` holds its k = tau.size()
/// reflectors: A is m x k for Left with C m x n, n x k for Right with C m x n), op = N or C
/// (T for real types). Collective over the grid of A and C (the same grid).
/// @pre Left: C's rows distributed as A's (the same nb, first block and source row). Right: C's
///      columns blocked as A's rows (the same nb and first block; any source column). Otherwise
///      cala::Error on every rank, C untouched.
template <class T>
void ormqr(Side side, Op op, const MatrixRef<T>& a, const std::vector<T>& tau, const MatrixRef<T>& c,
           const QrOptions& opts = {});

/// Panels per group of delayed trailing updates cala::geqrf uses on a matrix of this layout
/// (QrOptions::delay resolved: 1 on p > 1).
int geqrf_delay(const BlockCyclic& a, const QrOptions& opts);

/// Exact cost of cala::geqrf on process (row, col) of the grid.
Cost geqrf_cost(const BlockCyclic& a, const QrOptions& opts, int row, int col, std::size_t elem_size,
                bool is_complex);
/// Exact cost of cala::ormqr on process (row, col) of the grid.
Cost ormqr_cost(Side side, Op op, const BlockCyclic& a, const BlockCyclic& c, index_t k, const QrOptions& opts,
                int row, int col, std::size_t elem_size, bool is_complex);

}  // namespace cala

#pragma once
// cala::geqrf, cala::ormqr: Householder QR with TSQR panels (CAQR) and applying its Q.
//
// cala::geqrf -> plan (the user's grid; a p x 1 grid's matrix on the 1 x p grid of its ranks)
//   -> right-looking panel loop: TSQR down the process column (local LAPACK geqrf on
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

/// The QR algorithm.
enum class QrVariant {
    Auto,  ///< the planner's choice: OneRow on a p x 1 grid (p > 1) where the copy fits, else TwoD
    TwoD,  ///< CAQR on the user's grid (TSQR panels down the process columns)
    /// A p x 1 grid's matrix redistributed onto the 1 x p grid of the same ranks (the same
    /// blocks), factored there (each panel one rank's LAPACK geqrf while the others update, with
    /// the delayed updates) and redistributed back. Counted in the traffic and the model. On
    /// other grids, the same as TwoD. docs/qr.md.
    OneRow,
};
const char* to_string(QrVariant v) noexcept;

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
    QrVariant variant = QrVariant::Auto;
    /// Hard limit on the workspace per rank in bytes (the planner's OneRow copy); 0 reads
    /// CALA_MAX_MEMORY_MB (no limit if unset).
    std::int64_t memory_limit_bytes = 0;
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

/// The variant cala::geqrf runs on a matrix of this layout (Auto resolved: TwoD or OneRow), and
/// the panels per group of delayed trailing updates it uses (QrOptions::delay resolved on the
/// layout it factors: 1 on p > 1). The same on every rank.
QrVariant geqrf_variant(const BlockCyclic& a, const QrOptions& opts, std::size_t elem_size);
int geqrf_delay(const BlockCyclic& a, const QrOptions& opts, std::size_t elem_size);

/// Exact cost of cala::geqrf on process (row, col) of the grid.
Cost geqrf_cost(const BlockCyclic& a, const QrOptions& opts, int row, int col, std::size_t elem_size,
                bool is_complex);
/// Exact cost of cala::ormqr on process (row, col) of the grid.
Cost ormqr_cost(Side side, Op op, const BlockCyclic& a, const BlockCyclic& c, index_t k, const QrOptions& opts,
                int row, int col, std::size_t elem_size, bool is_complex);

}  // namespace cala

#pragma once
// cala::symm, cala::hemm: C := alpha·A·B + beta·C (or alpha·B·A + beta·C) with A symmetric
// (Hermitian) and only one triangle of A stored, stationary-A (thesis ch. 5, Table 5.1).
//
// cala::symm -> checks, agreement -> geometry (2DBC: row set = process row + process column of
//   the diagonal block; SBC/TBC: the pattern row's ranks) -> symm_engine (lib/symm/engine.cpp:
//   ibcast of B's block row over its row set's communicator, cached per layout; local GEMMs on
//   A's own tiles; partial C summed at its owner with isend/irecv) -> kernels::gemm
// cala::symm(.., slices) (3D, lib/symm/symm3d.cpp) -> checks on the layer, then on all ranks ->
//   A's tiles along the fibers from layer 0 -> symm_engine on each layer's columns of B and C
// cala::potrf(TiledMatrix[, layers]) (lib/symm/potrf_tiled.cpp) -> one right-looking loop over row
//   sets, 2D or 2.5D (replicated diagonal, fiber reductions) -> kernels (potrf, trsm, herk, gemm)
//
// Words received, summed over ranks (every word that crosses the network counted once, at its
// receiver): 2·(s − 1)·m·n for row sets of s ranks -- 2DBC 2(p+q−2)·mn, SBC 2(r−1)·mn,
// extended SBC 2(r−2)·mn, TBC 2c·mn.

#include "cala/cholesky.hpp"
#include "cala/grid3d.hpp"
#include "cala/matrix.hpp"
#include "cala/model.hpp"
#include "cala/tiled_matrix.hpp"

namespace cala {

/// C := alpha·A·B + beta·C (Left) or alpha·B·A + beta·C (Right); A m x m symmetric, the `uplo`
/// triangle stored (tiles on the other side of the diagonal tiles are not read), B and C m x n
/// (Left) or n x m (Right), block-cyclic on one grid.
///
/// Collective over the grid. @pre A's rows and columns are cut alike (square tiles, same first
/// block); B's and C's layouts are equal, and B's rows (Left) or columns (Right) are distributed
/// exactly like A's (redistribute first otherwise): cala::Error on every rank, nothing moved.
/// @note beta == 0: C is not read. alpha == 0: A and B are not read, nothing moves.
template <class T>
void symm(Side side, Uplo uplo, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta, const MatrixRef<T>& c);
/// The same with A Hermitian (the diagonal's imaginary parts are taken as zero). Real T: symm.
template <class T>
void hemm(Side side, Uplo uplo, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta, const MatrixRef<T>& c);

/// The same on a symmetric layout: A = TiledMatrix on TileLayout::lower(sym) (lower half only:
/// uplo = Upper is a cala::Error), B and C on TileLayout::paired(sym, side, n, nb), one layout.
template <class T>
void symm(Side side, Uplo uplo, T alpha, const TiledMatrix<T>& a, const TiledMatrix<T>& b, T beta,
          const TiledMatrix<T>& c);
template <class T>
void hemm(Side side, Uplo uplo, T alpha, const TiledMatrix<T>& a, const TiledMatrix<T>& b, T beta,
          const TiledMatrix<T>& c);

/// 3D SYMM/HEMM with s slices (thesis ch. 5): the s layers of `slices` (a p x q x s Grid3D with no
/// idle rank; symm_slices makes one) each hold a full copy of A on the layer's grid (2DBC
/// MatrixRef, or TiledMatrix on TileLayout::lower of a pattern for p·q ranks) and their own
/// columns of B and C (Left; rows, Right): slice h computes C_h := alpha·A·B_h + beta·C_h (B_h·A)
/// with the 2D engine on its layer, nothing crossing layers. A's copy on layer 0 is read and, with
/// opts.replicate_a, broadcast along the fibers into the copies of layers 1..s−1 first (their A
/// is written: it is the replica): each rank's stored tiles of A, one message per fiber.
///
///   12 ranks, 2 slices of TBC c = 2 (P = 6):  layer 0 = ranks 0-5, layer 1 = ranks 6-11
///     ibcast rank r's tiles of A from r to r + 6  (m²/2 words received in all, layer 1)
///     layer h: symm on its n_h columns over row sets of 3 ranks (2·2·m·n_h words received)
///
/// Collective over slices.comm(). Every rank passes the same side, uplo, scalars and A's layout;
/// B_h and C_h agree within a layer (n_h may differ between slices). Bad input (a grid with idle
/// ranks, operands not on this rank's layer, the checks of the 2D call) is a cala::Error on every
/// rank of slices.comm() before any communication, inputs untouched. alpha == 0: nothing moves.
struct SymmOptions {
    bool replicate_a = true;  ///< false: the layers already hold A (an earlier call copied it)
};
/// s slices of the ranks of comm: Grid3D(comm, 1, P/s, s). cala::Error on every rank naming
/// `slices` if s < 1 or s does not divide P. Collective over comm.
Grid3D symm_slices(const Comm& comm, int slices);
template <class T>
void symm(Side side, Uplo uplo, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta, const MatrixRef<T>& c,
          const Grid3D& slices, const SymmOptions& opts = {});
template <class T>
void hemm(Side side, Uplo uplo, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta, const MatrixRef<T>& c,
          const Grid3D& slices, const SymmOptions& opts = {});
template <class T>
void symm(Side side, Uplo uplo, T alpha, const TiledMatrix<T>& a, const TiledMatrix<T>& b, T beta,
          const TiledMatrix<T>& c, const Grid3D& slices, const SymmOptions& opts = {});
template <class T>
void hemm(Side side, Uplo uplo, T alpha, const TiledMatrix<T>& a, const TiledMatrix<T>& b, T beta,
          const TiledMatrix<T>& c, const Grid3D& slices, const SymmOptions& opts = {});
/// Exact words, messages and flops of that 3D call on the rank of layer `layer` (of `slices`)
/// whose rank in its layer is `layer_rank`; b: that layer's B. Sum over ranks of the words
/// received: (s − 1)·(A's stored words) for the replication + Σ_h 2(r − 1)·m·n_h, r the row-set size.
Cost symm3d_cost(Side side, Uplo uplo, const BlockCyclic& a, const BlockCyclic& b, GridOrder order, int slices,
                 int layer, int layer_rank, bool is_complex, const SymmOptions& opts = {});
Cost symm3d_cost(Side side, const TileLayout& a, const TileLayout& b, int slices, int layer, int layer_rank,
                 bool is_complex, const SymmOptions& opts = {});

/// C := alpha·A·Aᵀ + beta·C (syrk) or alpha·A·Aᴴ + beta·C (herk: the diagonal stays real), C n x n
/// with its `uplo` triangle stored (the other strict triangle untouched), A n x k; stationary-C.
/// 2DBC: C with square tiles, A's rows distributed exactly like C's (else cala::Error on every
/// rank). Symmetric layouts: C on TileLayout::lower(sym) (uplo Lower only), A on
/// TileLayout::paired(sym, Left, k, nb). Collective over the grid. beta == 0: C is not read.
/// Words received, summed over ranks: (s − 1)·n·k for row sets of s ranks.
template <class T>
void syrk(Uplo uplo, T alpha, const MatrixRef<T>& a, T beta, const MatrixRef<T>& c);
template <class T>
void herk(Uplo uplo, real_t<T> alpha, const MatrixRef<T>& a, real_t<T> beta, const MatrixRef<T>& c);
template <class T>
void syrk(Uplo uplo, T alpha, const TiledMatrix<T>& a, T beta, const TiledMatrix<T>& c);
template <class T>
void herk(Uplo uplo, real_t<T> alpha, const TiledMatrix<T>& a, real_t<T> beta, const TiledMatrix<T>& c);

/// Cholesky factorization A = L·Lᴴ of a Hermitian positive definite matrix on a symmetric layout
/// (TileLayout::lower; uplo Lower only, else cala::Error on every rank), in place; returns
/// LAPACK's info (0, or k: the leading minor of order k is not positive definite), the same on
/// every rank. Right-looking, every broadcast over a row set. Collective over the grid.
template <class T>
index_t potrf(Uplo uplo, const TiledMatrix<T>& a);
/// Exact words, words received and messages of that potrf on communicator rank `rank` (A
/// positive definite); flops of its trailing updates.
Cost potrf_cost(const TileLayout& a, int rank, bool is_complex);
/// 2.5D: the same on the h layers of `layers` (a p x q x h Grid3D with no idle rank;
/// symm_slices(comm, h) makes one), A on the layer's grid (TileLayout::lower of a pattern for
/// p·q ranks, the same on every layer). A is read on layer 0 and L written there; A on the other
/// layers is workspace (overwritten). Step k: A(k, k) summed over its fiber and factored on every
/// layer (the replicated diagonal), panel tile A(i, k) summed onto layer i mod h and solved
/// there, the trailing update of step k on layer k mod h only (its row-set broadcasts there), the
/// solved tiles sent to that layer and to layer 0. Collective over layers.comm(); info on every
/// rank. Bad input (idle ranks, A not on this rank's layer, the 2D checks): cala::Error on every
/// rank, nothing moved.
template <class T>
index_t potrf(Uplo uplo, const TiledMatrix<T>& a, const Grid3D& layers);
/// Exact words, words received and messages of that 2.5D potrf on the rank of layer `layer`
/// (of `layers`) whose rank in its layer is `layer_rank` (A positive definite).
Cost potrf_cost(const TileLayout& a, int layers, int layer, int layer_rank, bool is_complex);

/// Exact words, messages (cala/comm.hpp's convention) and flops on communicator rank `rank` of
/// symm/hemm with alpha != 0 (2DBC: operands on a grid of the given order).
Cost symm_cost(Side side, Uplo uplo, const BlockCyclic& a, const BlockCyclic& b, GridOrder order, int rank,
               bool is_complex);
Cost symm_cost(Side side, const TileLayout& a, const TileLayout& b, int rank, bool is_complex);
/// The same for syrk/herk with alpha != 0 and k > 0.
Cost syrk_cost(Uplo uplo, const BlockCyclic& a, const BlockCyclic& c, GridOrder order, int rank, bool is_complex);
Cost syrk_cost(const TileLayout& a, const TileLayout& c, int rank, bool is_complex);

}  // namespace cala

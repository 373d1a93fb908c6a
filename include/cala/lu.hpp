#pragma once
// cala::getrf, cala::getrs: LU factorization with tournament pivoting (CALU) and its solve.
//
// cala::getrf -> plan (2D on the user's grid; a p x 1 grid's matrix on the 1 x p grid of its ranks)
//   -> right-looking panel loop: tournament pivoting down the process column (local LAPACK getrf
//      on each rank's candidate rows, a reduction tree over the process rows), the row
//      interchanges (only the rows that change place move), the U block
//      row's solve, row/column broadcasts, trailing update with lookahead -> kernels (LAPACK
//      getrf, BLIS trsm/gemm)
// cala::getrs -> the row interchanges (their composite, at once), then cala::trsm with L (unit) and U
//
// References: Grigori, Demmel and Xiang, "CALU: a communication optimal LU factorization
// algorithm" (SIAM J. Matrix Anal. Appl., 2011); Kwasniewski et al., "On the parallel I/O
// optimality of linear algebra kernels: near-optimal LU factorization" (COnfLUX, PPoPP'21).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cala/gemm.hpp"
#include "cala/matrix.hpp"
#include "cala/model.hpp"

namespace cala {

/// The LU algorithm.
enum class LuVariant {
    Auto,    ///< the planner's choice: OneRow on a p x 1 grid (p > 1) where the copy fits, else TwoD
    TwoD,    ///< 2D block-cyclic CALU on the user's grid
    /// A p x 1 grid's matrix redistributed onto the 1 x p grid of the same ranks (the same blocks),
    /// factored there by the 2D CALU and redistributed back: no interchange and no tournament
    /// crosses ranks, and the panel of step l+1 is factored while the others update (on p x 1
    /// every rank takes part in every panel). Counted in the traffic and the model. On other
    /// grids, the same as TwoD. docs/lu.md.
    OneRow,
    /// 2.5D (after COnfLUX and Solomonik and Demmel's 2.5D LU): h layers of p x q ranks
    /// (LuOptions::grid3d, or the planner's: the h dividing the ranks whose model moves the fewest
    /// words per rank under memory_limit_bytes). Each block row of A starts on one layer (its
    /// home), zero on the others: each layer holds a share of the trailing matrix that sums to it.
    /// Each step sums the panel and the U block row over the h layers (one all-reduce each),
    /// factors them on every layer alike (layer 0's tournament result broadcast: the same pivots),
    /// and each layer updates with its own slice of the step's kb columns of L21 and rows of U12, so
    /// L21 and U12 travel in slices of kb/h. Every layer ends with the same factors and returns its
    /// home block rows. Only where asked: the planner's Auto keeps 2D (docs/lu.md: 2.5D LU pays off
    /// from a few hundred ranks up).
    Layered,
};
const char* to_string(LuVariant v) noexcept;

struct LuOptions {
    LuVariant variant = LuVariant::Auto;
    /// 1: panel l+1 is factored and its pivots chosen while the trailing update of step l runs;
    /// 0: one step at a time.
    int lookahead = 1;
    /// Hard limit on the workspace per rank in bytes; 0 reads CALA_MAX_MEMORY_MB (no limit if unset).
    std::int64_t memory_limit_bytes = 0;
    /// On a 1 x q grid whose ranks all run on one node: each step's row broadcasts (L11\U11 with
    /// the interchanges, and L21) go through memory every rank maps (/dev/shm, as
    /// CholeskyOptions::node_shared_memory): the panel's owner copies them in once and every rank
    /// multiplies from there. The traffic counted (and modeled) is the broadcasts'. False: the
    /// broadcasts.
    bool node_shared_memory = true;
    /// LuVariant::Layered: the p x q x h grid over A's ranks (p·q·h <= their number; the others
    /// wait). {0, 0, 0}: the planner's. Must be zero with the other variants.
    Shape3D grid3d = {};
};

/// LU factorization A = P·L·U of the m x n matrix A with tournament pivoting (CALU): L unit
/// lower trapezoidal below the diagonal, U upper trapezoidal on and above it, both overwriting A.
///
/// `ipiv` receives min(m, n) global row indices (0-based, relative to A's first row), LAPACK's
/// convention: row i of A was interchanged with row ipiv[i], i = 0, 1, ... in order (ipiv[i] >= i).
/// The same vector on every rank. The pivots are those of tournament pivoting, not of partial
/// pivoting, but they form a valid interchange sequence: P·L·U = A holds with them.
///
/// Collective over the grid of A; every rank passes the same shape, layout and options.
/// A must have square blocks (mb == nb) whose rows and columns start aligned: a submatrix at a
/// block boundary, or at the same offset into its blocks in both dimensions (ScaLAPACK's
/// IROFFA == ICOFFA); otherwise cala::Error on every rank, A untouched. docs/lu.md.
/// @return 0 on success; k > 0 when U(k, k) (1-based, global) is exactly zero and no earlier
///         diagonal entry is: the factorization has been completed, but U is singular (LAPACK's
///         info). The same k on every rank.
template <class T>
index_t getrf(const MatrixRef<T>& a, std::vector<index_t>& ipiv, const LuOptions& opts = {});

/// Solves op(A)·X = B with the factors of getrf (A n x n, `ipiv` as getrf returned it):
/// B := op(A)⁻¹·B. Collective over the grid of A and B (the same grid); B's row blocks must line
/// up with A's (same nb and first-block size), ipiv the same on every rank (cala::Error otherwise).
template <class T>
void getrs(Op op, const MatrixRef<T>& a, const std::vector<index_t>& ipiv, const MatrixRef<T>& b);

/// The variant cala::getrf runs on a matrix of this layout under these options (Auto resolved):
/// TwoD, OneRow or Layered. The same on every rank. @throws cala::Error for options getrf would reject.
LuVariant getrf_variant(const BlockCyclic& a, const LuOptions& opts, std::size_t elem_size);
/// The p x q x h grid a Layered getrf runs on (grid3d, or the planner's); {p, q, 1} of A's grid
/// for the other variants.
Shape3D getrf_grid(const BlockCyclic& a, const LuOptions& opts, std::size_t elem_size);

/// Cost of cala::getrf on process (row, col) of the grid: words, messages, flops and workspace.
/// The interchanges move only the rows that change place, so the traffic follows the pivots:
/// given `ipiv` (as getrf returned it) the count is exact; without it (empty), every step's
/// interchanges are counted at kb rows each way between the diagonal block's process row and
/// every other one, an upper bound. Flops and workspace do not depend on the pivots.
/// A Layered plan counts process (row, col) as rank row·q + col (a row-major grid); the overload
/// below takes the rank and the grid's order.
Cost getrf_cost(const BlockCyclic& a, const LuOptions& opts, int row, int col, std::size_t elem_size,
                bool is_complex, std::span<const index_t> ipiv = {});
Cost getrf_cost(const BlockCyclic& a, const LuOptions& opts, GridOrder order, int rank, std::size_t elem_size,
                bool is_complex, std::span<const index_t> ipiv = {});
/// Cost of cala::getrs on process (row, col) of the grid: exact given `ipiv`, an upper bound
/// without (as for getrf_cost).
Cost getrs_cost(Op op, const BlockCyclic& a, const BlockCyclic& b, int row, int col, std::size_t elem_size,
                bool is_complex, std::span<const index_t> ipiv = {});

}  // namespace cala

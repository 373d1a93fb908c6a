#pragma once
// cala::potrf, cala::potrs, cala::trsm: Cholesky factorization and triangular solves.
//
// cala::potrf -> plan (2D on the user's grid, or 2.5D on p x q x h) -> right-looking tile loop
//   (diagonal factor, panel solve, row/column broadcasts, trailing update with lookahead;
//    OpenMP tasks inside a rank) -> kernels (LAPACK potrf, BLIS trsm/herk/gemm)
// cala::potrs -> cala::trsm twice (forward with L, backward with L^H)

#include <cstdint>
#include <string>
#include <vector>

#include "cala/gemm.hpp"
#include "cala/matrix.hpp"
#include "cala/model.hpp"

namespace cala {

/// Which triangle of a Hermitian matrix holds the data (and receives the factor).
enum class Uplo { Lower, Upper };
/// Whether a triangular matrix has an implicit unit diagonal.
enum class Diag { NonUnit, Unit };

constexpr char uplo_char(Uplo u) { return u == Uplo::Lower ? 'L' : 'U'; }

/// The Cholesky algorithm.
enum class CholeskyVariant {
    Auto,      ///< the planner's choice among 2D on the user's grid and 2.5D grids
    TwoD,      ///< right-looking 2D block-cyclic (thesis Alg. 11) on the user's grid
    Repl,      ///< 2.5D: updates of step l on layer l mod h, diagonal replicated, solves spread
    ReplPart,  ///< 2.5D: every panel split into h column slices, every layer updates every step
};
const char* to_string(CholeskyVariant v) noexcept;

/// Who factors the panel inside a rank while the other threads run trailing-update tasks.
enum class PanelMode {
    Single,      ///< one thread (the one that also drives MPI)
    Aggregated,  ///< an aggregated team of `panel_threads` cores (Cojean et al. 2016)
    Shared,      ///< row blocks at top task priority: threads join as they finish update tiles
};

struct CholeskyOptions {
    CholeskyVariant variant = CholeskyVariant::Auto;
    /// 1: panel l+1 is factored and its broadcasts posted while the trailing update of step l
    /// runs; 0: no lookahead (one step at a time).
    int lookahead = 1;
    /// p x q x h grid of the 2.5D variants (c is h). Zero: the planner chooses.
    Shape3D grid3d = {};
    /// Tile size of the layouts cala works in when the input must be converted (not square
    /// tiles, a 2.5D grid); 0: the input's own block size (or the planner's).
    index_t block_size = 0;
    /// Hard limit on the workspace per rank in bytes; 0 reads CALA_MAX_MEMORY_MB (no limit if unset).
    std::int64_t memory_limit_bytes = 0;
    PanelMode panel = PanelMode::Shared;
    /// Size of the aggregated panel team (PanelMode::Aggregated); 0: all threads of the rank.
    /// With `devices` and lookahead, the panel's team while the node runs the previous step's
    /// update beside it (the node's cpu units get the rest of the rank's threads); 0: a quarter
    /// of the rank's threads, at least one.
    int panel_threads = 0;
    /// Units of each step's trailing update on a rank, as GemmOptions::devices (issue 19): a list
    /// naming more than one kind of unit ("cpu,host", "cpu,0,1") runs the update's off-diagonal
    /// rectangles on the node (cala/node.hpp: the static allocation over all units, stealing),
    /// a list of one kind of device ("host", "0,1") on the chunked engine; the panel (potrf,
    /// trsm: the critical path) and the diagonal tiles (herk) stay on the rank's cores, and
    /// only the factored triangle is written. No message changes (the tile moves stay inside
    /// the rank). Exception: one rank (a 1 x 1 grid) with exactly one device ("0", "host")
    /// factors the whole matrix on that device, streamed (left-looking column blocks copied in
    /// ahead and out behind: lib/device/potrf_streamed.hpp, docs/device.md). Empty:
    /// CALA_DEVICES; unset too: the rank's cores (OpenMP tasks).
    std::string devices = {};
    std::int64_t max_device_bytes = 0;     ///< as GemmOptions::max_device_bytes
    std::vector<double> unit_speeds = {};  ///< as GemmOptions::unit_speeds (CALA_UNIT_SPEEDS)
    std::string node_strategy = {};        ///< as GemmOptions::node_strategy (CALA_NODE_STRATEGY)
    /// 2D: panels whose trailing updates are applied together, in one update of depth
    /// delay·nb per local column block; the columns of the next panels are updated left-looking
    /// first, the broadcasts stay those of every step (docs/cholesky.md). 1: every step; 0: the
    /// planner's choice (256 / nb, at most 4; 1 for nb >= 256, 2.5D grids and device units).
    int delay = 0;
    /// 2D on a 1 x q grid whose ranks all run on one node, one thread each: the solved panel goes
    /// into memory every rank maps (/dev/shm, as GemmOptions::node_shared_memory) and every rank
    /// multiplies from it there, instead of a row broadcast that MPI moves as two copies inside
    /// its calls (docs/cholesky.md). The traffic counted (and modeled) is that broadcast's.
    /// False: the broadcasts.
    bool node_shared_memory = true;
};

/// Cholesky factorization of the Hermitian positive definite matrix A (n x n, the `uplo`
/// triangle referenced): A = L·Lᴴ (Lower) or A = Uᴴ·U (Upper), the factor overwriting that
/// triangle; the other strict triangle is not touched.
///
/// Collective over the grid of A; every rank passes the same uplo, shape, layout and options.
/// Any block-cyclic layout is accepted: a layout without square tiles aligned with the
/// diagonal (mb != nb, or a submatrix offset that cuts blocks differently in rows and
/// columns) is redistributed into one and back (counted in the traffic and in the model).
/// @return 0 on success; k > 0 when the leading minor of order k (1-based, global) is not
///         positive definite: the same k on every rank, as LAPACK's info. The factorization
///         stops there; A holds the partial factor.
/// @pre  A is square (otherwise cala::Error on every rank, A untouched)
template <class T>
index_t potrf(Uplo uplo, const MatrixRef<T>& a, const CholeskyOptions& opts = {});

struct TrsmOptions {
    int lookahead = 1;  ///< panels in flight while the current block row is updated
};

/// B := alpha·op(A)⁻¹·B (left side), A n x n triangular (`uplo` triangle referenced, `diag`),
/// B n x nrhs. Collective over the grid of A and B (the same grid); same arguments on every rank.
/// A layout that does not line up with B is redistributed (counted).
template <class T>
void trsm(Uplo uplo, Op op, Diag diag, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b,
          const TrsmOptions& opts = {});

/// B := alpha·op(A)⁻¹·B (Left, A m x m) or B := alpha·B·op(A)⁻¹ (Right, A n x n), B m x n.
/// The right side solves the transposed problem with the left-side loops: B moves into a
/// transposed copy lined up with A (redistribute with T, or C for op = C) and back (counted;
/// trsm_cost(Side, ...)). Collective over the grid of A and B; same arguments on every rank.
template <class T>
void trsm(Side side, Uplo uplo, Op op, Diag diag, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b,
          const TrsmOptions& opts = {});

/// B := alpha·op(A)·B (Left, A m x m) or B := alpha·B·op(A) (Right, A n x n), A triangular
/// (`uplo` triangle referenced, `diag`), B m x n. cala::gemm on a copy of the triangle with the
/// other triangle zeroed (the unit diagonal written) into a workspace C of B's layout, copied
/// back into B: gemm's traffic (trmm_cost). Collective over the grid of A and B; same arguments
/// on every rank. @note alpha == 0: B := 0, A not read, nothing moves.
template <class T>
void trmm(Side side, Uplo uplo, Op op, Diag diag, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b);

/// Solves A·X = B with the factor of potrf(uplo, A): B := A⁻¹·B.
template <class T>
void potrs(Uplo uplo, const MatrixRef<T>& a, const MatrixRef<T>& b, const TrsmOptions& opts = {});

/// What cala::potrf will do on a matrix of this layout over a grid of this order.
struct CholeskyPlanInfo {
    CholeskyVariant variant = CholeskyVariant::TwoD;
    Shape3D grid;           ///< p x q x h (h = 1 for 2D)
    index_t block_size = 0;
    int delay = 1;           ///< panels per group of delayed trailing updates (CholeskyOptions::delay)
    bool converted = false;  ///< the input is redistributed into a working layout and back
    int idle_ranks = 0;
    double words = 0, msgs = 0, flops = 0;  ///< busiest rank: max(sent, received) words, messages, flops
    std::int64_t memory_bytes = 0;          ///< peak workspace per rank
    double predicted_time_s = 0;
    std::string describe() const;
};

/// What cala::potrf does for a matrix with layout `a` on a grid of the given order (the
/// planner's choice under the options and the memory limit).
CholeskyPlanInfo plan_potrf(Uplo uplo, const BlockCyclic& a, GridOrder order, const CholeskyOptions& opts,
                            std::size_t elem_size, bool is_complex);
/// The planner for an n x n matrix laid out nb x nb block-cyclically on the squarest 2D grid of
/// `nranks` ranks (what `cala-bench potrf --plan` prints).
CholeskyPlanInfo plan_potrf(index_t n, int nranks, const CholeskyOptions& opts = {},
                            const MachineModel& machine = MachineModel::from_env(), index_t user_block = 256,
                            std::size_t elem_size = 8);
/// Exact cost of cala::potrf on communicator rank `rank` (words, received words, messages,
/// flops, peak workspace), conversions included, assuming A is positive definite.
Cost potrf_cost(Uplo uplo, const BlockCyclic& a, GridOrder order, const CholeskyOptions& opts, int rank,
                std::size_t elem_size, bool is_complex);
/// Exact cost of cala::trsm on process (row, col) of the grid.
Cost trsm_cost(Uplo uplo, Op op, const BlockCyclic& a, const BlockCyclic& b, const TrsmOptions& opts, int row,
               int col, std::size_t elem_size, bool is_complex);
/// Exact cost of cala::trsm(side, ...) on process (row, col) of the grid (alpha != 0).
Cost trsm_cost(Side side, Uplo uplo, Op op, const BlockCyclic& a, const BlockCyclic& b, const TrsmOptions& opts,
               int row, int col, std::size_t elem_size, bool is_complex);
/// Exact cost of cala::trmm on communicator rank `rank` of a grid of the given order (alpha != 0).
Cost trmm_cost(Side side, Uplo uplo, Op op, const BlockCyclic& a, const BlockCyclic& b, GridOrder order, int rank,
               std::size_t elem_size, bool is_complex);
/// Exact cost of cala::potrs on process (row, col) of the grid.
Cost potrs_cost(Uplo uplo, const BlockCyclic& a, const BlockCyclic& b, const TrsmOptions& opts, int row, int col,
                std::size_t elem_size, bool is_complex);

}  // namespace cala

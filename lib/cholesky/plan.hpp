#pragma once
// How cala::potrf runs a given input: the variant, the p x q x h grid, and the working layout.
// Pure arithmetic, shared by the driver (potrf.cpp) and the model (model.cpp).

#include <vector>

#include "cala/cholesky.hpp"
#include "cholesky/geometry.hpp"
#include "matrix/redist_plan.hpp"

namespace cala {
struct DeviceGemmOptions;
}

namespace cala::detail {

struct CholPlan {
    CholeskyVariant variant = CholeskyVariant::TwoD;
    int p = 1, q = 1, h = 1;  ///< grid of the factorization (2D: the user's)
    bool convert = false;     ///< the input is redistributed into the working layout and back
    Op op = Op::N;            ///< the conversion's op: C for Uplo::Upper (factor Aᴴ's lower triangle)
    BlockCyclic work;         ///< each layer's p x q layout (2D without conversion: the user's)
    CholGeom geom;
    /// CholeskyOptions::node_shared_memory on a 1 x q 2D grid: the engine may take the
    /// node-shared panels (comm/node_slots.hpp), and the model bounds the memory of either path.
    bool node_shared = false;
};

/// Whether a layout has square tiles aligned with the diagonal (the engine works on it as is).
bool chol_aligned(const BlockCyclic& l);

/// Panels per group of delayed trailing updates (CholeskyOptions::delay; 0: 256 / nb, at most 4,
/// 1 for nb >= 256); always 1 on 2.5D grids and with device units.
int chol_delay(const CholeskyOptions& opts, index_t nb, int h);

/// The plan for these arguments on `nranks` ranks (the variant and grid come from `opts`;
/// CholeskyVariant::Auto must have been resolved by the planner into opts.variant/grid3d).
CholPlan make_chol_plan(Uplo uplo, const BlockCyclic& a, int nranks, const CholeskyOptions& opts);

/// Exact cost of running `plan` on rank `rank` (its place given by `order`): the conversions and
/// the engine's schedule (model.cpp); extra_bytes its host workspace. dev: the update's units.
Cost potrf_plan_cost(const CholPlan& plan, Uplo uplo, const BlockCyclic& a, GridOrder order, int rank,
                     std::size_t elem, bool cplx, const DeviceGemmOptions* dev = nullptr);

/// Where the layered (2.5D) input lives between the conversion and the copy into each layer's
/// full share: block row i on layer home(i), as a virtual (h·p) x q grid over the ranks.
Placement chol_compact_placement(const CholPlan& plan);
BlockCyclic chol_compact_layout(const CholPlan& plan);

}  // namespace cala::detail

#pragma once
// Internal: the replicated-diagonal 2.5D Cholesky on resident matrices (lib/resident/potrf_25d.cpp):
// the host cala::potrf's layered plan (cholesky/plan.hpp), each layer running the resident
// engine (potrf_2d.cpp) with the fiber steps.

#include "cala/grid3d.hpp"
#include "cholesky/plan.hpp"
#include "resident/potrf_geom.hpp"
#include "resident/stage.hpp"

namespace cala::detail {

/// The geometry of process (row, col) of layer `layer` of a layered plan (plan.h > 1).
ResPotrfGeom res_potrf_layer_geom(const CholPlan& plan, int layer, int row, int col);

/// Device elements rank `rank` (of A's communicator) holds during the call: its layer share and
/// the layer engine's slots; 0 on idle ranks. The same count on the device and in the model.
index_t resident_potrf_workspace_25d(const CholPlan& plan, int rank);

/// Factors A (on a.dev on every rank, arguments checked) on the plan's p x q x h grid g3 (a
/// duplicate of A's communicator): A into the compact layered placement and each layer's full
/// share (staged through host memory, as cala::potrf's run_layered), the layer engines, and
/// back. Returns the first failed minor this rank saw (0: none).
template <class T>
index_t resident_potrf_25d(const CholPlan& plan, const Grid3D& g3, const Side<T>& a, int lookahead, bool nccl,
                           int ordinal);

}  // namespace cala::detail

#pragma once
// Internal: 2.5D / 3D SUMMA on resident operands (lib/resident/summa3d.cpp): the host 2.5D
// path's placements (gemm/plan3d.hpp, Plan3D::resident set), each layer running a resident 2D
// engine on its p x q grid.

#include "cala/grid3d.hpp"
#include "gemm/plan3d.hpp"
#include "resident/stage.hpp"

namespace cala::detail {

/// Device elements communicator rank `rank` holds during the call (the layer's A' and B', its
/// partial C and the layer engine's slots): the same count on the device and in the model.
index_t resident_workspace_3d(const Plan3D& plan, int rank);

/// C := alpha·op(A)·op(B) + beta·C on a p x q x c grid over the ranks of C's grid (g3.comm() a
/// duplicate of its communicator). A, B and C on `c.dev` on every rank, arguments checked. The
/// operands move into the layered placements, the fiber reduction of stationary C's partial
/// products and the return into C's layout are staged through host memory (MPI, counted as
/// summa_3d's); each layer's panels travel as the 2D engine's (NCCL when `nccl`).
template <class T>
void resident_summa_3d(const Plan3D& plan, const Grid3D& g3, T alpha, const Side<T>& a, const Side<T>& b, T beta,
                       const Side<T>& c, bool nccl, int ordinal);

}  // namespace cala::detail

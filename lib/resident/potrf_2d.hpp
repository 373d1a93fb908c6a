#pragma once
// Internal: the resident 2D right-looking Cholesky engine (lib/resident/potrf_2d.cpp). The
// matrix already checked (square, square tiles aligned with the diagonal, on a device).

#include "resident/potrf_geom.hpp"
#include "resident/stage.hpp"

namespace cala::detail {

/// Factors the `upper` (else lower) triangle of the local array a (on a.dev) in place, the
/// schedule of potrf_geom.hpp with `lookahead` (0 or 1) over the panel transport (NCCL when
/// `nccl`, else MPI staged). Returns the global 1-based index of the first failed minor this rank
/// saw (0: none); the steps run to the end either way (the traffic does not depend on the values).
template <class T>
index_t resident_potrf_2d(bool upper, const Side<T>& a, int lookahead, bool nccl, int ordinal);

/// The same on one layer of the replicated-diagonal 2.5D schedule (g.h > 1, Lower; g: the
/// layer's geometry, lib/resident/potrf_25d.cpp): a holds this rank's full share of its layer
/// (the home block rows, partial sums elsewhere); the fiber sums and the solved panel's moves
/// between layers go over `fiber` through host memory (MPI), as cala::potrf's host engine.
template <class T>
index_t resident_potrf_layer(const ResPotrfGeom& g, const Side<T>& a, const Comm& fiber, int lookahead, bool nccl,
                             int ordinal);

}  // namespace cala::detail

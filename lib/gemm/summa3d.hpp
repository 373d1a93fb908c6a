#pragma once
// 2.5D / 3D SUMMA over a Grid3D, with the user's operands and result in their own 2D layouts.

#include "cala/grid3d.hpp"
#include "cala/matrix.hpp"
#include "gemm/plan3d.hpp"

namespace cala::detail {

/// C := alpha·op(A)·op(B) + beta·C. Collective over g3.comm(), whose ranks are those of the
/// user's grid (same communicator, same rank numbering). Arguments already validated.
template <class T>
void summa_3d(const Plan3D& plan, const Grid3D& g3, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta,
              const MatrixRef<T>& c);

}  // namespace cala::detail

#pragma once
// Submatrices of the caller's distributed arrays as cala MatrixRefs over the same memory.
//
// shim (pgemm.cpp, ppotrf.cpp, ppotrs.cpp) -> view (this) -> descriptor (sub_axis) -> cala::MatrixRef

#include <optional>
#include <string>

#include "cala/grid.hpp"
#include "cala/matrix.hpp"
#include "scalapack/descriptor.hpp"

namespace cala::scalapack {

/// Rows and columns of a submatrix seen from one grid position, and the local leading dimension.
struct SubMatrix {
    SubAxis rows, cols;
    index_t ld;
};

/// The submatrix (ix, jx) (1-based), rows x cols, of a matrix with descriptor d (11-entry form),
/// seen from grid position g; nullopt when cala has no layout for it. Local, no MPI.
std::optional<SubMatrix> sub_matrix(const Desc& d, const GridPos& g, int ix, int jx, index_t rows, index_t cols);

/// The caller's local array of a submatrix as a MatrixRef on `grid` (no copy). Local.
template <class T>
MatrixRef<T> view(const Grid2D& grid, const SubMatrix& s, const T* data) {
    const index_t m_loc = s.rows.dist.local_size(grid.row()), n_loc = s.cols.dist.local_size(grid.col());
    T* p = const_cast<T*>(data);  // written only by the routines that write it
    if (m_loc > 0 && n_loc > 0) p += s.rows.local_offset + s.cols.local_offset * s.ld;
    return MatrixRef<T>(grid, BlockCyclic(s.rows.dist, s.cols.dist), p, s.ld);
}

/// CALA_SCALAPACK_THRESHOLD as CALA_VERBOSE prints it.
std::string threshold_text(double t);

}  // namespace cala::scalapack

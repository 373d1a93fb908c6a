#pragma once
// Submatrices of the caller's distributed arrays as cala MatrixRefs over the same memory.
//
// shim (pgemm.cpp, ppotrf.cpp, ppotrs.cpp) -> view (this) -> descriptor (sub_axis) -> cala::MatrixRef

#include <algorithm>
#include <optional>
#include <string>

#include "cala/grid.hpp"
#include "cala/matrix.hpp"
#include "core/workspace.hpp"
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

/// Where this process's part of the submatrix starts in the caller's local array `data` (`data`
/// itself when the process holds none of it). Local.
template <class T>
T* local_part(const SubMatrix& s, const GridPos& g, T* data) {
    const bool holds = s.rows.dist.local_size(g.row) > 0 && s.cols.dist.local_size(g.col) > 0;
    return holds ? data + s.rows.local_offset + s.cols.local_offset * s.ld : data;
}

/// A workspace matrix on `grid` laid out by `rows` x `cols`, its local part (column-major, leading
/// dimension max(1, local rows)) allocated in `buf`, not initialised. Local.
template <class T>
MatrixRef<T> workspace(const Grid2D& grid, const Dist1D& rows, const Dist1D& cols, detail::Buffer<T>& buf) {
    const index_t m_loc = rows.local_size(grid.row()), n_loc = cols.local_size(grid.col());
    buf = detail::Buffer<T>(m_loc * n_loc);
    return MatrixRef<T>(grid, BlockCyclic(rows, cols), buf.data(), std::max<index_t>(m_loc, 1));
}

/// sub(C) := beta·sub(C) + add(il, jl) on this process's part of sub(C) (il, jl: local indices
/// within that part; `c` the caller's local array), where the submatrix's own (i, j) lies in the
/// `uplo` trapezoid: 'U' i <= j, 'L' i >= j, anything else everywhere. beta == 0: C is not read.
/// `real_diagonal`: the diagonal's imaginary parts become zero (BLAS's herk/her2k). Local.
template <class T, class Add>
void update_local(const SubMatrix& sc, const GridPos& g, char uplo, T beta, T* c, Add&& add,
                  bool real_diagonal = false) {
    const Dist1D &rows = sc.rows.dist, &cols = sc.cols.dist;
    const index_t m_loc = rows.local_size(g.row), n_loc = cols.local_size(g.col);
    T* const c0 = local_part(sc, g, c);
    for (index_t jl = 0; jl < n_loc; ++jl) {
        const index_t j = cols.to_global(jl, g.col);
        for (index_t il = 0; il < m_loc; ++il) {
            const index_t i = rows.to_global(il, g.row);
            if (uplo == 'U' ? i > j : uplo == 'L' ? i < j : false) continue;
            T& cij = c0[il + jl * sc.ld];
            cij = beta == T(0) ? add(il, jl) : beta * cij + add(il, jl);
            if constexpr (is_complex_v<T>)
                if (real_diagonal && i == j) cij = T(cij.real());
        }
    }
}

/// CALA_SCALAPACK_THRESHOLD as CALA_VERBOSE prints it.
std::string threshold_text(double t);

}  // namespace cala::scalapack

#pragma once
// Host LAPACK kernels of LU (reference LAPACK underneath; nothing above this layer names it).
// Column-major, 64-bit sizes at the interface (LAPACK's are 32-bit: sizes must fit an int).

#include <vector>

#include "cala/types.hpp"

namespace cala::kernels {

/// LU with partial pivoting of the m x n matrix a (LAPACK ?getrf, recursive panel): P·a = L·U
/// in place. `ipiv` receives min(m, n) 0-based row indices (row i interchanged with ipiv[i]).
/// Returns LAPACK's info: 0, or the 1-based index of the first exactly-zero U(k, k).
template <class T>
index_t getrf(index_t m, index_t n, T* a, index_t lda, std::vector<index_t>& ipiv);

/// b := b·u⁻¹ for an n x n upper triangular u (non-unit) and an m x b: LU's L21 = A21·U11⁻¹.
/// A zero u(j, j) leaves column j undivided (LAPACK's getf2 does not scale below a zero pivot).
template <class T>
void trsm_right_upper_lu(index_t m, index_t n, const T* u, index_t ldu, T* b, index_t ldb);

}  // namespace cala::kernels

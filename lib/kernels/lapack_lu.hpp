#pragma once
// Host kernels of LU (BLIS and reference LAPACK underneath; nothing above this layer names them).
// Column-major, 64-bit sizes at the interface (LAPACK's are 32-bit: sizes must fit an int).

#include <vector>

#include "cala/types.hpp"

namespace cala::kernels {

/// LU with partial pivoting of the m x n matrix a: P·a = L·U in place, LAPACK's getrf contract
/// and pivot rule (the first largest |a(i, j)|, |re| + |im| for complex). Recursive halving down to
/// 8 columns, unblocked below, BLIS trsm/gemm between: a 2048 x 64 panel in 14 BLAS calls.
/// `ipiv` receives min(m, n) 0-based row indices (row i interchanged with ipiv[i]).
/// Returns LAPACK's info: 0, or the 1-based index of the first exactly-zero U(k, k).
template <class T>
index_t getrf(index_t m, index_t n, T* a, index_t lda, std::vector<index_t>& ipiv);

/// The same by LAPACK's own ?getrf (the reference of the tests; 32-bit sizes).
template <class T>
index_t getrf_lapack(index_t m, index_t n, T* a, index_t lda, std::vector<index_t>& ipiv);

/// b := b·u⁻¹ for an n x n upper triangular u (non-unit) and an m x b: LU's L21 = A21·U11⁻¹.
/// A zero u(j, j) leaves column j undivided (LAPACK's getf2 does not scale below a zero pivot).
template <class T>
void trsm_right_upper_lu(index_t m, index_t n, const T* u, index_t ldu, T* b, index_t ldb);

/// b := l⁻¹·b for an m x m unit lower triangular l and an m x n b: LU's U12 = L11⁻¹·A12. Wide
/// blocks (n >= 2m, m >= 16) go through l⁻¹ (?trtri) and an in-place trmm where every entry of l⁻¹
/// is at most 1024 in modulus (a pivoted L's is near 1), the BLAS's trsm otherwise. Returns
/// whether the inverse solved.
template <class T>
bool trsm_left_lower_unit_lu(index_t m, index_t n, const T* l, index_t ldl, T* b, index_t ldb);

}  // namespace cala::kernels

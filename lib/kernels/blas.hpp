#pragma once
// Host BLAS kernels (BLIS underneath; nothing above this layer names BLIS).
// Column-major, 64-bit sizes; run on the calling rank's OpenMP threads (cala::local_threads()).

#include "cala/types.hpp"

namespace cala::kernels {

/// c := alpha·op(a)·op(b) + beta·c, c is m x n. beta == 0: c is not read.
template <class T>
void gemm(Op op_a, Op op_b, index_t m, index_t n, index_t k, T alpha, const T* a, index_t lda, const T* b,
          index_t ldb, T beta, T* c, index_t ldc);

/// Threads the BLAS library uses for calls made outside cala's kernels (e.g. a ScaLAPACK in the
/// same process, whose BLAS is this one); cala's own kernels set theirs on every call.
void set_threads(int n);

/// c := beta·c (beta == 0: c := 0, not read).
template <class T>
void scale(index_t m, index_t n, T beta, T* c, index_t ldc);

/// c := op(x) + beta·c (beta == 0: c := op(x), c not read); c is m x n, x is op(x)'s transpose
/// shape when op is T or C.
template <class T>
void add(Op op, index_t m, index_t n, const T* x, index_t ldx, T beta, T* c, index_t ldc);

/// b := op(a) for op in {N, T, C}; a is m x n, b is op(a)'s shape.
template <class T>
void copy(Op op, index_t m, index_t n, const T* a, index_t lda, T* b, index_t ldb);

}  // namespace cala::kernels

#pragma once
// Host BLAS kernels (OpenBLAS loaded apart, or BLIS where it measured faster: openblas.hpp;
// nothing above this layer names either).
// Column-major, 64-bit sizes; run on the calling rank's OpenMP threads (cala::local_threads()).

#include "cala/types.hpp"

namespace cala::kernels {

/// c := alpha·op(a)·op(b) + beta·c, c is m x n. beta == 0: c is not read.
template <class T>
void gemm(Op op_a, Op op_b, index_t m, index_t n, index_t k, T alpha, const T* a, index_t lda, const T* b,
          index_t ldb, T beta, T* c, index_t ldc);

/// Rows of C per BLIS call in gemm (OpenBLAS gets one call): a product whose C has more rows runs as calls of equal height
/// (a multiple of 16) of at most this many rows. 0: one call. Default CALA_GEMM_ROWS, else 2048.
/// Measured on this project's 2-core EPYC (BLIS 0.9, zen3 kernels, both ranks at once;
/// docs/performance.md): C of more than about 2048 rows runs 7-17% faster in calls of at most
/// 2048 rows, although each call packs op(B) again, 1/(2·rows) of the flops (4096x2048x256:
/// 95 GF/s as one call, 103 in two; 65536x256x512: 67 as one, 79 in 32).
index_t gemm_row_block();
/// Sets gemm_row_block() for the whole process (tests, benchmarks); returns the previous value.
index_t set_gemm_row_block(index_t rows);

/// Threads cala's kernels use on the calling thread: the innermost ThreadScope, else
/// omp_get_max_threads().
int threads() noexcept;

/// Inside this scope, kernels called from this thread use `n` threads (1 inside OpenMP tasks).
class ThreadScope {
public:
    explicit ThreadScope(int n) noexcept;
    ~ThreadScope();
    ThreadScope(const ThreadScope&) = delete;
    ThreadScope& operator=(const ThreadScope&) = delete;

private:
    int saved_;
};

/// b := alpha·op(a)⁻¹·b (left) or alpha·b·op(a)⁻¹ (right); a triangular (lower or upper, unit
/// diagonal or not), b is m x n.
template <class T>
void trsm(bool left, bool lower, Op op_a, bool unit, index_t m, index_t n, T alpha, const T* a, index_t lda,
          T* b, index_t ldb);

/// b := alpha·op(a)·b (left) or alpha·b·op(a) (right); a triangular (lower or upper, unit
/// diagonal or not), b is m x n, in place.
template <class T>
void trmm(bool left, bool lower, Op op_a, bool unit, index_t m, index_t n, T alpha, const T* a, index_t lda,
          T* b, index_t ldb);

/// c := alpha·op(a)·op(a)ᴴ + beta·c on the lower or upper triangle of the n x n matrix c (op N:
/// a is n x k; C: a is k x n). Real types: syrk. beta == 0: c is not read.
template <class T>
void herk(bool lower, Op op_a, index_t n, index_t k, real_t<T> alpha, const T* a, index_t lda, real_t<T> beta,
          T* c, index_t ldc);

/// c := alpha·op(a)·op(a)ᵀ + beta·c on the lower or upper triangle of the n x n matrix c (op N:
/// a is n x k; T: a is k x n): BLAS ?syrk, complex types included (no conjugation). Real types
/// are herk's. beta == 0: c is not read.
template <class T>
void syrk(bool lower, Op op_a, index_t n, index_t k, T alpha, const T* a, index_t lda, T beta, T* c, index_t ldc);

/// b := b·l⁻ᴴ for an n x n lower triangular l (non-unit) and an m x n b: the panel solve of a
/// right-looking Cholesky. Tall panels go through l⁻¹ and an in-place trmm.
template <class T>
void trsm_right_lower_ch(index_t m, index_t n, const T* l, index_t ldl, T* b, index_t ldb);

/// inv := l⁻¹ (n x n, ld n) for an n x n lower triangular l (non-unit); the upper triangle is zero.
template <class T>
void inverse_lower(index_t n, const T* l, index_t ldl, T* inv);

/// b := b·invᴴ in place for an n x n lower triangular inv (ld n) and an m x n b.
template <class T>
void trmm_right_lower_ch(index_t m, index_t n, const T* inv, T* b, index_t ldb);

/// Cholesky factorization of the n x n tile a (LAPACK ?potrf, the lower or upper triangle).
/// Returns LAPACK's info: 0, or the 1-based order of the first minor that is not positive definite.
template <class T>
index_t potrf(bool lower, index_t n, T* a, index_t lda);

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

#include "kernels/blas.hpp"

#include <blis.h>
#include <omp.h>

#include <algorithm>
#include <complex>
#include <cstring>

namespace cala::kernels {

namespace {

trans_t blis_trans(Op op) {
    return op == Op::N ? BLIS_NO_TRANSPOSE : op == Op::T ? BLIS_TRANSPOSE : BLIS_CONJ_TRANSPOSE;
}

// BLIS's complex types are layout-compatible with std::complex.
template <class T> struct Blis;
template <> struct Blis<float> { using type = float; };
template <> struct Blis<double> { using type = double; };
template <> struct Blis<std::complex<float>> { using type = scomplex; };
template <> struct Blis<std::complex<double>> { using type = dcomplex; };
template <class T> auto* bl(T* p) { return reinterpret_cast<typename Blis<std::remove_const_t<T>>::type*>(const_cast<std::remove_const_t<T>*>(p)); }

template <class T>
void blis_gemm(trans_t ta, trans_t tb, dim_t m, dim_t n, dim_t k, T* alpha, T* a, inc_t lda, T* b, inc_t ldb,
               T* beta, T* c, inc_t ldc) {
    if constexpr (std::is_same_v<T, float>) bli_sgemm(ta, tb, m, n, k, alpha, a, 1, lda, b, 1, ldb, beta, c, 1, ldc);
    else if constexpr (std::is_same_v<T, double>) bli_dgemm(ta, tb, m, n, k, alpha, a, 1, lda, b, 1, ldb, beta, c, 1, ldc);
    else if constexpr (std::is_same_v<T, scomplex>) bli_cgemm(ta, tb, m, n, k, alpha, a, 1, lda, b, 1, ldb, beta, c, 1, ldc);
    else bli_zgemm(ta, tb, m, n, k, alpha, a, 1, lda, b, 1, ldb, beta, c, 1, ldc);
}

}  // namespace

template <class T>
void gemm(Op op_a, Op op_b, index_t m, index_t n, index_t k, T alpha, const T* a, index_t lda, const T* b,
          index_t ldb, T beta, T* c, index_t ldc) {
    if (m == 0 || n == 0) return;
    if (k == 0 || alpha == T(0)) {
        scale(m, n, beta, c, ldc);
        return;
    }
    if (beta == T(0)) scale(m, n, T(0), c, ldc);  // BLAS semantics: NaN in c must not leak
    // Threads pay off only on products large enough to split; tiny ones stay on one core.
    const bool tiny = double(m) * double(n) * double(k) < 64.0 * 64.0 * 64.0;
    bli_thread_set_num_threads(tiny ? 1 : omp_get_max_threads());
    blis_gemm(blis_trans(op_a), blis_trans(op_b), m, n, k, bl(&alpha), bl(a), lda, bl(b), ldb, bl(&beta), bl(c), ldc);
}

void set_threads(int n) { bli_thread_set_num_threads(n); }

template <class T>
void scale(index_t m, index_t n, T beta, T* c, index_t ldc) {
    if (beta == T(1)) return;
#pragma omp parallel for schedule(static) if (m * n > 65536)
    for (index_t j = 0; j < n; ++j) {
        T* col = c + j * ldc;
        if (beta == T(0)) std::fill(col, col + m, T(0));
        else for (index_t i = 0; i < m; ++i) col[i] *= beta;
    }
}

template <class T>
void add(Op op, index_t m, index_t n, const T* x, index_t ldx, T beta, T* c, index_t ldc) {
    const bool cj = op == Op::C;
    // Element (i, j) of op(x): x(i, j) or x(j, i), conjugated for C.
    const index_t si = op == Op::N ? 1 : ldx, sj = op == Op::N ? ldx : 1;
#pragma omp parallel for schedule(static) if (m * n > 65536)
    for (index_t j = 0; j < n; ++j) {
        T* col = c + j * ldc;
        const T* xc = x + j * sj;
        if (beta == T(0)) for (index_t i = 0; i < m; ++i) col[i] = conj_if(xc[i * si], cj);
        else for (index_t i = 0; i < m; ++i) col[i] = conj_if(xc[i * si], cj) + beta * col[i];
    }
}

template <class T>
void copy(Op op, index_t m, index_t n, const T* a, index_t lda, T* b, index_t ldb) {
    if (op == Op::N) {
#pragma omp parallel for schedule(static) if (m * n > 65536)
        for (index_t j = 0; j < n; ++j) std::copy(a + j * lda, a + j * lda + m, b + j * ldb);
        return;
    }
    // Transpose in 32 x 32 tiles: b(j, i) = op(a(i, j)).
    const bool cj = op == Op::C;
    constexpr index_t t = 32;
#pragma omp parallel for collapse(2) schedule(static) if (m * n > 65536)
    for (index_t j0 = 0; j0 < n; j0 += t)
        for (index_t i0 = 0; i0 < m; i0 += t)
            for (index_t i = i0; i < std::min(m, i0 + t); ++i)
                for (index_t j = j0; j < std::min(n, j0 + t); ++j) b[j + i * ldb] = conj_if(a[i + j * lda], cj);
}

#define CALA_INST(T)                                                                                         \
    template void gemm<T>(Op, Op, index_t, index_t, index_t, T, const T*, index_t, const T*, index_t, T, T*,   \
                          index_t);                                                                          \
    template void scale<T>(index_t, index_t, T, T*, index_t);                                                 \
    template void add<T>(Op, index_t, index_t, const T*, index_t, T, T*, index_t);                                \
    template void copy<T>(Op, index_t, index_t, const T*, index_t, T*, index_t);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::kernels

// LU of panels: a recursive getrf on BLIS (LAPACK ?getrf kept beside it as the reference); the
// L21 solve of LU that tolerates zero pivots; the U12 solve through L11⁻¹ where it is tame.

#include "kernels/lapack_lu.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>
#include <utility>

#include "cala/error.hpp"
#include "core/check.hpp"
#include "kernels/blas.hpp"

extern "C" {
void sgetrf_(const int*, const int*, float*, const int*, int*, int*);
void dgetrf_(const int*, const int*, double*, const int*, int*, int*);
void cgetrf_(const int*, const int*, std::complex<float>*, const int*, int*, int*);
void zgetrf_(const int*, const int*, std::complex<double>*, const int*, int*, int*);
void strtri_(const char*, const char*, const int*, float*, const int*, int*);
void dtrtri_(const char*, const char*, const int*, double*, const int*, int*);
void ctrtri_(const char*, const char*, const int*, std::complex<float>*, const int*, int*);
void ztrtri_(const char*, const char*, const int*, std::complex<double>*, const int*, int*);
}

namespace cala::kernels {

namespace {

// |x| as LAPACK's i?amax compares it: |re| + |im| for complex types.
template <class T>
real_t<T> abs1(const T& x) {
    if constexpr (is_complex_v<T>) return std::abs(x.real()) + std::abs(x.imag());
    else return std::abs(x);
}

// Row interchanges rows[i] <-> piv[i], i = 0 .. k-1 in order, on n columns (column by column:
// every column's swaps while it is in cache).
template <class T>
void swap_rows(index_t n, T* a, index_t lda, const index_t* piv, index_t k) {
    for (index_t j = 0; j < n; ++j) {
        T* col = a + j * lda;
        for (index_t i = 0; i < k; ++i)
            if (piv[i] != i) std::swap(col[i], col[piv[i]]);
    }
}

// The first row of the largest |x| (abs1) among x[0 .. m), LAPACK's rule (a NaN never wins).
template <class T>
index_t iamax(index_t m, const T* x) {
    index_t at = 0;
    real_t<T> best = abs1(x[0]);
    for (index_t i = 1; i < m; ++i)
        if (const real_t<T> v = abs1(x[i]); v > best) {
            best = v;
            at = i;
        }
    return at;
}

// Unblocked right-looking LU of a narrow m x n block (n <= kLeaf, m >= n), LAPACK's getf2
// arithmetic: pivot by iamax, swap within the block, scale by the reciprocal unless the pivot is
// tiny (then divide), rank-1 update of the block's later columns.
template <class T>
void getf2(index_t m, index_t n, T* a, index_t lda, index_t* piv, index_t& info, index_t joff) {
    const real_t<T> sfmin = std::numeric_limits<real_t<T>>::min();
    for (index_t j = 0; j < n; ++j) {
        T* cj = a + j * lda;
        const index_t p = j + iamax(m - j, cj + j);
        piv[j] = p;
        if (cj[p] != T(0)) {
            if (p != j)
                for (index_t c = 0; c < n; ++c) std::swap(a[j + c * lda], a[p + c * lda]);
            const T d = cj[j];
            if (std::abs(d) >= sfmin) {
                const T r = T(1) / d;
                for (index_t i = j + 1; i < m; ++i) cj[i] *= r;
            } else {
                for (index_t i = j + 1; i < m; ++i) cj[i] /= d;
            }
        } else if (info == 0) {
            info = joff + j + 1;
        }
        for (index_t c = j + 1; c < n; ++c) {
            T* cc = a + c * lda;
            const T t = cc[j];
            if (t == T(0)) continue;
            for (index_t i = j + 1; i < m; ++i) cc[i] -= cj[i] * t;
        }
    }
}

constexpr index_t kLeaf = 8;

// Recursive LU (Toledo; Gustavson) of an m x n block, m >= n: the left half, its interchanges on
// the right half, U12 by a unit lower trsm, A22 -= A21·U12 by one gemm, the right half, its
// interchanges on the left half. Level-3 calls on widths kLeaf·2^i, so that a 64-column panel
// makes 14 BLAS calls (LAPACK's getrf2 recurses to single columns: ~130 calls, most of them
// tiny, each paying the BLAS's fixed cost).
template <class T>
void getrf_rec(index_t m, index_t n, T* a, index_t lda, index_t* piv, index_t& info, index_t joff) {
    if (n <= kLeaf) return getf2(m, n, a, lda, piv, info, joff);
    const index_t n1 = (n / 2 + kLeaf - 1) / kLeaf * kLeaf, n2 = n - n1;
    getrf_rec(m, n1, a, lda, piv, info, joff);
    T* a12 = a + n1 * lda;
    swap_rows(n2, a12, lda, piv, n1);
    trsm(true, true, Op::N, true, n1, n2, T(1), a, lda, a12, lda);
    gemm(Op::N, Op::N, m - n1, n2, n1, T(-1), a + n1, lda, a12, lda, T(1), a12 + n1, lda);
    getrf_rec(m - n1, n2, a12 + n1, lda, piv + n1, info, joff + n1);
    for (index_t i = n1; i < n; ++i) piv[i] += n1;
    // The right half's interchanges (rows n1 .. n) on the left half's columns.
    for (index_t j = 0; j < n1; ++j) {
        T* col = a + j * lda;
        for (index_t i = n1; i < n; ++i)
            if (piv[i] != i) std::swap(col[i], col[piv[i]]);
    }
}

}  // namespace

template <class T>
index_t getrf(index_t m, index_t n, T* a, index_t lda, std::vector<index_t>& ipiv) {
    const index_t k = m < n ? m : n;
    ipiv.assign(static_cast<std::size_t>(k), 0);
    if (k == 0) return 0;
    if (lda < std::max<index_t>(1, m)) throw Error(detail::cat("kernels::getrf: lda ", lda, " < m ", m));
    index_t info = 0;
    getrf_rec(m, k, a, lda, ipiv.data(), info, 0);
    if (n > k) {
        // A wide block (m < n): the interchanges and U's rows on the columns right of the square.
        T* a12 = a + k * lda;
        swap_rows(n - k, a12, lda, ipiv.data(), k);
        trsm(true, true, Op::N, true, k, n - k, T(1), a, lda, a12, lda);
    }
    return info;
}

template <class T>
index_t getrf_lapack(index_t m, index_t n, T* a, index_t lda, std::vector<index_t>& ipiv) {
    const index_t k = m < n ? m : n;
    ipiv.assign(static_cast<std::size_t>(k), 0);
    if (k == 0) return 0;
    if (m > 2147483647 || n > 2147483647 || lda > 2147483647)
        throw Error(detail::cat("kernels::getrf_lapack: ", m, " x ", n, " (ld ", lda, ") exceeds LAPACK's int"));
    const int mm = static_cast<int>(m), nn = static_cast<int>(n), ld = static_cast<int>(lda);
    std::vector<int> piv(static_cast<std::size_t>(k));
    int info = 0;
    if constexpr (std::is_same_v<T, float>) sgetrf_(&mm, &nn, a, &ld, piv.data(), &info);
    else if constexpr (std::is_same_v<T, double>) dgetrf_(&mm, &nn, a, &ld, piv.data(), &info);
    else if constexpr (std::is_same_v<T, std::complex<float>>) cgetrf_(&mm, &nn, a, &ld, piv.data(), &info);
    else zgetrf_(&mm, &nn, a, &ld, piv.data(), &info);
    if (info < 0) throw Error(detail::cat("kernels::getrf_lapack: LAPACK rejected argument ", -info));
    for (index_t i = 0; i < k; ++i) ipiv[static_cast<std::size_t>(i)] = piv[static_cast<std::size_t>(i)] - 1;
    return info;
}

template <class T>
void trsm_right_upper_lu(index_t m, index_t n, const T* u, index_t ldu, T* b, index_t ldb) {
    if (m == 0 || n == 0) return;
    bool singular = false;
    for (index_t j = 0; j < n; ++j) singular = singular || u[j + j * ldu] == T(0);
    if (!singular) {
        trsm(false, false, Op::N, false, m, n, T(1), u, ldu, b, ldb);
        return;
    }
    // Column by column: x_j = (b_j − Σ_{i<j} x_i·u(i, j)) / u(j, j), no division by a zero.
    for (index_t j = 0; j < n; ++j) {
        T* bj = b + j * ldb;
        for (index_t i = 0; i < j; ++i) {
            const T uij = u[i + j * ldu];
            if (uij == T(0)) continue;
            const T* bi = b + i * ldb;
            for (index_t r = 0; r < m; ++r) bj[r] -= bi[r] * uij;
        }
        const T d = u[j + j * ldu];
        if (d != T(0))
            for (index_t r = 0; r < m; ++r) bj[r] /= d;
    }
}

template <class T>
bool trsm_left_lower_unit_lu(index_t m, index_t n, const T* l, index_t ldl, T* b, index_t ldb) {
    if (m == 0 || n == 0) return false;
    const auto substitute = [&] {
        trsm(true, true, Op::N, true, m, n, T(1), l, ldl, b, ldb);
        return false;
    };
    if (m < 16 || n < 2 * m || m > 2147483647) return substitute();
    // L⁻¹ (LAPACK ?trtri, unit: the diagonal is not read), then b := L⁻¹·b as an in-place trmm:
    // 3-4x the rate of the BLAS's trsm on a kb x n block row (docs/lu.md).
    std::vector<T> inv(static_cast<std::size_t>(m * m));
    copy(Op::N, m, m, l, ldl, inv.data(), m);
    const int mm = static_cast<int>(m);
    int info = 0;
    const char lo = 'L', un = 'U';
    if constexpr (std::is_same_v<T, float>) strtri_(&lo, &un, &mm, inv.data(), &mm, &info);
    else if constexpr (std::is_same_v<T, double>) dtrtri_(&lo, &un, &mm, inv.data(), &mm, &info);
    else if constexpr (std::is_same_v<T, std::complex<float>>) ctrtri_(&lo, &un, &mm, inv.data(), &mm, &info);
    else ztrtri_(&lo, &un, &mm, inv.data(), &mm, &info);
    if (info != 0) return substitute();  // (a unit ?trtri has no singular case; never raise mid-factorization)
    // The product's error grows with |L⁻¹|·|L| where substitution's does not. Pivoted multipliers
    // keep |L⁻¹| near 1 (random matrices, n 2048, kb 16-256: at most 2.0-3.9); a larger inverse
    // (Wilkinson's L: 2^(kb−2)) or a NaN in it takes the BLAS's trsm. (With Inf or NaN in b, a
    // trmm that multiplies its zero-filled triangle may spread them to rows above; the factors
    // hold NaN either way.)
    for (index_t j = 0; j < m; ++j)
        for (index_t i = j + 1; i < m; ++i)
            if (!(std::abs(inv[static_cast<std::size_t>(i + j * m)]) <= real_t<T>(1024))) return substitute();
    trmm(true, true, Op::N, true, m, n, T(1), inv.data(), m, b, ldb);
    return true;
}

#define CALA_INST(T)                                                                      \
    template index_t getrf<T>(index_t, index_t, T*, index_t, std::vector<index_t>&);     \
    template index_t getrf_lapack<T>(index_t, index_t, T*, index_t, std::vector<index_t>&); \
    template void trsm_right_upper_lu<T>(index_t, index_t, const T*, index_t, T*, index_t); \
    template bool trsm_left_lower_unit_lu<T>(index_t, index_t, const T*, index_t, T*, index_t);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::kernels

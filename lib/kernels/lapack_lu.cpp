// LAPACK ?getrf behind kernels::getrf; the L21 solve of LU that tolerates zero pivots.

#include "kernels/lapack_lu.hpp"

#include <complex>
#include <type_traits>

#include "cala/error.hpp"
#include "core/check.hpp"
#include "kernels/blas.hpp"

extern "C" {
void sgetrf_(const int*, const int*, float*, const int*, int*, int*);
void dgetrf_(const int*, const int*, double*, const int*, int*, int*);
void cgetrf_(const int*, const int*, std::complex<float>*, const int*, int*, int*);
void zgetrf_(const int*, const int*, std::complex<double>*, const int*, int*, int*);
}

namespace cala::kernels {

template <class T>
index_t getrf(index_t m, index_t n, T* a, index_t lda, std::vector<index_t>& ipiv) {
    const index_t k = m < n ? m : n;
    ipiv.assign(static_cast<std::size_t>(k), 0);
    if (k == 0) return 0;
    if (m > 2147483647 || n > 2147483647 || lda > 2147483647)
        throw Error(detail::cat("kernels::getrf: ", m, " x ", n, " (ld ", lda, ") exceeds LAPACK's int"));
    const int mm = static_cast<int>(m), nn = static_cast<int>(n), ld = static_cast<int>(lda);
    std::vector<int> piv(static_cast<std::size_t>(k));
    int info = 0;
    if constexpr (std::is_same_v<T, float>) sgetrf_(&mm, &nn, a, &ld, piv.data(), &info);
    else if constexpr (std::is_same_v<T, double>) dgetrf_(&mm, &nn, a, &ld, piv.data(), &info);
    else if constexpr (std::is_same_v<T, std::complex<float>>) cgetrf_(&mm, &nn, a, &ld, piv.data(), &info);
    else zgetrf_(&mm, &nn, a, &ld, piv.data(), &info);
    if (info < 0) throw Error(detail::cat("kernels::getrf: LAPACK rejected argument ", -info));
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

#define CALA_INST(T)                                                                      \
    template index_t getrf<T>(index_t, index_t, T*, index_t, std::vector<index_t>&);     \
    template void trsm_right_upper_lu<T>(index_t, index_t, const T*, index_t, T*, index_t);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::kernels

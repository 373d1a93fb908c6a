#include "kernels/lapack_qr.hpp"

#include <algorithm>
#include <complex>
#include <type_traits>
#include <vector>

#include "kernels/blas.hpp"

extern "C" {
using cf = std::complex<float>;
using zd = std::complex<double>;
void sgeqrf_(const int*, const int*, float*, const int*, float*, float*, const int*, int*);
void dgeqrf_(const int*, const int*, double*, const int*, double*, double*, const int*, int*);
void cgeqrf_(const int*, const int*, cf*, const int*, cf*, cf*, const int*, int*);
void zgeqrf_(const int*, const int*, zd*, const int*, zd*, zd*, const int*, int*);
void sgeqrt3_(const int*, const int*, float*, const int*, float*, const int*, int*);
void dgeqrt3_(const int*, const int*, double*, const int*, double*, const int*, int*);
void cgeqrt3_(const int*, const int*, cf*, const int*, cf*, const int*, int*);
void zgeqrt3_(const int*, const int*, zd*, const int*, zd*, const int*, int*);
void slarft_(const char*, const char*, const int*, const int*, const float*, const int*, const float*, float*, const int*);
void dlarft_(const char*, const char*, const int*, const int*, const double*, const int*, const double*, double*, const int*);
void clarft_(const char*, const char*, const int*, const int*, const cf*, const int*, const cf*, cf*, const int*);
void zlarft_(const char*, const char*, const int*, const int*, const zd*, const int*, const zd*, zd*, const int*);
void sormqr_(const char*, const char*, const int*, const int*, const int*, const float*, const int*, const float*,
             float*, const int*, float*, const int*, int*);
void dormqr_(const char*, const char*, const int*, const int*, const int*, const double*, const int*, const double*,
             double*, const int*, double*, const int*, int*);
void cunmqr_(const char*, const char*, const int*, const int*, const int*, const cf*, const int*, const cf*, cf*,
             const int*, cf*, const int*, int*);
void zunmqr_(const char*, const char*, const int*, const int*, const int*, const zd*, const int*, const zd*, zd*,
             const int*, zd*, const int*, int*);
void sorgqr_(const int*, const int*, const int*, float*, const int*, const float*, float*, const int*, int*);
void dorgqr_(const int*, const int*, const int*, double*, const int*, const double*, double*, const int*, int*);
void cungqr_(const int*, const int*, const int*, cf*, const int*, const cf*, cf*, const int*, int*);
void zungqr_(const int*, const int*, const int*, zd*, const int*, const zd*, zd*, const int*, int*);
}

namespace cala::kernels {

namespace {

template <class T>
int query_size(T w) {
    return std::max(1, static_cast<int>(std::real(w)));
}

}  // namespace

template <class T>
void geqrf(index_t m, index_t n, T* a, index_t lda, T* tau) {
    if (m == 0 || n == 0) return;
    set_threads(threads());
    const int mm = static_cast<int>(m), nn = static_cast<int>(n), ld = static_cast<int>(lda);
    int info = 0, lwork = -1;
    T q{};
    auto call = [&](T* work) {
        if constexpr (std::is_same_v<T, float>) sgeqrf_(&mm, &nn, a, &ld, tau, work, &lwork, &info);
        else if constexpr (std::is_same_v<T, double>) dgeqrf_(&mm, &nn, a, &ld, tau, work, &lwork, &info);
        else if constexpr (std::is_same_v<T, cf>) cgeqrf_(&mm, &nn, a, &ld, tau, work, &lwork, &info);
        else zgeqrf_(&mm, &nn, a, &ld, tau, work, &lwork, &info);
    };
    call(&q);
    lwork = query_size(q);
    std::vector<T> work(static_cast<std::size_t>(lwork));
    call(work.data());
}

template <class T>
void geqrt3(index_t m, index_t n, T* a, index_t lda, T* t, index_t ldt) {
    if (m == 0 || n == 0) return;
    set_threads(threads());
    const int mm = static_cast<int>(m), nn = static_cast<int>(n), la = static_cast<int>(lda),
              lt = static_cast<int>(ldt);
    int info = 0;
    if constexpr (std::is_same_v<T, float>) sgeqrt3_(&mm, &nn, a, &la, t, &lt, &info);
    else if constexpr (std::is_same_v<T, double>) dgeqrt3_(&mm, &nn, a, &la, t, &lt, &info);
    else if constexpr (std::is_same_v<T, cf>) cgeqrt3_(&mm, &nn, a, &la, t, &lt, &info);
    else zgeqrt3_(&mm, &nn, a, &la, t, &lt, &info);
}

template <class T>
void larft(index_t n, index_t k, const T* v, index_t ldv, const T* tau, T* t, index_t ldt) {
    if (k == 0) return;
    set_threads(threads());
    const int nn = static_cast<int>(n), kk = static_cast<int>(k), lv = static_cast<int>(ldv),
              lt = static_cast<int>(ldt);
    const char d = 'F', s = 'C';
    if constexpr (std::is_same_v<T, float>) slarft_(&d, &s, &nn, &kk, v, &lv, tau, t, &lt);
    else if constexpr (std::is_same_v<T, double>) dlarft_(&d, &s, &nn, &kk, v, &lv, tau, t, &lt);
    else if constexpr (std::is_same_v<T, cf>) clarft_(&d, &s, &nn, &kk, v, &lv, tau, t, &lt);
    else zlarft_(&d, &s, &nn, &kk, v, &lv, tau, t, &lt);
}

template <class T>
void ormqr(bool left, Op op, index_t m, index_t n, index_t k, const T* a, index_t lda, const T* tau, T* c,
           index_t ldc) {
    if (m == 0 || n == 0 || k == 0) return;
    set_threads(threads());
    const char side = left ? 'L' : 'R';
    const char trans = op == Op::N ? 'N' : (is_complex_v<T> ? 'C' : 'T');
    const int mm = static_cast<int>(m), nn = static_cast<int>(n), kk = static_cast<int>(k),
              la = static_cast<int>(lda), lc = static_cast<int>(ldc);
    int info = 0, lwork = -1;
    T q{};
    auto call = [&](T* work) {
        if constexpr (std::is_same_v<T, float>) sormqr_(&side, &trans, &mm, &nn, &kk, a, &la, tau, c, &lc, work, &lwork, &info);
        else if constexpr (std::is_same_v<T, double>) dormqr_(&side, &trans, &mm, &nn, &kk, a, &la, tau, c, &lc, work, &lwork, &info);
        else if constexpr (std::is_same_v<T, cf>) cunmqr_(&side, &trans, &mm, &nn, &kk, a, &la, tau, c, &lc, work, &lwork, &info);
        else zunmqr_(&side, &trans, &mm, &nn, &kk, a, &la, tau, c, &lc, work, &lwork, &info);
    };
    call(&q);
    lwork = query_size(q);
    std::vector<T> work(static_cast<std::size_t>(lwork));
    call(work.data());
}

template <class T>
void ungqr(index_t m, index_t n, index_t k, T* a, index_t lda, const T* tau) {
    if (m == 0 || n == 0) return;
    set_threads(threads());
    const int mm = static_cast<int>(m), nn = static_cast<int>(n), kk = static_cast<int>(k), la = static_cast<int>(lda);
    int info = 0, lwork = -1;
    T q{};
    auto call = [&](T* work) {
        if constexpr (std::is_same_v<T, float>) sorgqr_(&mm, &nn, &kk, a, &la, tau, work, &lwork, &info);
        else if constexpr (std::is_same_v<T, double>) dorgqr_(&mm, &nn, &kk, a, &la, tau, work, &lwork, &info);
        else if constexpr (std::is_same_v<T, cf>) cungqr_(&mm, &nn, &kk, a, &la, tau, work, &lwork, &info);
        else zungqr_(&mm, &nn, &kk, a, &la, tau, work, &lwork, &info);
    };
    call(&q);
    lwork = query_size(q);
    std::vector<T> work(static_cast<std::size_t>(lwork));
    call(work.data());
}

template <class T>
void larft_gram(index_t k, const T* g, index_t ldg, const T* tau, T* t, index_t ldt) {
    // Column i: t(0:i, i) = −tau_i·t(0:i, 0:i)·g(0:i, i), as axpys down the columns of t (contiguous); g(0:i, i) is
    // copied first, so g may be t itself (ldg == ldt).
    std::vector<T> col(static_cast<std::size_t>(k));
    for (index_t i = 0; i < k; ++i) {
        for (index_t l = 0; l < i; ++l) col[static_cast<std::size_t>(l)] = g[l + i * ldg];
        T* ti = t + i * ldt;
        for (index_t j = 0; j < k; ++j) ti[j] = T(0);
        for (index_t l = 0; l < i; ++l) {
            const T s = col[static_cast<std::size_t>(l)];
            const T* tl = t + l * ldt;
            for (index_t j = 0; j <= l; ++j) ti[j] += tl[j] * s;
        }
        for (index_t j = 0; j < i; ++j) ti[j] *= -tau[i];
        ti[i] = tau[i];
    }
}

#define CALA_INST(T)                                                                                 \
    template void geqrf<T>(index_t, index_t, T*, index_t, T*);                                       \
    template void geqrt3<T>(index_t, index_t, T*, index_t, T*, index_t);                           \
    template void larft<T>(index_t, index_t, const T*, index_t, const T*, T*, index_t);              \
    template void ormqr<T>(bool, Op, index_t, index_t, index_t, const T*, index_t, const T*, T*, index_t); \
    template void ungqr<T>(index_t, index_t, index_t, T*, index_t, const T*);                        \
    template void larft_gram<T>(index_t, const T*, index_t, const T*, T*, index_t);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::kernels

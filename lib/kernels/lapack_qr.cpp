#include "kernels/lapack_qr.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/arch.hpp"
#include "kernels/blas.hpp"

extern "C" {
using cf = std::complex<float>;
using zd = std::complex<double>;
void sgeqrf_(const int*, const int*, float*, const int*, float*, float*, const int*, int*);
void dgeqrf_(const int*, const int*, double*, const int*, double*, double*, const int*, int*);
void cgeqrf_(const int*, const int*, cf*, const int*, cf*, cf*, const int*, int*);
void zgeqrf_(const int*, const int*, zd*, const int*, zd*, zd*, const int*, int*);
void slarfg_(const int*, float*, float*, const int*, float*);
void dlarfg_(const int*, double*, double*, const int*, double*);
void clarfg_(const int*, cf*, cf*, const int*, cf*);
void zlarfg_(const int*, zd*, zd*, const int*, zd*);
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

namespace {

// H = I − tau·v·vᴴ with H·[alpha; x] = [beta; 0] (LAPACK ?larfg): alpha := beta, x := v below its
// unit head.
template <class T>
void lapack_larfg(index_t n, T& alpha, T* x, T& tau) {
    const int nn = static_cast<int>(n), inc = 1;
    if constexpr (std::is_same_v<T, float>) slarfg_(&nn, &alpha, x, &inc, &tau);
    else if constexpr (std::is_same_v<T, double>) dlarfg_(&nn, &alpha, x, &inc, &tau);
    else if constexpr (std::is_same_v<T, cf>) clarfg_(&nn, &alpha, x, &inc, &tau);
    else zlarfg_(&nn, &alpha, x, &inc, &tau);
}

// ?larfg's reflector with its norm and scaling as plain loops: LAPACK's ?larfg calls the process's
// global dnrm2_, BLIS's where libblis loads first, a scalar loop that took half of a 4096 x 64
// panel's time. Where beta would be below LAPACK's safe minimum (its rescaling loop), LAPACK's
// ?larfg itself runs on the untouched inputs.
template <class T>
void larfg(index_t n, T& alpha, T* x, T& tau) {
    using R = real_t<T>;
    const index_t k = n - 1;
    const R* xr = reinterpret_cast<const R*>(x);  // real and imaginary parts side by side
    const index_t kr = std::is_floating_point_v<T> ? k : 2 * k;
    // The sum of squares unscaled (eight partial sums); where it may have underflowed or
    // overflowed, or met a NaN, LAPACK's scaled norm decides.
    R part[8] = {};
    index_t i = 0;
    for (; i + 8 <= kr; i += 8)
        for (int u = 0; u < 8; ++u) part[u] += xr[i + u] * xr[i + u];
    for (; i < kr; ++i) part[0] += xr[i] * xr[i];
    const R ss = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
    constexpr R eps = std::numeric_limits<R>::epsilon();
    const bool tiny = ss == 0 && std::any_of(xr, xr + kr, [](R v) { return v != 0; });
    if (tiny || (ss != 0 && !(ss >= std::numeric_limits<R>::min() / (eps * eps) &&
                              ss <= std::numeric_limits<R>::max() * eps))) {
        lapack_larfg(n, alpha, x, tau);
        return;
    }
    const R xnorm = std::sqrt(ss);
    const R ar = std::real(alpha), ai = std::imag(alpha);
    if (xnorm == 0 && ai == 0) {
        tau = T(0);
        return;
    }
    const R beta = -std::copysign(std::hypot(ar, ai, xnorm), ar);
    const R safmin = std::numeric_limits<R>::min() / eps;
    if (std::abs(beta) < safmin) {
        lapack_larfg(n, alpha, x, tau);
        return;
    }
    if constexpr (std::is_floating_point_v<T>) tau = (beta - ar) / beta;
    else tau = T((beta - ar) / beta, -ai / beta);
    const T scal = T(1) / (alpha - T(beta));
    for (index_t i = 0; i < k; ++i) x[i] *= scal;
    alpha = T(beta);
}

template <class T>
T conj_of(T x) {
    if constexpr (std::is_floating_point_v<T>) return x;
    else return std::conj(x);
}

}  // namespace

// LAPACK's ?geqrt3 recursion (Elmroth and Gustavson 2000) with its products through kernels::gemm
// and kernels::trmm, i.e. the BLAS cala chose: LAPACK's own ?geqrt3 reaches the BLAS through the
// process's global dgemm_ and dtrmm_, which are BLIS's compatibility layer wherever libblis loads
// first (2.2 GF/s on 2048 x 64, Emerald Rapids, against 20 on OpenBLAS).
template <class T>
void geqrt3(index_t m, index_t n, T* a, index_t lda, T* t, index_t ldt) {
    if (m == 0 || n == 0) return;
    if (n == 1) {
        set_threads(threads());
        larfg(m, a[0], a + std::min<index_t>(1, m - 1), t[0]);
        return;
    }
    const index_t n1 = n / 2, n2 = n - n1;
    T* a2 = a + n1 * lda;   // A(:, n1:n)
    T* t12 = t + n1 * ldt;  // T(0:n1, n1:n)
    T* t22 = t12 + n1;
    geqrt3(m, n1, a, lda, t, ldt);
    // A(:, n1:n) := Q1ᴴ·A(:, n1:n) = A2 − V1·(T11ᴴ·(V1ᴴ·A2)), W in T12.
    copy(Op::N, n1, n2, a2, lda, t12, ldt);
    trmm(true, true, Op::C, true, n1, n2, T(1), a, lda, t12, ldt);
    gemm(Op::C, Op::N, n1, n2, m - n1, T(1), a + n1, lda, a2 + n1, lda, T(1), t12, ldt);
    trmm(true, false, Op::C, false, n1, n2, T(1), t, ldt, t12, ldt);
    gemm(Op::N, Op::N, m - n1, n2, n1, T(-1), a + n1, lda, t12, ldt, T(1), a2 + n1, lda);
    trmm(true, true, Op::N, true, n1, n2, T(1), a, lda, t12, ldt);
    for (index_t j = 0; j < n2; ++j)
        for (index_t i = 0; i < n1; ++i) a2[i + j * lda] -= t12[i + j * ldt];
    geqrt3(m - n1, n2, a2 + n1, lda, t22, ldt);
    // T12 := −T11·(V1ᴴ·V2)·T22, V2 = A(n1:m, n1:n) unit lower trapezoidal.
    for (index_t j = 0; j < n2; ++j)
        for (index_t i = 0; i < n1; ++i) t12[i + j * ldt] = conj_of(a[n1 + j + i * lda]);
    trmm(false, true, Op::N, true, n1, n2, T(1), a2 + n1, lda, t12, ldt);
    if (m > n) gemm(Op::C, Op::N, n1, n2, m - n, T(1), a + n, lda, a2 + n, lda, T(1), t12, ldt);
    trmm(true, false, Op::N, false, n1, n2, T(-1), t, ldt, t12, ldt);
    trmm(false, false, Op::N, false, n1, n2, T(1), t22, ldt, t12, ldt);
}

namespace {

// Seconds of the panel's two ways on a 2048 x 64 double panel (best of 3 after a warm-up):
// {geqrf + explicit V + herk + larft_gram, geqrt3 + explicit V}.
std::pair<double, double> panel_qr_seconds() {
    constexpr index_t m = 2048, n = 64;
    std::vector<double> a0(static_cast<std::size_t>(m * n)), a(a0.size()), v(a0.size()), t(n * n), tau(n);
    std::uint64_t x = 88172645463325252ull;
    for (double& e : a0) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        e = static_cast<double>(x >> 11) * 0x1.0p-53 - 0.5;
    }
    auto explicit_v = [&] {
        copy(Op::N, m, n, a.data(), m, v.data(), m);
        for (index_t j = 0; j < n; ++j) {
            for (index_t i = 0; i < j; ++i) v[i + j * m] = 0;
            v[j + j * m] = 1;
        }
    };
    auto way = [&](bool recursive) {
        double best = 1e300;
        for (int r = 0; r < 4; ++r) {
            a = a0;
            const double t0 = omp_get_wtime();
            if (recursive) {
                geqrt3(m, n, a.data(), m, t.data(), n);
                explicit_v();
            } else {
                geqrf(m, n, a.data(), m, tau.data());
                explicit_v();
                herk(false, Op::C, n, m, 1.0, v.data(), m, 0.0, t.data(), n);
                larft_gram(n, t.data(), n, tau.data(), t.data(), n);
            }
            if (r > 0) best = std::min(best, omp_get_wtime() - t0);
        }
        return best;
    };
    const double f = way(false), g = way(true);
    return {f, g};
}

}  // namespace

const PanelQrChoice& panel_qr_choice() {
    static const PanelQrChoice v = [] {
        PanelQrChoice c;
        if (const char* e = std::getenv("CALA_QR_PANEL"); e != nullptr) {
            const std::string s = e;
            if (s == "geqrt3" || s == "geqrf") {
                c.geqrt3 = s == "geqrt3";
                c.reason = "CALA_QR_PANEL=" + s;
                return c;
            }
        }
        const std::string lib = load_choice().library.openblas ? "openblas" : "blis";
        const std::string key = "qr_panel_seconds_2048x64_" + lib;
        double f = 0, g = 0;
        if (std::sscanf(machine_cache_get(key).c_str(), "%lf,%lf", &f, &g) != 2 || f <= 0 || g <= 0) {
            std::tie(f, g) = panel_qr_seconds();
            if (machine_cache_writable()) {
                char val[64];
                std::snprintf(val, sizeof val, "%.4g,%.4g", f, g);
                machine_cache_put({{key, val}});
            }
        }
        c.geqrf_seconds = f, c.geqrt3_seconds = g;
        c.geqrt3 = g < 0.97 * f;
        char why[200];
        std::snprintf(why, sizeof why, "%s (2048 x 64 panel with %s: geqrf + Gram T %.3g ms, geqrt3 %.3g ms)",
                      c.geqrt3 ? "geqrt3" : "geqrf", lib.c_str(), f * 1e3, g * 1e3);
        c.reason = why;
        return c;
    }();
    return v;
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

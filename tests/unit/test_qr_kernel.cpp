// kernels::geqrt3 (the recursive panel QR over cala's BLAS, its own larfg norm) against LAPACK's
// geqrf and larft: every type, tall and square tiles, tiny ones, padded leading dimensions, zero
// columns, columns whose squares underflow or overflow, NaN; and the panel choice's report.
// Fresh random entries each run.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/blas.hpp"
#include "kernels/lapack_qr.hpp"

using cala::index_t;
using cala::real_t;

namespace {

template <class T>
T rnd(std::mt19937_64& g) {
    std::uniform_real_distribution<real_t<T>> u(-1, 1);
    if constexpr (cala::is_complex_v<T>) return T(u(g), u(g));
    else return u(g);
}

constexpr double kSentinel = 7.0;

struct Factors {
    double r = 0, v = 0, tau = 0, t = 0;  // largest differences: R / its column's max|A|, V, tau, T / max|T|
};

// Factors a (m x n, ld lda) by geqrt3 and by LAPACK's geqrf (+ larft for T); the largest
// differences, with the untouched parts checked on the way.
template <class T>
Factors compare(index_t m, index_t n, index_t lda, const std::vector<T>& a) {
    std::vector<T> mine(a), ref(a), tau(static_cast<std::size_t>(n));
    std::vector<T> t(static_cast<std::size_t>(n * n), T(kSentinel)), tref(t.size());
    cala::kernels::geqrt3(m, n, mine.data(), lda, t.data(), n);
    cala::kernels::geqrf(m, n, ref.data(), lda, tau.data());
    cala::kernels::larft(m, n, ref.data(), lda, tau.data(), tref.data(), n);
    double tmax = 0;
    Factors d;
    for (index_t j = 0; j < n; ++j) {
        // R's column j against column j's own scale (columns of 1e-170 and 1e170 below).
        double amax = 0;
        for (index_t i = 0; i < m; ++i) amax = std::max(amax, double(std::abs(a[i + j * lda])));
        for (index_t i = 0; i < m; ++i) {
            const double e = std::abs(mine[i + j * lda] - ref[i + j * lda]);
            if (i <= j) d.r = std::max(d.r, e / std::max(amax, 1e-300));
            else d.v = std::max(d.v, e);
        }
        for (index_t i = m; i < lda; ++i) CHECK(mine[i + j * lda] == a[i + j * lda]);  // padding untouched
        d.tau = std::max(d.tau, double(std::abs(t[j + j * n] - tau[j])));
        for (index_t i = 0; i <= j; ++i) tmax = std::max(tmax, double(std::abs(tref[i + j * n])));
        for (index_t i = j + 1; i < n; ++i) CHECK(t[i + j * n] == T(kSentinel));  // strict lower not set
    }
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < j; ++i)
            d.t = std::max(d.t, double(std::abs(t[i + j * n] - tref[i + j * n])) / std::max(tmax, 1.0));
    return d;
}

template <class T>
void check_random(std::mt19937_64& g, index_t m, index_t n, index_t pad) {
    CAPTURE(m);
    CAPTURE(n);
    CAPTURE(pad);
    const index_t lda = m + pad;
    std::vector<T> a(static_cast<std::size_t>(lda * n));
    for (T& x : a) x = rnd<T>(g);
    const Factors d = compare(m, n, lda, a);
    // Householder QR is backward stable column by column; the recursion and the blocked
    // algorithm order their sums differently, so the factors agree to a modest multiple of
    // m·eps on random tiles (measured: below 0.05 of the bound).
    const double tol = 1e3 * double(m) * double(std::numeric_limits<real_t<T>>::epsilon());
    CHECK(d.r < tol);
    CHECK(d.v < tol);
    CHECK(d.tau < tol);
    CHECK(d.t < tol);
}

}  // namespace

TEST_CASE_TEMPLATE("kernels::geqrt3 gives LAPACK geqrf's R, V and tau, and larft's T", T, float, double,
                   std::complex<float>, std::complex<double>) {
    std::mt19937_64 g(std::random_device{}());
    for (index_t m : {1, 2, 3, 5, 17, 64, 100, 257, 1030})
        for (index_t n : {1, 2, 3, 7, 16, 33, 64})
            if (n <= m)
                for (index_t pad : {0, 3}) check_random<T>(g, m, n, pad);
}

TEST_CASE_TEMPLATE("kernels::geqrt3 on zero, tiny and huge columns as LAPACK's", T, double, std::complex<double>) {
    std::mt19937_64 g(std::random_device{}());
    const index_t m = 40, n = 6;
    for (double scale : {1.0, 1e-170, 1e170}) {
        CAPTURE(scale);
        std::vector<T> a(static_cast<std::size_t>(m * n));
        for (T& x : a) x = rnd<T>(g);
        for (index_t i = 0; i < m; ++i) a[i + 1 * m] = T(0);            // column 1 zero: tau 0
        for (index_t i = 3; i < m; ++i) a[i + 2 * m] = T(0);            // column 2 zero below its diagonal
        for (index_t i = 0; i < m; ++i) a[i + 4 * m] *= T(scale);       // column 4: squares out of range
        for (index_t i = 0; i < m; ++i) a[i + 5 * m] *= T(scale * 1e-3);
        const Factors d = compare(m, n, m, a);
        const double tol = 1e3 * double(m) * std::numeric_limits<double>::epsilon();
        CHECK(d.r < tol);
        CHECK(d.v < tol);
        CHECK(d.tau < tol);
        CHECK(d.t < tol);
        std::vector<T> t(static_cast<std::size_t>(n * n)), f(a);
        cala::kernels::geqrt3(m, n, f.data(), m, t.data(), n);
        CHECK(t[1 + 1 * n] == T(0));  // LAPACK's tau for a zero column
        for (index_t j = 0; j < n; ++j)
            for (index_t i = 0; i < m; ++i) CHECK(std::isfinite(std::abs(f[i + j * m])));
    }
}

TEST_CASE("kernels::geqrt3 on one complex row: the reflector that makes the diagonal real") {
    using Z = std::complex<double>;
    std::vector<Z> a{Z(0.6, -0.8)}, ref(a), t{Z(0)}, tau{Z(0)};
    cala::kernels::geqrt3(1, 1, a.data(), 1, t.data(), 1);
    cala::kernels::geqrf(1, 1, ref.data(), 1, tau.data());
    CHECK(std::abs(t[0] - tau[0]) < 1e-15);
    CHECK(tau[0] != Z(0));
    CHECK(std::abs(a[0] - ref[0]) < 1e-15);
    CHECK(std::abs(a[0].imag()) < 1e-15);
}

TEST_CASE("kernels::geqrt3 lets a NaN through as LAPACK does") {
    const index_t m = 30, n = 4;
    std::mt19937_64 g(std::random_device{}());
    std::vector<double> a(static_cast<std::size_t>(m * n)), t(n * n);
    for (double& x : a) x = rnd<double>(g);
    a[7 + 2 * m] = std::numeric_limits<double>::quiet_NaN();
    cala::kernels::geqrt3(m, n, a.data(), m, t.data(), n);
    CHECK(std::isnan(t[2 + 2 * n]));
    CHECK(std::isfinite(t[0]));  // the columns before it are finite
    CHECK(std::isfinite(a[1]));
}

TEST_CASE("kernels::panel_qr_choice says what it chose and why") {
    const cala::kernels::PanelQrChoice& c = cala::kernels::panel_qr_choice();
    const char* forced = std::getenv("CALA_QR_PANEL");
    if (forced != nullptr && (std::string(forced) == "geqrt3" || std::string(forced) == "geqrf")) {
        CHECK(c.geqrt3 == (std::string(forced) == "geqrt3"));
        CHECK(c.reason == std::string("CALA_QR_PANEL=") + forced);
    } else {
        CHECK(c.geqrf_seconds > 0);
        CHECK(c.geqrt3_seconds > 0);
        CHECK(c.geqrt3 == (c.geqrt3_seconds < 0.97 * c.geqrf_seconds));
        CHECK(c.reason.find(c.geqrt3 ? "geqrt3" : "geqrf") == 0);
    }
}

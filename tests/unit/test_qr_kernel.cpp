// kernels::geqrt3 (the recursive panel QR over cala's BLAS, its own larfg norm): its factors'
// backward error, orthogonality and T on every type, and entry by entry against LAPACK's geqrf and
// larft in double precision: tall and square tiles, tiny ones, padded leading dimensions, zero
// columns, columns whose squares underflow or overflow, NaN; and the panel choice's report.
// Fresh random entries each run (the seed is printed on a failure).

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/blas.hpp"
#include "kernels/lapack_qr.hpp"
#include "support/random_value.hpp"

using cala::index_t;
using cala::real_t;

namespace {

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

// The factors' own properties, in double arithmetic whatever T is: the backward error
// ‖A − Q·R‖_F / ‖A‖_F, the orthogonality of Q's first n columns max|Q1ᴴ·Q1 − I|, and T against
// LAPACK's larft on geqrt3's own V and tau (relative to max(max|T|, 1)). Q = I − V·T·Vᴴ.
struct Own {
    double backward = 0, orth = 0, t = 0;
};

template <class T>
Own check_own(index_t m, index_t n, index_t lda, const std::vector<T>& a, const std::vector<T>& f,
              const std::vector<T>& t) {
    using D = std::conditional_t<cala::is_complex_v<T>, std::complex<double>, double>;
    auto v = [&](index_t i, index_t j) { return i < j ? D(0) : i == j ? D(1) : D(f[i + j * lda]); };
    auto r = [&](index_t i, index_t j) { return i <= j ? D(f[i + j * lda]) : D(0); };
    auto tt = [&](index_t i, index_t j) { return i <= j ? D(t[i + j * n]) : D(0); };
    auto cj = [](D x) {
        if constexpr (cala::is_complex_v<D>) return std::conj(x);
        else return x;
    };
    // Y = T·(V(0:n, :)ᴴ·B) for B = R (the product Q·R) and B = I (Q's first n columns).
    auto apply = [&](auto b) {
        std::vector<D> w(static_cast<std::size_t>(n * n)), y(w.size());
        for (index_t j = 0; j < n; ++j)
            for (index_t i = 0; i < n; ++i) {
                D s = 0;
                for (index_t l = 0; l < n; ++l) s += cj(v(l, i)) * b(l, j);
                w[i + j * n] = s;
            }
        for (index_t j = 0; j < n; ++j)
            for (index_t i = 0; i < n; ++i) {
                D s = 0;
                for (index_t l = i; l < n; ++l) s += tt(i, l) * w[l + j * n];
                y[i + j * n] = s;
            }
        // Column j of (I − V·T·Vᴴ)·[B; 0].
        std::vector<D> out(static_cast<std::size_t>(m * n));
        for (index_t j = 0; j < n; ++j)
            for (index_t i = 0; i < m; ++i) {
                D s = i < n ? b(i, j) : D(0);
                for (index_t l = 0; l < n; ++l) s -= v(i, l) * y[l + j * n];
                out[i + j * m] = s;
            }
        return out;
    };
    Own o;
    const std::vector<D> qr = apply(r);
    double num = 0, den = 0;
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < m; ++i) {
            num += std::norm(qr[i + j * m] - D(a[i + j * lda]));
            den += std::norm(D(a[i + j * lda]));
        }
    o.backward = std::sqrt(num) / std::max(std::sqrt(den), 1e-300);
    const std::vector<D> q = apply([](index_t i, index_t j) { return i == j ? D(1) : D(0); });
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < n; ++i) {
            D s = 0;
            for (index_t l = 0; l < m; ++l) s += cj(q[l + i * m]) * q[l + j * m];
            o.orth = std::max(o.orth, std::abs(s - D(i == j ? 1 : 0)));
        }
    std::vector<T> tau(static_cast<std::size_t>(n)), tref(static_cast<std::size_t>(n * n));
    for (index_t j = 0; j < n; ++j) tau[j] = t[j + j * n];
    cala::kernels::larft(m, n, f.data(), lda, tau.data(), tref.data(), n);
    double tmax = 1;
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i <= j; ++i) tmax = std::max(tmax, double(std::abs(tref[i + j * n])));
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < j; ++i) o.t = std::max(o.t, double(std::abs(t[i + j * n] - tref[i + j * n])) / tmax);
    return o;
}

template <class T>
void check_random(std::mt19937_64& g, index_t m, index_t n, index_t pad) {
    CAPTURE(m);
    CAPTURE(n);
    CAPTURE(pad);
    const index_t lda = m + pad;
    std::vector<T> a(static_cast<std::size_t>(lda * n));
    for (T& x : a) x = cala::test::random_value<T>(g);
    constexpr double eps = std::numeric_limits<real_t<T>>::epsilon();
    // Householder QR is backward stable (LAPACK's own tests pass ‖A − Q·R‖ / (m·‖A‖·eps) below 30).
    std::vector<T> f(a), t(static_cast<std::size_t>(n * n), T(kSentinel));
    cala::kernels::geqrt3(m, n, f.data(), lda, t.data(), n);
    const Own o = check_own(m, n, lda, a, f, t);
    CHECK(o.backward < 30 * double(m) * eps);
    CHECK(o.orth < 30 * double(m) * eps);
    CHECK(o.t < 30 * double(m) * eps);
    for (index_t j = 0; j < n; ++j) {
        for (index_t i = m; i < lda; ++i) CHECK(f[i + j * lda] == a[i + j * lda]);  // padding untouched
        for (index_t i = j + 1; i < n; ++i) CHECK(t[i + j * n] == T(kSentinel));   // strict lower not set
        CHECK(std::imag(f[j + j * lda]) == 0);  // the reflectors make R's diagonal real
    }
    // The same factors as LAPACK's geqrf and larft, entry by entry, in double precision: the two
    // order their sums differently, so an entry agrees to a modest multiple of m·eps (measured:
    // below 0.05 of the bound). Single precision is left out: where a column's head is within
    // rounding of zero, the two may pick opposite signs for R's diagonal (both right).
    if constexpr (std::is_same_v<real_t<T>, double>) {
        const Factors d = compare(m, n, lda, a);
        const double tol = 1e3 * double(m) * eps;
        CHECK(d.r < tol);
        CHECK(d.v < tol);
        CHECK(d.tau < tol);
        CHECK(d.t < tol);
    }
}

}  // namespace

TEST_CASE_TEMPLATE("kernels::geqrt3 factors A = Q·R, and as LAPACK's geqrf and larft", T, float, double,
                   std::complex<float>, std::complex<double>) {
    const unsigned seed = std::random_device{}();
    CAPTURE(seed);
    std::mt19937_64 g(seed);
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
        for (T& x : a) x = cala::test::random_value<T>(g);
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
    std::vector<double> a(static_cast<std::size_t>(m * n)), t(n * n), tau(n);
    for (double& x : a) x = cala::test::random_value<double>(g);
    a[7 + 2 * m] = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> ref(a);
    cala::kernels::geqrf(m, n, ref.data(), m, tau.data());
    cala::kernels::geqrt3(m, n, a.data(), m, t.data(), n);
    // Column 2's reflector meets the NaN: its tau is NaN as LAPACK's (whose ?larfg runs there).
    CHECK(std::isnan(tau[2]));
    CHECK(std::isnan(t[2 + 2 * n]));
    for (index_t j = 0; j < 2; ++j) {  // the columns before it are finite and agree
        CHECK(std::abs(t[j + j * n] - tau[j]) < 1e-13);
        for (index_t i = 0; i < m; ++i) CHECK(std::abs(a[i + j * m] - ref[i + j * m]) < 1e-13);
    }
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

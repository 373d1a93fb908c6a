// kernels::getrf (the recursive panel LU) against LAPACK's own getrf (kernels::getrf_lapack):
// every type, tall, square, wide, tiny and empty blocks, padded leading dimensions, exactly zero
// columns (LAPACK's info) and tiny pivots; kernels::trsm_left_lower_unit_lu (U12 = L11⁻¹·A12) against
// the BLAS's trsm. Fresh random entries each run.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/blas.hpp"
#include "kernels/lapack_lu.hpp"
#include "support/random_value.hpp"

using cala::index_t;
using cala::real_t;

namespace {

// ‖P·A − L·U‖_F / (‖A‖_F · max(m, n) · eps) for the factors f (ld lda) of a (ld lda) with ipiv.
template <class T>
double backward_error(index_t m, index_t n, const std::vector<T>& a, const std::vector<T>& f, index_t lda,
                      const std::vector<index_t>& ipiv) {
    std::vector<T> pa(a);
    for (std::size_t i = 0; i < ipiv.size(); ++i)
        for (index_t j = 0; j < n; ++j)
            std::swap(pa[static_cast<index_t>(i) + j * lda], pa[ipiv[i] + j * lda]);
    const index_t k = std::min(m, n);
    double num = 0, den = 0;
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < m; ++i) {
            T s = T(0);
            for (index_t t = 0; t <= std::min({i, j, k - 1}); ++t) {
                const T l = t == i ? T(1) : f[i + t * lda];
                s += l * f[t + j * lda];
            }
            num += std::norm(pa[i + j * lda] - s);
            den += std::norm(a[i + j * lda]);
        }
    if (den == 0) return 0;
    return std::sqrt(num / den) / (double(std::max(m, n)) * double(std::numeric_limits<real_t<T>>::epsilon()));
}

template <class T>
void check_shape(std::mt19937_64& g, index_t m, index_t n, index_t pad, const std::vector<index_t>& zero_cols) {
    CAPTURE(m);
    CAPTURE(n);
    CAPTURE(pad);
    const index_t lda = std::max<index_t>(1, m + pad);
    std::vector<T> a(static_cast<std::size_t>(lda * std::max<index_t>(n, 1)));
    for (T& x : a) x = cala::test::random_value<T>(g);
    for (index_t c : zero_cols)
        if (c < n)
            for (index_t i = 0; i < m; ++i) a[i + c * lda] = T(0);
    std::vector<T> mine(a), ref(a);
    std::vector<index_t> pm, pr;
    const index_t im = cala::kernels::getrf(m, n, mine.data(), lda, pm);
    const index_t ir = cala::kernels::getrf_lapack(m, n, ref.data(), lda, pr);
    CHECK(im == ir);
    REQUIRE(pm.size() == static_cast<std::size_t>(std::min(m, n)));
    // Partial pivoting's pivots: LAPACK's exactly in double (a near tie within rounding has
    // probability about eps per column); in float, |L| <= 1 shows the pivot was a largest one
    // (sqrt(2) for complex: the pivot is the largest by |re| + |im|, LAPACK's measure).
    if constexpr (std::is_same_v<real_t<T>, double>) CHECK(pm == pr);
    const index_t k = std::min(m, n);
    double lmax = 0;
    for (index_t j = 0; j < k; ++j)
        for (index_t i = j + 1; i < m; ++i) lmax = std::max(lmax, double(std::abs(mine[i + j * lda])));
    const double bound = cala::is_complex_v<T> ? std::sqrt(2.0) : 1.0;
    CHECK(lmax <= bound * (1.0 + 4 * double(std::numeric_limits<real_t<T>>::epsilon())));
    CHECK(backward_error(m, n, a, mine, lda, pm) < 4.0);
    // The padding rows below m are not touched.
    for (index_t j = 0; j < n; ++j)
        for (index_t i = m; i < lda; ++i) CHECK(mine[i + j * lda] == a[i + j * lda]);
}

}  // namespace

TEST_CASE_TEMPLATE("kernels::getrf matches LAPACK's getrf", T, float, double, std::complex<float>,
                   std::complex<double>) {
    std::mt19937_64 g(std::random_device{}());
    struct Shape {
        index_t m, n, pad;
    };
    const Shape shapes[] = {{0, 0, 0},  {0, 5, 0},   {5, 0, 2},   {1, 1, 0},    {1, 7, 1},  {7, 1, 0},
                            {8, 8, 3},  {9, 9, 0},   {17, 17, 1}, {64, 64, 0},  {65, 33, 2}, {200, 64, 5},
                            {333, 100, 0}, {50, 130, 1}, {1000, 40, 0}, {129, 128, 7}};
    for (const Shape& s : shapes) check_shape<T>(g, s.m, s.n, s.pad, {});
}

TEST_CASE_TEMPLATE("kernels::getrf reports the first exactly zero pivot as LAPACK does", T, double,
                   std::complex<double>) {
    std::mt19937_64 g(std::random_device{}());
    // Columns at a leaf's start, inside a leaf, at a recursion split, and the last one.
    check_shape<T>(g, 100, 64, 0, {0});
    check_shape<T>(g, 100, 64, 0, {3, 9, 33});
    check_shape<T>(g, 64, 64, 1, {16, 63});
    check_shape<T>(g, 30, 50, 0, {29, 40});
    // A column that is zero below a nonzero top entry still pivots (nonzero pivot, no info).
    const index_t m = 40, n = 24;
    std::vector<T> a(static_cast<std::size_t>(m * n));
    for (T& x : a) x = cala::test::random_value<T>(g);
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < m; ++i)
            if (j == 5) a[i + j * m] = T(0);
    std::vector<T> mine(a), ref(a);
    std::vector<index_t> pm, pr;
    CHECK(cala::kernels::getrf(m, n, mine.data(), m, pm) == cala::kernels::getrf_lapack(m, n, ref.data(), m, pr));
    CHECK(pm == pr);
}

// Unblocked partial pivoting, dividing by each pivot (netlib LAPACK's dgetf2 below sfmin): the
// reference for subnormal pivots. The system's LAPACK may not divide (OpenBLAS's getrf, Debian's
// liblapack.so.3 when libopenblas0 is installed, multiplies by 1/pivot: inf and NaN there).
index_t getf2_dividing(index_t m, index_t n, std::vector<double>& a, std::vector<index_t>& ipiv) {
    ipiv.assign(static_cast<std::size_t>(std::min(m, n)), 0);
    index_t info = 0;
    for (index_t j = 0; j < std::min(m, n); ++j) {
        index_t p = j;
        for (index_t i = j + 1; i < m; ++i)
            if (std::abs(a[i + j * m]) > std::abs(a[p + j * m])) p = i;
        ipiv[j] = p;
        if (a[p + j * m] == 0) {
            if (info == 0) info = j + 1;
            continue;
        }
        for (index_t c = 0; c < n; ++c) std::swap(a[j + c * m], a[p + c * m]);
        for (index_t i = j + 1; i < m; ++i) a[i + j * m] /= a[j + j * m];
        for (index_t c = j + 1; c < n; ++c)
            for (index_t i = j + 1; i < m; ++i) a[i + c * m] -= a[i + j * m] * a[j + c * m];
    }
    return info;
}

TEST_CASE("kernels::getrf divides by a tiny pivot instead of multiplying by its reciprocal") {
    // A pivot below the smallest normal number: 1/pivot overflows, LAPACK divides instead.
    const index_t m = 12, n = 12;
    std::mt19937_64 g(std::random_device{}());
    std::vector<double> a(static_cast<std::size_t>(m * n));
    for (double& x : a) x = cala::test::random_value<double>(g) * 1e-310;
    std::vector<double> mine(a), ref(a);
    std::vector<index_t> pm, pr;
    CHECK(cala::kernels::getrf(m, n, mine.data(), m, pm) == getf2_dividing(m, n, ref, pr));
    CHECK(pm == pr);
    for (std::size_t i = 0; i < mine.size(); ++i) {
        CHECK(std::isfinite(mine[i]));
        CHECK(std::abs(mine[i] - ref[i]) <= 1e-12 * std::max(1.0, std::abs(ref[i])));
    }
}

namespace {

// X = L⁻¹·B by kernels::trsm_left_lower_unit_lu for an m x m unit lower L and an m x n B (ld
// m + pad): ‖L·X − B‖_F / (‖L‖_F·‖X‖_F·m·eps) small, the same X as the BLAS's trsm to within the
// conditioning, the padding rows untouched. `pivoted`: L is LAPACK's getrf's of a random matrix (a
// panel's multipliers: L⁻¹ near 1, so wide blocks must take the inverse); otherwise L's entries
// are random in [-1, 1] (L⁻¹ grows quickly with m: mostly the trsm past m = 32).
template <class T>
void check_left_solve(std::mt19937_64& g, index_t m, index_t n, index_t pad, bool pivoted) {
    CAPTURE(m);
    CAPTURE(n);
    CAPTURE(pad);
    CAPTURE(pivoted);
    const index_t ldl = m + 3, ldb = std::max<index_t>(1, m + pad);
    std::vector<T> l(static_cast<std::size_t>(ldl * std::max<index_t>(m, 1)));
    for (T& x : l) x = cala::test::random_value<T>(g);
    if (pivoted) {
        std::vector<index_t> piv;
        cala::kernels::getrf_lapack(m, m, l.data(), ldl, piv);
    }
    for (index_t j = 0; j < m; ++j)
        for (index_t i = 0; i <= j; ++i) l[i + j * ldl] = T(7);  // the diagonal and above are not read
    std::vector<T> b(static_cast<std::size_t>(ldb * std::max<index_t>(n, 1)));
    for (T& x : b) x = cala::test::random_value<T>(g);
    std::vector<T> x(b), ref(b);
    const bool inverse = cala::kernels::trsm_left_lower_unit_lu(m, n, l.data(), ldl, x.data(), ldb);
    if (m < 16 || n < 2 * m) CHECK_FALSE(inverse);
    else if (pivoted) CHECK(inverse);
    cala::kernels::trsm(true, true, cala::Op::N, true, m, n, T(1), l.data(), ldl, ref.data(), ldb);
    double res = 0, ln = 0, xn = 0, diff = 0, refn = 0;
    for (index_t j = 0; j < m; ++j)
        for (index_t i = j; i < m; ++i) ln += std::norm(i == j ? T(1) : l[i + j * ldl]);
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < m; ++i) {
            T s = x[i + j * ldb];
            for (index_t t = 0; t < i; ++t) s += l[i + t * ldl] * x[t + j * ldb];
            res += std::norm(s - b[i + j * ldb]);
            xn += std::norm(x[i + j * ldb]);
            diff += std::norm(x[i + j * ldb] - ref[i + j * ldb]);
            refn += std::norm(ref[i + j * ldb]);
        }
    const double eps = double(std::numeric_limits<real_t<T>>::epsilon());
    if (m > 0 && n > 0) {
        CHECK(std::sqrt(res) / (std::sqrt(ln) * std::sqrt(xn) * double(m) * eps) < 4.0);
        CHECK(std::sqrt(diff) <= std::sqrt(refn) * 1e3 * double(m) * eps);
    }
    for (index_t j = 0; j < n; ++j)
        for (index_t i = m; i < ldb; ++i) CHECK(x[i + j * ldb] == b[i + j * ldb]);
}

}  // namespace

TEST_CASE_TEMPLATE("kernels::trsm_left_lower_unit_lu solves as the BLAS's trsm does", T, float, double,
                   std::complex<float>, std::complex<double>) {
    std::mt19937_64 g(std::random_device{}());
    // m < 16 and n < 2m take the trsm; the rest the inverse and trmm (pivoted L), threaded where
    // m·m·n >= 64³ (64 x 513, 100 x 513).
    for (const bool pivoted : {true, false})
        for (index_t m : {0, 1, 15, 16, 17, 64, 100})
            for (index_t n : {0, 1, 31, 32, 33, 200, 513}) check_left_solve<T>(g, m, n, n % 3, pivoted);
}

TEST_CASE("kernels::trsm_left_lower_unit_lu on Wilkinson's L and a bidiagonal L is exact") {
    // L⁻¹ has 2^(i-j-1) below the diagonal, past the inverse's limit: the trsm solves, and every
    // quantity is a power of two or a sum of them that fits the mantissa, so L⁻¹·B for B = 1 is
    // x_i = 2^i exactly. With -1 on the first subdiagonal only, L⁻¹ is 1 everywhere below the
    // diagonal: the inverse and the trmm solve, and x_i = i + 1 exactly.
    for (const bool wilkinson : {true, false})
        for (const index_t m : {40, 17}) {
            CAPTURE(wilkinson);
            CAPTURE(m);
            const index_t n = 100;
            std::vector<double> l(static_cast<std::size_t>(m * m), 0.0), b(static_cast<std::size_t>(m * n), 1.0);
            for (index_t j = 0; j < m; ++j)
                for (index_t i = j + 1; i < (wilkinson ? m : std::min(j + 2, m)); ++i) l[i + j * m] = -1.0;
            CHECK(cala::kernels::trsm_left_lower_unit_lu(m, n, l.data(), m, b.data(), m) == !wilkinson);
            for (index_t j = 0; j < n; ++j)
                for (index_t i = 0; i < m; ++i)
                    CHECK(b[i + j * m] == (wilkinson ? std::ldexp(1.0, static_cast<int>(i)) : double(i + 1)));
        }
}

TEST_CASE("kernels::trsm_left_lower_unit_lu takes the trsm for a NaN in L, and NaN spreads as there") {
    // A NaN multiplier makes L⁻¹'s entries below it NaN: the guard sends the solve to the trsm, the
    // NaN's row is NaN and the rows above it stay finite.
    const index_t m = 32, n = 80;
    std::mt19937_64 g(std::random_device{}());
    std::vector<double> l(static_cast<std::size_t>(m * m), 0.0), b(static_cast<std::size_t>(m * n));
    for (double& x : b) x = cala::test::random_value<double>(g);
    l[20 + 5 * m] = std::numeric_limits<double>::quiet_NaN();
    CHECK_FALSE(cala::kernels::trsm_left_lower_unit_lu(m, n, l.data(), m, b.data(), m));
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i <= 20; ++i) CHECK(std::isnan(b[i + j * m]) == (i == 20));  // below: the BLAS's 0·NaN
}

#pragma once
// Test helpers of cala::potrf: a random Hermitian positive definite matrix, the factor's error
// against A on gathered data, and the other triangle's check.

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <type_traits>
#include <vector>

#include "helpers.hpp"

namespace cala::test {

// A Hermitian positive definite n x n matrix at (off, off) of a random parent: random entries
// with a dominant real diagonal. `bad` >= 0 makes the leading minor of order bad+1 fail.
template <class T>
std::vector<T> make_spd(std::vector<T> parent, index_t ld, index_t off, index_t n, index_t bad) {
    auto& g = rng();
    for (index_t j = 0; j < n; ++j)
        for (index_t i = j; i < n; ++i) {
            const T v = i == j ? T(real_t<T>(n) + std::abs(random_value<real_t<T>>(g))) : random_value<T>(g);
            parent[(off + i) + (off + j) * ld] = v;
            parent[(off + j) + (off + i) * ld] = conj_if(v, true);
        }
    if (bad >= 0) parent[(off + bad) + (off + bad) * ld] = T(-1);
    return parent;
}

// ‖A − L·Lᴴ‖_max / (n·‖A‖_max·eps) from the factor in the uplo triangle of `f`.
template <class T>
double factor_error(const std::vector<T>& a, const std::vector<T>& f, index_t ld, index_t off, index_t n, Uplo uplo) {
    using LD = std::conditional_t<is_complex_v<T>, std::complex<long double>, long double>;
    auto l = [&](index_t i, index_t j) -> LD {  // L(i, j), i >= j
        if (i < j) return LD(0);
        const T v = uplo == Uplo::Lower ? f[(off + i) + (off + j) * ld] : conj_if(f[(off + j) + (off + i) * ld], true);
        return LD(v);
    };
    long double err = 0, anorm = 0;
    for (index_t j = 0; j < n; ++j)
        for (index_t i = j; i < n; ++i) {
            LD s = 0;
            for (index_t k = 0; k <= j; ++k) {
                if constexpr (is_complex_v<T>) s += l(i, k) * std::conj(l(j, k));
                else s += l(i, k) * l(j, k);
            }
            const LD aij = LD(a[(off + i) + (off + j) * ld]);
            err = std::max(err, static_cast<long double>(std::abs(aij - s)));
            anorm = std::max(anorm, static_cast<long double>(std::abs(aij)));
        }
    if (n == 0) return 0;
    return double(err / (n * anorm * eps<T>()));
}

// max |f − h| over the uplo triangle / (n·max |h|·eps): two factors of one matrix.
template <class T>
double factor_gap(const std::vector<T>& f, const std::vector<T>& h, index_t n, Uplo uplo) {
    double gap = 0, hmax = 0;
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < n; ++i) {
            if (uplo == Uplo::Lower ? i < j : i > j) continue;
            gap = std::max(gap, double(std::abs(f[i + j * n] - h[i + j * n])));
            hmax = std::max(hmax, double(std::abs(h[i + j * n])));
        }
    return n == 0 ? 0 : gap / (double(n) * hmax * double(eps<T>()));
}

// Everything outside the uplo triangle of the submatrix is bitwise unchanged.
template <class T>
bool rest_untouched(const std::vector<T>& before, const std::vector<T>& after, index_t ld, index_t off, index_t n,
                    Uplo uplo) {
    const index_t rows = static_cast<index_t>(before.size()) / std::max<index_t>(ld, 1);
    for (index_t j = 0; j < rows; ++j)
        for (index_t i = 0; i < ld; ++i) {
            const bool inside = i >= off && i < off + n && j >= off && j < off + n;
            const bool tri = inside && (uplo == Uplo::Lower ? i >= j : i <= j);
            if (tri) continue;
            if (std::memcmp(&before[i + j * ld], &after[i + j * ld], sizeof(T)) != 0) return false;
        }
    return true;
}

// max_j ‖(A·X − B)(:, j)‖_∞ / (n·‖A‖_∞·max ‖X‖_∞·eps), a the whole Hermitian A (both triangles):
// the backward error of a solve (potrs, resident potrs).
template <class T>
double potrs_residual(const std::vector<T>& a, index_t n, const std::vector<T>& b, const std::vector<T>& x,
                      index_t nrhs) {
    double anorm = 0, xnorm = 0, rnorm = 0;
    for (index_t i = 0; i < n; ++i) {
        double row = 0;
        for (index_t l = 0; l < n; ++l) row += std::abs(a[i + l * n]);
        anorm = std::max(anorm, row);
    }
    for (index_t j = 0; j < nrhs; ++j)
        for (index_t i = 0; i < n; ++i) {
            std::complex<long double> s = -std::complex<long double>(b[i + j * n]);
            for (index_t l = 0; l < n; ++l) s += std::complex<long double>(a[i + l * n]) * std::complex<long double>(x[l + j * n]);
            const double d = static_cast<double>(std::abs(s));
            if (!(d == d)) return INFINITY;
            rnorm = std::max(rnorm, d);
            xnorm = std::max(xnorm, std::abs(std::complex<double>(x[i + j * n])));
        }
    if (rnorm == 0) return 0;
    return rnorm / (static_cast<double>(n) * anorm * xnorm * static_cast<double>(eps<T>()));
}

}  // namespace cala::test

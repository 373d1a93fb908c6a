#pragma once
// Test helpers for SYMM/HEMM: NaN, scalars equal on every rank, the full symmetric matrix from a
// stored triangle, and the error of a gathered result against the sequential product.

#include <algorithm>
#include <complex>
#include <limits>
#include <random>
#include <vector>

#include "support/helpers.hpp"

namespace cala::test {

template <class T>
T nan_value() {
    return T(std::numeric_limits<real_t<T>>::quiet_NaN());
}

template <class T>
T scalar(std::mt19937& g) {  // same on every rank
    std::uniform_real_distribution<real_t<T>> u(-1, 1);
    if constexpr (is_complex_v<T>) return T(u(g), u(g));
    else return T(u(g));
}

// The full symmetric (Hermitian) matrix from the stored triangle of gathered x (m x m).
template <class T>
std::vector<T> full_of(const std::vector<T>& x, index_t m, Uplo uplo, bool herm) {
    std::vector<T> f(x.size());
    for (index_t j = 0; j < m; ++j)
        for (index_t i = 0; i < m; ++i) {
            const bool stored = uplo == Uplo::Lower ? i >= j : i <= j;
            T v = stored ? x[i + j * m] : conj_if(x[j + i * m], herm);
            if (i == j && herm) v = T(std::real(v));
            f[i + j * m] = v;
        }
    return f;
}

// rank 0: error of gathered c_out against alpha·A·B + beta·C (Left) or alpha·B·A + beta·C.
template <class T>
double symm_error(Side side, index_t m, index_t n, T alpha, const std::vector<T>& afull, const std::vector<T>& b,
                  T beta, const std::vector<T>& c, const std::vector<T>& c_out) {
    const auto ref = side == Side::Left ? test::reference_gemm(Op::N, Op::N, m, n, m, alpha, afull, m, b, m, beta, c)
                                        : test::reference_gemm(Op::N, Op::N, n, m, m, alpha, b, std::max<index_t>(n, 1),
                                                               afull, m, beta, c);
    return test::gemm_error(c_out, ref, m);
}

// A Hermitian positive definite n x n matrix (random, diagonal n + 1), or with A(bad, bad) = -1.
template <class T>
std::vector<T> spd(index_t n, index_t bad = -1) {
    std::vector<T> a(static_cast<std::size_t>(n * n));
    for (index_t j = 0; j < n; ++j)
        for (index_t i = j; i < n; ++i) {
            const T v = i == j ? T(real_t<T>(n + 1)) : test::random_value<T>(test::rng());
            a[static_cast<std::size_t>(i + j * n)] = v;
            a[static_cast<std::size_t>(j + i * n)] = conj_if(v, true);
        }
    if (bad >= 0) a[static_cast<std::size_t>(bad + bad * n)] = T(-1);
    return a;
}

/// max |L·Lᴴ − A| over the lower triangle / (eps·n·max |A|), L the lower triangle of gathered l.
template <class T>
double llh_ratio(const std::vector<T>& gl, const std::vector<T>& ga, index_t n) {
    double err = 0, scale = 0;
    for (index_t j = 0; j < n; ++j)
        for (index_t i = j; i < n; ++i) {
            std::complex<double> s = 0;
            for (index_t p = 0; p <= j; ++p)
                s += std::complex<double>(gl[static_cast<std::size_t>(i + p * n)]) *
                     std::conj(std::complex<double>(gl[static_cast<std::size_t>(j + p * n)]));
            err = std::max(err, std::abs(s - std::complex<double>(ga[static_cast<std::size_t>(i + j * n)])));
            scale = std::max(scale, std::abs(std::complex<double>(ga[static_cast<std::size_t>(i + j * n)])));
        }
    return scale == 0 ? 0 : err / (double(eps<T>()) * double(n) * scale);
}

}  // namespace cala::test

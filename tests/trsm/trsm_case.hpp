#pragma once
// Shared pieces of the trsm/potrs tests: triangular matrices that are well conditioned, the
// residual of op(A)·X = alpha·B on gathered data, and the traffic/workspace check against the model.

#include <cmath>
#include <limits>

#include "support/helpers.hpp"

namespace cala::test {

/// A random triangle (uplo) with off-diagonal entries in (-1, 1)/n and a diagonal of modulus in
/// [1, 2] (NaN with a unit diagonal: it must not be read); the other strict triangle is NaN.
template <class T>
void triangular(const MatrixRef<T>& a, Uplo uplo, Diag diag) {
    const Grid2D& g = a.grid();
    const Dist1D& R = a.layout().rows;
    const Dist1D& C = a.layout().cols;
    const T nan = T(std::numeric_limits<real_t<T>>::quiet_NaN());
    const real_t<T> scale = real_t<T>(1) / static_cast<real_t<T>>(std::max<index_t>(a.n(), 1));
    for (index_t jl = 0; jl < a.n_loc(); ++jl)
        for (index_t il = 0; il < a.m_loc(); ++il) {
            const index_t i = R.to_global(il, g.row()), j = C.to_global(jl, g.col());
            T& x = a.local(il, jl);
            if (i == j) {
                const T u = random_value<T>(rng());
                x = diag == Diag::Unit ? nan : u / real_t<T>(std::abs(u) + 1e-3) * real_t<T>(1.5 + 0.5 * std::abs(u));
            } else if ((i > j) == (uplo == Uplo::Lower)) {
                x = random_value<T>(rng()) * scale;
            } else {
                x = nan;
            }
        }
}

/// op(A)(i, j) of the gathered n x n triangle, the other triangle zero, a unit diagonal as 1.
template <class T>
T tri_at(const std::vector<T>& a, index_t n, Uplo uplo, Op op, Diag diag, index_t i, index_t j) {
    if (op != Op::N) std::swap(i, j);
    if (i == j && diag == Diag::Unit) return T(1);
    if (i != j && (i > j) != (uplo == Uplo::Lower)) return T(0);
    return conj_if(a[i + j * n], op == Op::C);
}

/// max_ij |op(A)·X - alpha·B|_ij / (eps·(n + 2)·max_ij (|op(A)|·|X| + |alpha|·|B|)_ij): below a
/// small constant for a backward-stable solve; infinite if X holds NaN.
template <class T>
double trsm_residual(const std::vector<T>& a, index_t n, Uplo uplo, Op op, Diag diag, T alpha,
                     const std::vector<T>& b, const std::vector<T>& x, index_t nrhs) {
    using LC = std::complex<long double>;
    long double num = 0, den = 0;
    for (index_t j = 0; j < nrhs; ++j)
        for (index_t i = 0; i < n; ++i) {
            LC s = -LC(alpha) * LC(b[i + j * n]);
            long double bound = std::abs(LC(alpha)) * std::abs(LC(b[i + j * n]));
            for (index_t l = 0; l < n; ++l) {
                const LC t(tri_at(a, n, uplo, op, diag, i, l)), y(x[l + j * n]);
                s += t * y;
                bound += std::abs(t) * std::abs(y);
            }
            const long double d = std::abs(s);
            if (!(d == d)) return INFINITY;
            num = std::max(num, d);
            den = std::max(den, bound);
        }
    if (num == 0) return 0;
    return static_cast<double>(num / (static_cast<long double>(eps<T>()) * (n + 2) * (den + 1e-300L)));
}

/// max |got - ref| / (eps·(k + 2)·max bound), with ref and bound summed in long double.
template <class T>
double residual_ratio(long double num, long double den, index_t k) {
    if (!(num == num)) return INFINITY;
    if (num == 0) return 0;
    return static_cast<double>(num / (static_cast<long double>(eps<T>()) * (k + 2) * (den + 1e-300L)));
}

/// Right side solve: max |X·op(A) - alpha·B| (X, B m x n; A n x n).
template <class T>
double trsm_right_residual(const std::vector<T>& a, index_t n, Uplo uplo, Op op, Diag diag, T alpha,
                      const std::vector<T>& b, const std::vector<T>& x, index_t m) {
    using LC = std::complex<long double>;
    long double num = 0, den = 0;
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < m; ++i) {
            LC s = -LC(alpha) * LC(b[i + j * m]);
            long double bound = std::abs(LC(alpha)) * std::abs(LC(b[i + j * m]));
            for (index_t l = 0; l < n; ++l) {
                const LC t(tri_at(a, n, uplo, op, diag, l, j)), y(x[i + l * m]);
                s += y * t;
                bound += std::abs(y) * std::abs(t);
            }
            const long double d = std::abs(s);
            if (!(d == d)) return INFINITY;
            num = std::max(num, d);
            den = std::max(den, bound);
        }
    return residual_ratio<T>(num, den, n);
}

/// This rank's traffic and workspace peak since the marks, against a model cost.
struct Measured {
    Traffic t;
    std::int64_t extra;
};

inline std::int64_t mark() {
    const std::int64_t mem0 = memory_stats().current_bytes;
    reset_peak_memory();
    reset_traffic();
    return mem0;
}

inline Measured measure(std::int64_t mem0) { return {traffic(), memory_stats().peak_bytes - mem0}; }

inline bool matches(const Measured& got, const Cost& model) {
    return got.t.words() == model.words && got.t.words_recv == model.words_recv && got.t.msgs() == model.msgs &&
           got.extra == model.extra_bytes;
}

inline std::vector<std::pair<int, int>> grids(int n) {
    switch (n) {
        case 1: return {{1, 1}};
        case 2: return {{1, 2}, {2, 1}};
        case 4: return {{2, 2}};
        case 6: return {{2, 3}};
        default: return {Grid2D::squarest(n)};
    }
}

}  // namespace cala::test

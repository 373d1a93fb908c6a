#pragma once
// Sequential references for cala::getrf / cala::getrs on gathered data (tests/lu): the interchange
// sequence applied to A, ‖P·A − L·U‖ scaled by n·eps·‖A‖, the growth factor, the solve's residual.

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <vector>

#include <mpi.h>

#include "cala/cala.hpp"

namespace cala::test {

/// ipiv is LAPACK's interchange sequence for an m-row matrix: size k, ipiv[i] in [i, m).
inline bool valid_ipiv(const std::vector<index_t>& ipiv, index_t m, index_t k) {
    if (static_cast<index_t>(ipiv.size()) != k) return false;
    for (index_t i = 0; i < k; ++i)
        if (ipiv[static_cast<std::size_t>(i)] < i || ipiv[static_cast<std::size_t>(i)] >= m) return false;
    return true;
}

/// The m x n submatrix at (i0, j0) (j0 < 0: at (i0, i0)) of a column-major matrix with leading
/// dimension ld.
template <class T>
std::vector<T> submatrix(const std::vector<T>& g, index_t ld, index_t i0, index_t m, index_t n, index_t j0 = -1) {
    if (j0 < 0) j0 = i0;
    std::vector<T> out(static_cast<std::size_t>(m * n));
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < m; ++i) out[i + j * m] = g[(i0 + i) + (j0 + j) * ld];
    return out;
}

/// Rows of a (m x n, ld m) interchanged by ipiv in order (B := P·B, LAPACK's laswp forward).
template <class T>
void apply_ipiv(std::vector<T>& a, index_t m, index_t n, const std::vector<index_t>& ipiv) {
    for (std::size_t i = 0; i < ipiv.size(); ++i)
        if (ipiv[i] != static_cast<index_t>(i))
            for (index_t j = 0; j < n; ++j) std::swap(a[i + j * m], a[ipiv[i] + j * m]);
}

/// ‖P·A − L·U‖_F / (max(m, n)·eps·‖A‖_F) for the factors f (m x n, ld m) of a (m x n, ld m).
template <class T>
double lu_error(const std::vector<T>& a, const std::vector<T>& f, index_t m, index_t n,
                const std::vector<index_t>& ipiv) {
    using C = std::complex<double>;
    std::vector<T> pa = a;
    apply_ipiv(pa, m, n, ipiv);
    const index_t k = std::min(m, n);
    double num = 0, den = 0;
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < m; ++i) {
            C s = 0;
            for (index_t l = 0; l <= std::min({i, j, k - 1}); ++l) {
                const C lil = l == i ? C(1) : C(f[i + l * m]);
                s += lil * C(f[l + j * m]);
            }
            num += std::norm(C(pa[i + j * m]) - s);
            den += std::norm(C(a[i + j * m]));
        }
    if (!(num == num)) return INFINITY;
    if (num == 0) return 0;
    return std::sqrt(num) / (double(std::max(m, n)) * double(eps<T>()) * std::sqrt(den));
}

/// max |U| / max |A|.
template <class T>
double growth(const std::vector<T>& a, const std::vector<T>& f, index_t m, index_t n) {
    double ua = 0, aa = 0;
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < m; ++i) {
            aa = std::max(aa, double(std::abs(a[i + j * m])));
            if (i <= j) ua = std::max(ua, double(std::abs(f[i + j * m])));
        }
    return aa == 0 ? 0 : ua / aa;
}

/// ‖op(A)·X − B‖_F / (n·eps·(‖A‖_F·‖X‖_F + ‖B‖_F)), A n x n, X and B n x r.
template <class T>
double solve_residual(Op op, const std::vector<T>& a, const std::vector<T>& x, const std::vector<T>& b, index_t n,
                      index_t r) {
    using C = std::complex<double>;
    double num = 0, na = 0, nx = 0, nb = 0;
    for (const T& v : a) na += std::norm(C(v));
    for (const T& v : x) nx += std::norm(C(v));
    for (const T& v : b) nb += std::norm(C(v));
    for (index_t j = 0; j < r; ++j)
        for (index_t i = 0; i < n; ++i) {
            C s = 0;
            for (index_t l = 0; l < n; ++l) {
                C ail = op == Op::N ? C(a[i + l * n]) : C(a[l + i * n]);
                if (op == Op::C) ail = std::conj(ail);
                s += ail * C(x[l + j * n]);
            }
            num += std::norm(s - C(b[i + j * n]));
        }
    if (!(num == num)) return INFINITY;
    if (num == 0) return 0;
    return std::sqrt(num) / (double(n) * double(eps<T>()) * (std::sqrt(na) * std::sqrt(nx) + std::sqrt(nb)));
}

/// What a getrf of the m x n submatrix at (off, off) of a parent (pm x pn, ld pm) left there: its
/// pivots valid, ‖P·A − L·U‖ scaled (lu_error), the parent outside the submatrix bitwise as before.
struct FactorCheck {
    bool valid = true, untouched = true;
    double err = 0;
};
template <class T>
FactorCheck check_factors(const std::vector<T>& before, const std::vector<T>& after, index_t pm, index_t pn,
                          index_t off, index_t m, index_t n, const std::vector<index_t>& ipiv) {
    FactorCheck c;
    c.valid = valid_ipiv(ipiv, m, std::min(m, n));
    if (c.valid) c.err = lu_error(submatrix(before, pm, off, m, n), submatrix(after, pm, off, m, n), m, n, ipiv);
    for (index_t j = 0; j < pn; ++j)
        for (index_t i = 0; i < pm; ++i)
            if ((i < off || j < off) && std::memcmp(&after[i + j * pm], &before[i + j * pm], sizeof(T)) != 0)
                c.untouched = false;
    return c;
}

/// Whether v is the same on every rank of comm (a hash compared by min and max).
inline bool same_everywhere(const std::vector<index_t>& v, MPI_Comm comm) {
    std::uint64_t h = 1469598103934665603ull;
    for (index_t x : v) h = (h ^ static_cast<std::uint64_t>(x)) * 1099511628211ull;
    std::uint64_t lo = h, hi = h;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, comm);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, comm);
    return lo == hi;
}

}  // namespace cala::test

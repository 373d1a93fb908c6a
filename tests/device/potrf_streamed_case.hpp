#pragma once
// One streamed-Cholesky case on any Device (tests/device): a Hermitian positive definite matrix
// (or one whose minor bad+1 is the first that fails) with a leading dimension above n, a
// sequential reference (column-by-column Cholesky in long double), and the checks shared by the
// HostDevice and CUDA tests.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "device/device.hpp"
#include "device/potrf_streamed.hpp"

namespace cala::test {

template <class T>
T random_entry(std::mt19937& g) {
    std::uniform_real_distribution<double> u(-1, 1);
    if constexpr (is_complex_v<T>) return T(real_t<T>(u(g)), real_t<T>(u(g)));
    else return T(u(g));
}

/// A column-major n x n matrix with leading dimension n + 3: Hermitian, |a_ij| < 1 off the
/// diagonal, n/2 + 1 + u on it (positive definite, well conditioned); with bad >= 0 the diagonal
/// entry bad is -1 instead, so that the leading minor of order bad + 1 is the first to fail.
template <class T>
struct StreamedCase {
    index_t n, ld;
    std::vector<T> a;
    StreamedCase(index_t n_, unsigned seed, index_t bad = -1) : n(n_), ld(n_ + 3), a(std::size_t(ld * std::max<index_t>(n_, 1))) {
        std::mt19937 g(seed);
        for (auto& x : a) x = random_entry<T>(g);  // the padding and both triangles: random
        for (index_t j = 0; j < n; ++j) {
            for (index_t i = j + 1; i < n; ++i) a[i + j * ld] = conj_if(a[j + i * ld], true);
            a[j + j * ld] = T(real_t<T>(n) / 2 + 1 + std::abs(std::real(a[j + j * ld])));
        }
        if (bad >= 0) a[bad + bad * ld] = T(-1);
    }
};

/// The sequential reference: column-by-column Cholesky of the `lower` triangle in long double;
/// returns LAPACK's info (the order of the first minor that is not positive definite).
template <class T>
index_t reference_potrf(bool lower, index_t n, std::vector<T>& a, index_t ld) {
    using L = std::conditional_t<is_complex_v<T>, std::complex<long double>, long double>;
    auto at = [&](index_t i, index_t j) -> L {  // element (i, j) of L (lower) or of Uᴴ (upper)
        if (lower) return L(a[i + j * ld]);
        return conj_if(L(a[j + i * ld]), true);
    };
    auto put = [&](index_t i, index_t j, L v) {
        if (lower) a[i + j * ld] = T(v);
        else a[j + i * ld] = T(conj_if(v, true));
    };
    for (index_t j = 0; j < n; ++j) {
        long double d = std::real(at(j, j));
        for (index_t k = 0; k < j; ++k) d -= std::norm(at(j, k));
        if (!(d > 0)) return j + 1;
        const long double s = std::sqrt(d);
        put(j, j, L(s));
        for (index_t i = j + 1; i < n; ++i) {
            L v = at(i, j);
            for (index_t k = 0; k < j; ++k) v -= at(i, k) * conj_if(at(j, k), true);
            put(i, j, v / L(s));
        }
    }
    return 0;
}

/// max |f - r| over the `lower` triangle over max |r| there.
template <class T>
double triangle_error(bool lower, index_t n, const std::vector<T>& f, const std::vector<T>& r, index_t ld) {
    double e = 0, m = 0;
    for (index_t j = 0; j < n; ++j)
        for (index_t i = lower ? j : 0; i < (lower ? n : j + 1); ++i) {
            e = std::max(e, double(std::abs(f[i + j * ld] - r[i + j * ld])));
            m = std::max(m, double(std::abs(r[i + j * ld])));
        }
    return m > 0 ? e / m : e;
}

/// Whether everything outside the `lower` triangle (the other strict triangle and the padding
/// rows) is bitwise what it was.
template <class T>
bool outside_untouched(bool lower, index_t n, const std::vector<T>& f, const std::vector<T>& a0, index_t ld) {
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < ld; ++i) {
            const bool inside = i < n && (lower ? i >= j : i <= j);
            if (!inside && std::memcmp(&f[i + j * ld], &a0[i + j * ld], sizeof(T)) != 0) return false;
        }
    return true;
}

/// A device that forwards to another and counts the elements copied and the kernels run (a
/// measurement of what the engine asks for, independent of the engine's own report).
class Counting final : public device::Device {
public:
    explicit Counting(device::Device& inner) : d_(inner) {}
    std::int64_t h2d = 0, d2h = 0, calls = 0;
    std::string name() const override { return d_.name(); }
    index_t preferred_tile() const override { return d_.preferred_tile(); }
    std::int64_t budget_bytes() const override { return d_.budget_bytes(); }
    std::int64_t used_bytes() const override { return d_.used_bytes(); }
    std::int64_t peak_bytes() const override { return d_.peak_bytes(); }
    void reset_peak() override { d_.reset_peak(); }
    void* allocate(std::int64_t bytes) override { return d_.allocate(bytes); }
    void release(void* p, std::int64_t bytes) noexcept override { d_.release(p, bytes); }
    void copy_to_device(const device::Copy2D& c) override {
        h2d += c.rows * c.cols;
        d_.copy_to_device(c);
    }
    void copy_to_host(const device::Copy2D& c) override {
        d2h += c.rows * c.cols;
        d_.copy_to_host(c);
    }
    void copy_from_peer(const device::Copy2D& c, Device& from) override { d_.copy_from_peer(c, from); }
    void gemm(device::Scalar s, Op oa, Op ob, index_t m, index_t n, index_t k, const void* al, const void* a,
              index_t lda, const void* b, index_t ldb, const void* be, void* c, index_t ldc) override {
        ++calls;
        d_.gemm(s, oa, ob, m, n, k, al, a, lda, b, ldb, be, c, ldc);
    }
    void synchronize() override { d_.synchronize(); }
    void begin_host_ranges(const std::vector<std::pair<const void*, std::int64_t>>& r) override {
        d_.begin_host_ranges(r);
    }
    void end_host_ranges() noexcept override { d_.end_host_ranges(); }
    void potrf(device::Scalar s, bool lower, index_t n, void* a, index_t lda, index_t offset) override {
        ++calls;
        d_.potrf(s, lower, n, a, lda, offset);
    }
    index_t take_info() override { return d_.take_info(); }
    void trsm(device::Scalar s, bool left, bool lower, Op op, bool unit, index_t m, index_t n, const void* al,
              const void* a, index_t lda, void* b, index_t ldb) override {
        ++calls;
        d_.trsm(s, left, lower, op, unit, m, n, al, a, lda, b, ldb);
    }
    void herk(device::Scalar s, bool lower, Op op, index_t n, index_t k, const void* al, const void* a, index_t lda,
              const void* be, void* c, index_t ldc) override {
        ++calls;
        d_.herk(s, lower, op, n, k, al, a, lda, be, c, ldc);
    }

private:
    device::Device& d_;
};

}  // namespace cala::test

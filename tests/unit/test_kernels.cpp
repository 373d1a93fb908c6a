// Host BLAS wrappers against a naive reference, for the four types and every op pair.

#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <vector>

#include "kernels/blas.hpp"
#include "support/random_value.hpp"

using cala::index_t;
using cala::Op;

namespace {
template <class T>
T at(Op op, const std::vector<T>& x, index_t ld, index_t i, index_t j) {
    return op == Op::N ? x[i + j * ld] : cala::conj_if(x[j + i * ld], op == Op::C);
}
// Random operands of c := alpha·op(a)·op(b) + beta·c, c m x n, each array padded past its rows.
template <class T>
struct Product {
    Op oa, ob;
    index_t m, n, k, lda, ldb, ldc;
    std::vector<T> a, b, c;
    T alpha, beta;
    Product(std::mt19937_64& g, Op oa_, Op ob_, index_t m_, index_t n_, index_t k_, index_t pad_a, index_t pad_b,
            index_t pad_c)
        : oa(oa_), ob(ob_), m(m_), n(n_), k(k_), lda((oa_ == Op::N ? m_ : k_) + pad_a),
          ldb((ob_ == Op::N ? k_ : n_) + pad_b), ldc(m_ + pad_c), a(lda * (oa_ == Op::N ? k_ : m_)),
          b(ldb * (ob_ == Op::N ? n_ : k_)), c(ldc * n_), alpha(cala::test::random_value<T>(g)), beta(cala::test::random_value<T>(g)) {
        for (auto& x : a) x = cala::test::random_value<T>(g);
        for (auto& x : b) x = cala::test::random_value<T>(g);
        for (auto& x : c) x = cala::test::random_value<T>(g);
    }
    void run(std::vector<T>& out) const {
        cala::kernels::gemm(oa, ob, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, out.data(), ldc);
    }
};
}  // namespace

TEST_CASE_TEMPLATE("kernels::gemm matches the naive product for every op pair", T, float, double,
                   std::complex<float>, std::complex<double>) {
    std::mt19937_64 g(std::random_device{}());
    const index_t m = 23, n = 17, k = 31;
    for (Op oa : {Op::N, Op::T, Op::C})
        for (Op ob : {Op::N, Op::T, Op::C}) {
            const Product<T> x(g, oa, ob, m, n, k, 3, 2, 1);
            std::vector<T> c = x.c;

            x.run(c);

            double err = 0;
            for (index_t j = 0; j < n; ++j)
                for (index_t i = 0; i < m; ++i) {
                    std::complex<double> s = 0;
                    for (index_t l = 0; l < k; ++l)
                        s += std::complex<double>(at(oa, x.a, x.lda, i, l)) * std::complex<double>(at(ob, x.b, x.ldb, l, j));
                    const auto ref = std::complex<double>(x.alpha) * s + std::complex<double>(x.beta) * std::complex<double>(x.c[i + j * x.ldc]);
                    err = std::max(err, std::abs(ref - std::complex<double>(c[i + j * x.ldc])));
                }
            CAPTURE(cala::op_char(oa));
            CAPTURE(cala::op_char(ob));
            CHECK(err < 4 * (k + 2) * double(cala::eps<T>()) * k);
        }
}

TEST_CASE_TEMPLATE("kernels::gemm in row blocks matches one call, every op pair", T, double, std::complex<float>) {
    // C taller than the row block runs as several BLIS calls (kernels::gemm_row_block): heights
    // that the block divides and does not, a last call shorter than the others, one block.
    std::mt19937_64 g(std::random_device{}());
    const index_t n = 6, k = 9;
    for (index_t block : {index_t{16}, index_t{40}, index_t{100}}) {
        for (index_t m : {index_t{99}, index_t{100}, index_t{161}}) {
            for (Op oa : {Op::N, Op::T, Op::C})
                for (Op ob : {Op::N, Op::C}) {
                    const Product<T> x(g, oa, ob, m, n, k, 2, 1, 3);
                    const index_t ldc = x.ldc;
                    std::vector<T> one = x.c, c = x.c;
                    const index_t before = cala::kernels::set_gemm_row_block(0);
                    x.run(one);
                    cala::kernels::set_gemm_row_block(block);
                    CHECK(cala::kernels::gemm_row_block() == block);
                    x.run(c);
                    cala::kernels::set_gemm_row_block(before);
                    double err = 0;
                    for (index_t j = 0; j < n; ++j)
                        for (index_t i = 0; i < ldc; ++i)  // the rows past m too: untouched
                            err = std::max(err, std::abs(std::complex<double>(one[i + j * ldc]) -
                                                         std::complex<double>(c[i + j * ldc])));
                    CAPTURE(block);
                    CAPTURE(m);
                    CAPTURE(cala::op_char(oa));
                    CAPTURE(cala::op_char(ob));
                    CHECK(err < 4 * k * double(cala::eps<T>()));
                }
        }
    }
}

TEST_CASE_TEMPLATE("kernels::gemm with beta = 0 does not read C", T, float, double, std::complex<float>,
                   std::complex<double>) {
    const index_t m = 9, n = 7, k = 5;
    std::vector<T> a(m * k, T(1)), b(k * n, T(2)), c(m * n, T(std::numeric_limits<cala::real_t<T>>::quiet_NaN()));

    cala::kernels::gemm(Op::N, Op::N, m, n, k, T(1), a.data(), m, b.data(), k, T(0), c.data(), m);

    for (const T& x : c) REQUIRE(x == T(2 * k));
}

TEST_CASE_TEMPLATE("kernels::copy and kernels::add apply op", T, double, std::complex<double>) {
    std::mt19937_64 g(3);
    const index_t m = 37, n = 45;
    std::vector<T> a(m * n), t(n * m), c(n * m), c0;
    for (auto& x : a) x = cala::test::random_value<T>(g);
    for (auto& x : c) x = cala::test::random_value<T>(g);
    c0 = c;

    cala::kernels::copy(Op::C, m, n, a.data(), m, t.data(), n);
    cala::kernels::add(Op::C, n, m, a.data(), m, T(2), c.data(), n);

    for (index_t i = 0; i < m; ++i)
        for (index_t j = 0; j < n; ++j) {
            REQUIRE(t[j + i * n] == cala::conj_if(a[i + j * m], true));
            REQUIRE(std::abs(c[j + i * n] - (cala::conj_if(a[i + j * m], true) + T(2) * c0[j + i * n])) < 1e-14);
        }
}

TEST_CASE_TEMPLATE("kernels::syrk: alpha·op(a)·op(a)ᵀ + beta·c on one triangle, no conjugation, panels of 256", T,
                   std::complex<double>, std::complex<float>, double) {
    std::mt19937_64 g(11);
    const index_t n = 301, k = 13, lda = 320, ldc = 305;  // n: two column panels
    std::vector<T> a(lda * n);
    for (auto& x : a) x = cala::test::random_value<T>(g);
    const T alpha = cala::test::random_value<T>(g), nan = T(std::numeric_limits<cala::real_t<T>>::quiet_NaN());
    for (Op op : {Op::N, Op::T})
        for (bool lower : {true, false})
            for (T beta : {T(0), cala::test::random_value<T>(g)}) {
                std::vector<T> c(ldc * n), c0;
                for (auto& x : c) x = beta == T(0) ? nan : cala::test::random_value<T>(g);
                c0 = c;
                cala::kernels::syrk(lower, op, n, k, alpha, a.data(), lda, beta, c.data(), ldc);
                double err = 0;
                bool other = true;
                for (index_t j = 0; j < n; ++j)
                    for (index_t i = 0; i < ldc; ++i) {
                        const bool in = i < n && (lower ? i >= j : i <= j);
                        const T v = c[i + j * ldc];
                        if (!in) {  // the other triangle and the padding: untouched (NaN included)
                            other = other && (v == c0[i + j * ldc] || (v != v && c0[i + j * ldc] != c0[i + j * ldc]));
                            continue;
                        }
                        T ref = beta == T(0) ? T(0) : beta * c0[i + j * ldc];
                        for (index_t l = 0; l < k; ++l)  // op(a)(i, l)·op(a)(j, l), no conjugate
                            ref += alpha * (op == Op::N ? a[i + l * lda] * a[j + l * lda] : a[l + i * lda] * a[l + j * lda]);
                        err = std::max(err, double(std::abs(v - ref)));
                    }
                CAPTURE(cala::op_char(op));
                CAPTURE(lower);
                CHECK(other);
                CHECK(err < 8 * (k + 2) * double(cala::eps<T>()));
            }
    // k = 0: the triangle := beta·c (beta = 1: untouched), the diagonal not made real
    std::vector<T> c(ldc * n, T(1)), c1 = c;
    cala::kernels::syrk(true, Op::N, n, 0, alpha, a.data(), lda, T(1), c.data(), ldc);
    CHECK(c == c1);
    cala::kernels::syrk(true, Op::N, n, 0, alpha, a.data(), lda, T(2), c.data(), ldc);
    CHECK(c[0] == T(2));
    CHECK(c[ldc] == T(1));  // (0, 1): the upper triangle, untouched
}

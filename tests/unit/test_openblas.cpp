// cala's host kernels on OpenBLAS (lib/kernels/openblas.hpp) against the same kernels on BLIS, for
// the four types and every op, side, triangle and diagonal; and which library serves a call on
// how many threads, inside and outside a parallel region.

#include <doctest/doctest.h>

#include <omp.h>

#include <cmath>
#include <complex>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/blas.hpp"
#include "kernels/openblas.hpp"
#include "support/random_value.hpp"

using cala::index_t;
using cala::Op;
namespace k = cala::kernels;

namespace {

template <class T>
std::vector<T> random(std::mt19937_64& g, index_t n) {
    std::vector<T> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = cala::test::random_value<T>(g);
    return v;
}

template <class T>
double norm(const std::vector<T>& v) {
    double s = 0;
    for (const auto& x : v) s += std::norm(x);
    return std::sqrt(s);
}

template <class T>
double diff(const std::vector<T>& a, const std::vector<T>& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s += std::norm(a[i] - b[i]);
    return std::sqrt(s);
}

template <class T>
double eps() {
    return std::numeric_limits<cala::real_t<T>>::epsilon();
}

const k::OpenBlas* openblas() {
    static const k::OpenBlas* ob = [] {
        std::string why;
        const k::OpenBlas* o = k::load_openblas(k::openblas_path(), &why);
        INFO("OpenBLAS (scripts/setup installs libopenblas0-openmp): ", why);
        REQUIRE(o != nullptr);
        return o;
    }();
    return ob;
}

// Runs `f` once on BLIS and once on OpenBLAS (whichever was active is put back); checks that
// OpenBLAS served it `calls` times.
template <class F>
void both(F f, std::uint64_t calls = 1) {
    const k::OpenBlas* ob = openblas();
    const k::OpenBlas* before = k::set_active_openblas(nullptr);
    f(false);
    k::set_active_openblas(ob);
    const std::uint64_t n0 = k::openblas_calls();
    f(true);
    CHECK(k::openblas_calls() - n0 == calls);
    k::set_active_openblas(before);
}

}  // namespace

TEST_CASE("OpenBLAS loads apart and says what it is") {
    const k::OpenBlas* ob = openblas();
    CHECK(!ob->core.empty());
    CHECK(ob->config.find("OpenBLAS") != std::string::npos);
    CHECK(ob->parallel >= 0);
    CHECK(ob->parallel <= 2);
    CHECK(k::load_openblas(k::openblas_path()) == ob);  // once per path
    std::string why;
    CHECK(k::load_openblas("/nonexistent/libopenblas.so", &why) == nullptr);
    CHECK(!why.empty());
}

TEST_CASE_TEMPLATE("kernels::gemm on OpenBLAS matches BLIS for every op pair and size class", T, float, double,
                   std::complex<float>, std::complex<double>) {
    std::mt19937_64 g(std::random_device{}());
    // 7 x 5 x 3: below 64^3 (one thread); 150 x 97 x 130: threads(); ld padded past the rows.
    struct Size {
        index_t m, n, k;
    };
    for (const Size sz : {Size{7, 5, 3}, Size{150, 97, 130}})
        for (Op oa : {Op::N, Op::T, Op::C})
            for (Op ob : {Op::N, Op::T, Op::C})
                for (bool beta_zero : {false, true}) {
                    const index_t m = sz.m, n = sz.n, kk = sz.k;
                    const index_t lda = (oa == Op::N ? m : kk) + 3, ldb = (ob == Op::N ? kk : n) + 2, ldc = m + 1;
                    const auto a = random<T>(g, lda * (oa == Op::N ? kk : m));
                    const auto b = random<T>(g, ldb * (ob == Op::N ? n : kk));
                    auto c0 = random<T>(g, ldc * n);
                    if (beta_zero) c0[0] = std::numeric_limits<cala::real_t<T>>::quiet_NaN();  // must not leak
                    const T alpha = cala::test::random_value<T>(g), beta = beta_zero ? T(0) : cala::test::random_value<T>(g);
                    std::vector<T> c_blis = c0, c_ob = c0;

                    both([&](bool on_ob) {
                        auto& c = on_ob ? c_ob : c_blis;
                        k::gemm(oa, ob, m, n, kk, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
                    });

                    const double scale = std::abs(alpha) * norm(a) * norm(b) + (beta_zero ? 0 : std::abs(beta) * norm(c0));
                    const int op_a = int(oa), op_b = int(ob);
                    CAPTURE(m);
                    CAPTURE(op_a);
                    CAPTURE(op_b);
                    CAPTURE(beta_zero);
                    CHECK(diff(c_ob, c_blis) <= 4.0 * double(kk) * eps<T>() * scale);
                    CHECK(std::isfinite(norm(c_ob)));
                }
}

TEST_CASE_TEMPLATE("kernels::trsm on OpenBLAS matches BLIS for every side, triangle, op and diagonal", T, float,
                   double, std::complex<float>, std::complex<double>) {
    std::mt19937_64 g(std::random_device{}());
    for (const auto& mn : {std::pair<index_t, index_t>{6, 4}, {90, 70}})
        for (bool left : {true, false})
            for (bool lower : {true, false})
                for (Op op : {Op::N, Op::T, Op::C})
                    for (bool unit : {false, true}) {
                        const index_t m = mn.first, n = mn.second;
                        const index_t na = left ? m : n, lda = na + 2, ldb = m + 3;
                        auto a = random<T>(g, lda * na);
                        for (index_t i = 0; i < na; ++i) a[i + i * lda] += T(double(na));  // well conditioned
                        if (unit)  // off-diagonal entries small enough that the unit triangle is well conditioned too
                            for (auto& x : a) x *= T(1.0 / double(na));
                        const auto b0 = random<T>(g, ldb * n);
                        const T alpha = cala::test::random_value<T>(g);
                        std::vector<T> x_blis = b0, x_ob = b0;

                        both([&](bool on_ob) {
                            auto& x = on_ob ? x_ob : x_blis;
                            k::trsm(left, lower, op, unit, m, n, alpha, a.data(), lda, x.data(), ldb);
                        });

                        const int op_code = int(op);
                        CAPTURE(m);
                        CAPTURE(left);
                        CAPTURE(lower);
                        CAPTURE(op_code);
                        CAPTURE(unit);
                        CHECK(diff(x_ob, x_blis) <= 50.0 * double(na) * eps<T>() * norm(x_blis));
                        CHECK(norm(x_blis) > 0);
                    }
}

TEST_CASE_TEMPLATE("kernels::herk and the Cholesky panel's trmm on OpenBLAS match BLIS", T, float, double,
                   std::complex<float>, std::complex<double>) {
    std::mt19937_64 g(std::random_device{}());
    using R = cala::real_t<T>;
    for (const auto& nk : {std::pair<index_t, index_t>{5, 3}, {120, 80}})
        for (bool lower : {true, false})
            for (Op op : {Op::N, Op::C}) {
                const index_t n = nk.first, kk = nk.second;
                const index_t lda = (op == Op::N ? n : kk) + 1, ldc = n + 2;
                const auto a = random<T>(g, lda * (op == Op::N ? kk : n));
                const auto c0 = random<T>(g, ldc * n);
                const R alpha = R(0.75), beta = R(-0.5);
                std::vector<T> c_blis = c0, c_ob = c0;

                both([&](bool on_ob) {
                    auto& c = on_ob ? c_ob : c_blis;
                    k::herk(lower, op, n, kk, alpha, a.data(), lda, beta, c.data(), ldc);
                });

                const int op_code = int(op);
                CAPTURE(n);
                CAPTURE(lower);
                CAPTURE(op_code);
                CHECK(diff(c_ob, c_blis) <= 4.0 * double(kk) * eps<T>() * (norm(a) * norm(a) + norm(c0)));
            }
    // b := b·inv^H for a lower triangular inv (ld n): the tall panel's solve.
    const index_t m = 140, n = 70, ldb = m + 5;
    auto inv = random<T>(g, n * n);
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < j; ++i) inv[i + j * n] = T(0);
    const auto b0 = random<T>(g, ldb * n);
    std::vector<T> b_blis = b0, b_ob = b0;
    both([&](bool on_ob) { k::trmm_right_lower_ch(m, n, inv.data(), (on_ob ? b_ob : b_blis).data(), ldb); });
    CHECK(diff(b_ob, b_blis) <= 4.0 * double(n) * eps<T>() * norm(inv) * norm(b0));
}

TEST_CASE("which library serves a call: OpenBLAS on one thread anywhere, on several outside a parallel region") {
    const k::OpenBlas* ob = openblas();
    const k::OpenBlas* before = k::set_active_openblas(ob);
    const index_t n = 96;  // above the 64^3 threshold: the call asks for threads()
    std::vector<double> a(n * n, 0.5), b(n * n, 0.25), c(n * n, 0.0);
    const auto product = [&] { k::gemm(Op::N, Op::N, n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n); };

    const int saved = omp_get_max_threads();
    omp_set_num_threads(3);
    std::uint64_t n0 = k::openblas_calls();
    {
        k::ThreadScope two(2);
        product();
    }
    const std::uint64_t outside_two = k::openblas_calls() - n0;
    const int after = omp_get_max_threads();  // the call's own count is put back
    const double c00 = c[0];

    n0 = k::openblas_calls();
#pragma omp parallel num_threads(2)
    {
        std::vector<double> cc(n * n, 0.0);
        {
            k::ThreadScope one(1);
            k::gemm(Op::N, Op::N, n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, cc.data(), n);
        }
        {
            k::ThreadScope two(2);  // a team inside a team: BLIS takes the count, OpenBLAS cannot
            k::gemm(Op::N, Op::N, n, n, n, 1.0, a.data(), n, b.data(), n, 1.0, cc.data(), n);
        }
#pragma omp critical
        CHECK(cc[0] == doctest::Approx(2 * c00));
    }
    const std::uint64_t inside = k::openblas_calls() - n0;
    omp_set_num_threads(saved);
    k::set_active_openblas(before);

    CHECK(c00 == doctest::Approx(n * 0.125));
    CHECK(after == 3);
    if (ob->parallel == 2) {
        CHECK(outside_two == 1);
        CHECK(inside == 2);  // the one-thread calls only
    } else {
        CHECK(outside_two == 0);  // serial or pthreads builds: one-thread calls only
        CHECK(inside == (ob->get_num_threads() == 1 ? 2u : 0u));
    }
}

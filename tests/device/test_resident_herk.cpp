// cala::herk and cala::syrk on resident matrices, on HostDevice memory (issue 30, item 4's
// p?syrk_ / p?herk_): C := alpha·A·Aᴴ + beta·C (syrk: A·Aᵀ, complex alpha and beta, no real
// diagonal) on C's triangle for every type, both triangles, A lined up with C's
// rows or not (moved), tiles the size does not divide, non-zero source processes, k = 0 and
// alpha = 0, beta = 0 with NaN in C; against a long-double reference on gathered data (the
// diagonal real), the other strict triangle bitwise untouched; words, words received and
// messages == resident_herk_cost / resident_syrk_cost on every rank, the device's peak == the model's workspace; bad
// input as cala::Error on every rank with C untouched.
// (run as: mpiexec.mpich -n N test_resident_herk, N in {1, 2, 4}: every p x q with p·q = N)

#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>

#include "cala/resident.hpp"
#include "device/device.hpp"
#include "support/helpers.hpp"

using namespace cala;

namespace {

constexpr std::int64_t kCap = std::int64_t{64} << 20;

// C: n x n in nb x nb tiles from (csrc, csrc'); A: n x k in amb x anb blocks from (arsrc, acsrc).
struct Case {
    index_t n, k, nb, amb, anb;
    int csrc, arsrc, acsrc;
};

constexpr Case kCases[] = {
    {0, 3, 4, 4, 4, 0, 0, 0},   {1, 1, 4, 4, 4, 0, 0, 0},   {5, 0, 2, 2, 2, 0, 0, 0},  // empty, 1 x 1, k = 0
    {13, 7, 4, 4, 3, 1, 1, 0},  {29, 5, 5, 5, 5, 0, 0, 1},                              // A in C's rows
    {22, 9, 4, 3, 2, 1, 0, 1},  {37, 41, 6, 5, 7, 0, 1, 1},                             // A moves
    {64, 12, 8, 8, 8, 1, 1, 0},                                                         // several panels
};

template <class T>
bool same_bits(const T& x, const T& y) {
    return std::memcmp(&x, &y, sizeof(T)) == 0;
}

// A scalar of T in [lo, hi) (complex: both parts), the same on every rank.
template <class T>
T shared_scalar(std::mt19937_64& g, double lo, double hi) {
    std::uniform_real_distribution<double> u(lo, hi);
    const double re = u(g);
    if constexpr (is_complex_v<T>) return T(real_t<T>(re), real_t<T>(u(g)));
    else return T(re);
}

// herm: cala::herk (real alpha, beta); else cala::syrk (alpha, beta of T, Aᵀ).
template <class T>
void run_case(const Grid2D& g, const Case& c, Uplo uplo, bool alpha_zero, bool beta_zero, int lookahead,
              bool herm = true) {
    using R = real_t<T>;
    std::mt19937_64 shared(static_cast<std::uint64_t>(c.n * 131 + c.k));  // same scalars on every rank
    const ResidentDevice dev = ResidentDevice::open("host", kCap);
    const int p = g.p(), q = g.q();
    // C's row and column sources differ: diagonal tiles also on processes off the grid's diagonal
    const BlockCyclic lc(c.n, c.n, c.nb, c.nb, p, q, c.csrc % p, (c.csrc + 1) % q);
    const BlockCyclic la(c.n, c.k, c.amb, c.anb, p, q, c.arsrc % p, c.acsrc % q);
    // herk's scalars real: the real parts
    const T a0 = shared_scalar<T>(shared, 0.5, 1.5), b0 = shared_scalar<T>(shared, -1.0, 1.0);
    const T alpha = alpha_zero ? T(0) : herm ? T(std::real(a0)) : a0;
    const T beta = beta_zero ? T(0) : herm ? T(std::real(b0)) : b0;
    std::vector<T> ga, gc;
    if (g.comm().rank() == 0) {
        for (index_t i = 0; i < c.n * c.k; ++i) ga.push_back(test::random_value<T>(test::rng()));
        for (index_t i = 0; i < c.n * c.n; ++i)
            gc.push_back(beta_zero ? T(std::numeric_limits<R>::quiet_NaN()) : test::random_value<T>(test::rng()));
    }
    ResidentMatrix<T> a(g, la, dev), cm(g, lc, dev);
    scatter(ga.data(), std::max<index_t>(c.n, 1), a);
    scatter(gc.data(), std::max<index_t>(c.n, 1), cm);
    ResidentGemmReport report;
    const ResidentGemmOptions opts{.lookahead = lookahead, .panel_width = lookahead == 2 ? 4 : 0, .report = &report};
    const bool moves = !alpha_zero && c.n > 0 && c.k > 0;
    const Cost model = !moves ? Cost{}
                       : herm ? resident_herk_cost(uplo, la, lc, opts, g.row(), g.col(), sizeof(T), is_complex_v<T>)
                              : resident_syrk_cost(uplo, la, lc, opts, g.row(), g.col(), sizeof(T), is_complex_v<T>);
    const std::int64_t used = dev.used_bytes();
    dev.get()->reset_peak();
    reset_traffic();

    if (herm) herk(uplo, std::real(alpha), a, std::real(beta), cm, opts);
    else syrk(uplo, alpha, a, beta, cm, opts);

    const Traffic t = traffic();
    const std::int64_t extra = dev.peak_bytes() - used;
    const auto got = gather(cm);
    double err = 0;
    bool other_same = true;
    if (g.comm().rank() == 0) {
        using LC = std::complex<long double>;
        const index_t n = c.n;
        for (index_t j = 0; j < n; ++j)
            for (index_t i = 0; i < n; ++i) {
                const T v = got[i + j * n];
                if (i != j && (i > j) != (uplo == Uplo::Lower)) {
                    other_same = other_same && same_bits(v, gc[i + j * n]);
                    continue;
                }
                LC s = 0;
                long double bound = 0;
                for (index_t l = 0; l < c.k; ++l) {
                    const LC x = LC(ga[i + l * n]) * (herm ? std::conj(LC(ga[j + l * n])) : LC(ga[j + l * n]));
                    s += x;
                    bound += std::abs(x);
                }
                LC ref = LC(alpha) * s + (beta_zero ? LC(0) : LC(beta) * LC(gc[i + j * n]));
                bound = std::abs(LC(alpha)) * bound + (beta_zero ? 0 : std::abs(LC(beta)) * std::abs(LC(gc[i + j * n])));
                if (herm && i == j) ref = LC(ref.real(), 0);  // herk: a real diagonal
                const long double d = std::abs(LC(v) - ref);
                const double e = !(d == d) ? INFINITY
                                 : d == 0  ? 0.0
                                           : static_cast<double>(d / (static_cast<long double>(eps<T>()) * (c.k + 2) *
                                                                      (bound + 1e-300L)));
                err = std::max(err, e);
            }
    }
    CAPTURE(p); CAPTURE(q); CAPTURE(c.n); CAPTURE(c.k); CAPTURE(c.nb); CAPTURE(uplo_char(uplo)); CAPTURE(alpha_zero);
    CAPTURE(beta_zero); CAPTURE(lookahead); CAPTURE(herm); CAPTURE(err); CAPTURE(t.words()); CAPTURE(model.words);
    CAPTURE(t.msgs()); CAPTURE(model.msgs); CAPTURE(extra); CAPTURE(model.extra_bytes);
    CHECK(test::all_ranks(err < 4.0, g));
    CHECK(test::all_ranks(other_same, g));
    CHECK(test::all_ranks(t.words() == model.words && t.words_recv == model.words_recv, g));
    CHECK(test::all_ranks(t.msgs() == model.msgs, g));
    CHECK(test::all_ranks(extra == model.extra_bytes, g));
    CHECK(test::all_ranks(!moves || report.device_bytes == model.extra_bytes, g));
    CHECK(test::all_ranks(dev.used_bytes() == used, g));  // the workspace is given back
}

}  // namespace

TEST_CASE_TEMPLATE("resident herk updates C's triangle and matches the model", T, float, double, std::complex<float>,
                   std::complex<double>) {
    int count = 0;
    test::for_each_grid([&](const Grid2D& g) {
        for (const Case& c : kCases)
            for (Uplo uplo : {Uplo::Lower, Uplo::Upper}) {
                ++count;
                run_case<T>(g, c, uplo, false, count % 3 == 0, 1 + count % 3);
            }
        run_case<T>(g, kCases[4], Uplo::Lower, true, false, 1);  // alpha = 0: C's triangle := beta·C
        run_case<T>(g, kCases[5], Uplo::Upper, true, true, 1);   // alpha = beta = 0: the triangle := 0
    });
}

TEST_CASE_TEMPLATE("resident syrk: Aᵀ, complex alpha and beta, C's triangle, the model", T, std::complex<double>,
                   std::complex<float>, double) {
    int count = 0;
    test::for_each_grid([&](const Grid2D& g) {
        for (const Case& c : kCases)
            for (Uplo uplo : {Uplo::Lower, Uplo::Upper}) {
                ++count;
                run_case<T>(g, c, uplo, false, count % 3 == 1, 1 + count % 3, false);
            }
        run_case<T>(g, kCases[6], Uplo::Upper, true, false, 1, false);  // alpha = 0: C's triangle := beta·C
    });
}

TEST_CASE("the model: the gemm's traffic, the triangle's flops") {
    const BlockCyclic c1(50, 50, 8, 8, 1, 1), a1(50, 20, 8, 8, 1, 1);
    const Cost one = resident_herk_cost(Uplo::Lower, a1, c1, {}, 0, 0, 8, false);
    CHECK(one.words == 0);
    CHECK(one.msgs == 0);
    CHECK(one.flops == doctest::Approx(50.0 * 51 * 20));  // n(n+1)k, the real triangle
    const BlockCyclic c(77, 77, 6, 6, 2, 2, 1, 0), a(77, 30, 5, 4, 2, 2, 0, 1);
    double flops = 0;
    for (int r = 0; r < 2; ++r)
        for (int col = 0; col < 2; ++col) {
            const Cost h = resident_herk_cost(Uplo::Upper, a, c, {}, r, col, 16, true);
            const Cost gm = resident_gemm_cost(Op::N, Op::C, a, a, c, {}, r, col, 16, true);
            CHECK(h.words == gm.words);
            CHECK(h.msgs == gm.msgs);
            CHECK(h.extra_bytes == gm.extra_bytes);
            CHECK(h.flops < gm.flops);
            flops += h.flops;
        }
    CHECK(flops == doctest::Approx(4.0 * 77 * 78 * 30));
    for (int r = 0; r < 2; ++r)  // syrk: the gemm's with Aᵀ, herk's flops
        for (int col = 0; col < 2; ++col) {
            const Cost sy = resident_syrk_cost(Uplo::Lower, a, c, {}, r, col, 16, true);
            const Cost gm = resident_gemm_cost(Op::N, Op::T, a, a, c, {}, r, col, 16, true);
            CHECK(sy.words == gm.words);
            CHECK(sy.msgs == gm.msgs);
            CHECK(sy.extra_bytes == gm.extra_bytes);
            CHECK(sy.flops == doctest::Approx(resident_herk_cost(Uplo::Lower, a, c, {}, r, col, 16, true).flops));
        }
    const BlockCyclic rect(77, 77, 6, 5, 2, 2);
    CHECK(test::error_message([&] { resident_herk_cost(Uplo::Lower, a, rect, {}, 0, 0, 8, false); })
              .find("C's tiles are not square") != std::string::npos);
}

TEST_CASE("bad input: a clear cala::Error on every rank, C untouched") {
    using T = double;
    test::for_each_grid([](const Grid2D& g) {
        const ResidentDevice dev = ResidentDevice::open("host", kCap), other = ResidentDevice::open("host", kCap);
        const index_t n = 11, k = 6;
        const BlockCyclic lc(n, n, 3, 3, g.p(), g.q()), la(n, k, 3, 2, g.p(), g.q());
        std::vector<T> ga, gc;
        if (g.comm().rank() == 0)
            for (index_t i = 0; i < n * n; ++i) gc.push_back(test::random_value<T>(test::rng()));
        if (g.comm().rank() == 0)
            for (index_t i = 0; i < n * k; ++i) ga.push_back(test::random_value<T>(test::rng()));
        ResidentMatrix<T> a(g, la, dev), c(g, lc, dev), crect(g, n, n, 3, 2, dev), ctall(g, n + 1, n + 1, 3, 3, dev);
        scatter(ga.data(), n, a);
        scatter(gc.data(), n, c);
        const auto before = gather(c);
        auto untouched = [&] {
            const auto now = gather(c);
            return test::all_ranks(now.size() == before.size() &&
                                       (now.empty() || std::memcmp(now.data(), before.data(), now.size() * sizeof(T)) == 0),
                                   g);
        };
        CHECK(test::fails_everywhere(g, "herk: C's tiles are not square", [&] { herk(Uplo::Lower, 1.0, a, 0.5, crect); }));
        CHECK(test::fails_everywhere(g, "herk: A has 11 rows but C is 12 x 12", [&] { herk(Uplo::Lower, 1.0, a, 0.5, ctall); }));
        using Z = std::complex<double>;
        ResidentMatrix<Z> za(g, la, dev), zrect(g, n, n, 3, 2, dev), zc(g, lc, dev);
        CHECK(test::fails_everywhere(g, "syrk: C's tiles are not square", [&] { syrk(Uplo::Lower, Z(1), za, Z(0), zrect); }));
        CHECK(test::fails_everywhere(g, "syrk: lookahead is 0", [&] { syrk(Uplo::Lower, Z(1), za, Z(0), zc, {.lookahead = 0}); }));
        CHECK(test::fails_everywhere(g, "herk: uplo is 4", [&] { herk(static_cast<Uplo>(4), 1.0, a, 0.5, c); }));
        CHECK(test::fails_everywhere(g, "herk: lookahead is 0", [&] { herk(Uplo::Upper, 1.0, a, 0.5, c, {.lookahead = 0}); }));
        CHECK(test::fails_everywhere(g, "herk: transport Nccl needs CUDA devices",
                               [&] { herk(Uplo::Upper, 1.0, a, 0.5, c, {.transport = PanelTransport::Nccl}); }));
        ResidentMatrix<T> ah(g, la, ResidentDevice{}), ao(g, la, other);
        scatter(ga.data(), n, ah);
        scatter(ga.data(), n, ao);
        CHECK(test::fails_everywhere(g, "herk: A lives on host memory but C on host", [&] { herk(Uplo::Lower, 1.0, ah, 0.5, c); }));
        CHECK(test::fails_everywhere(g, "herk: A lives on host#", [&] { herk(Uplo::Lower, 1.0, ao, 0.5, c); }));
        if (g.comm().size() > 1) {
            CHECK(test::fails_everywhere(g, "different arguments",
                                   [&] { herk(Uplo::Lower, g.comm().rank() == 0 ? 1.0 : 2.0, a, 0.5, c); }));
        }
        CHECK(untouched());
    });
}

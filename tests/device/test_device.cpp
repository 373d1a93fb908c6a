// Device layer and chunked engine on HostDevice (no MPI, no GPU): results vs a naive product,
// tiles moved == the model of the seed's equation (1), the memory cap never exceeded.

#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <map>
#include <random>
#include <vector>

#include "cala/device.hpp"
#include "device/accumulate.hpp"

using cala::index_t;
using cala::Op;

namespace {

template <class T> double k_eps(index_t k) { return static_cast<double>(cala::eps<T>()) * static_cast<double>(k + 1); }

template <class T> T pick(std::mt19937& g) {
    std::uniform_real_distribution<double> u(-1, 1);
    if constexpr (cala::is_complex_v<T>) return T(u(g), u(g));
    else return T(u(g));
}

template <class T>
struct Case {
    index_t m, n, k, lda, ldb, ldc;
    Op oa, ob;
    std::vector<T> a, b, c, ref;
    T alpha, beta;

    Case(Op oa_, Op ob_, index_t m_, index_t n_, index_t k_, T alpha_, T beta_, unsigned seed = 1)
        : m(m_), n(n_), k(k_), oa(oa_), ob(ob_), alpha(alpha_), beta(beta_) {
        std::mt19937 g(seed);
        const index_t ar = oa == Op::N ? m : k, ac = oa == Op::N ? k : m;
        const index_t br = ob == Op::N ? k : n, bc = ob == Op::N ? n : k;
        lda = ar + 3, ldb = br + 1, ldc = m + 2;
        a.resize(lda * ac), b.resize(ldb * bc), c.resize(ldc * n);
        for (auto& x : a) x = pick<T>(g);
        for (auto& x : b) x = pick<T>(g);
        for (auto& x : c) x = pick<T>(g);
        ref = c;
        auto A = [&](index_t i, index_t l) {
            return oa == Op::N ? a[i + l * lda] : cala::conj_if(a[l + i * lda], oa == Op::C);
        };
        auto B = [&](index_t l, index_t j) {
            return ob == Op::N ? b[l + j * ldb] : cala::conj_if(b[j + l * ldb], ob == Op::C);
        };
        for (index_t j = 0; j < n; ++j)
            for (index_t i = 0; i < m; ++i) {
                T s{0};
                for (index_t l = 0; l < k; ++l) s += A(i, l) * B(l, j);
                ref[i + j * ldc] = alpha * s + (beta == T{0} ? T{0} : beta * c[i + j * ldc]);
            }
    }
    cala::DeviceGemmReport run(cala::DeviceGemmOptions o) {
        cala::DeviceGemmReport rep;
        o.report = &rep;
        cala::device_gemm<T>(oa, ob, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc, o);
        return rep;
    }
    double error() const {
        double e = 0, r = 0;
        for (index_t j = 0; j < n; ++j)
            for (index_t i = 0; i < m; ++i) {
                e = std::max(e, static_cast<double>(std::abs(c[i + j * ldc] - ref[i + j * ldc])));
                r = std::max(r, static_cast<double>(std::abs(ref[i + j * ldc])));
            }
        return e / std::max(r, 1.0);
    }
};

std::string hosts(int g) {
    std::string s = "host";
    for (int i = 1; i < g; ++i) s += ",host";
    return s;
}

template <class T>
cala::DeviceGemmReport check_run(Case<T>& cs, const cala::DeviceGemmOptions& o, int g) {
    const auto rep = cs.run(o);
    CHECK(cs.error() < 50 * k_eps<T>(cs.k));
    const index_t t = rep.tile;
    const auto shape = cala::device::chunked_shape(cs.m, cs.n, cs.k, t, rep.k_split, g);
    const cala::device::ChunkedPlan plan{t,           rep.b,        rep.c,       rep.d, static_cast<int>(rep.lookahead),
                                         rep.regime, rep.stream_c, rep.k_split};
    const auto model = cala::device::model_traffic(shape, plan, cs.beta != T{0});
    REQUIRE(rep.devices.size() == static_cast<std::size_t>(g));
    for (int d = 0; d < g; ++d) {
        CAPTURE(d);
        CAPTURE(rep.regime);
        CHECK(rep.devices[d].h2d == model[d].h2d);
        CHECK(rep.devices[d].d2d == model[d].d2d);
        CHECK(rep.devices[d].d2h == model[d].d2h);
        CHECK(rep.devices[d].peak_bytes <= rep.devices[d].budget_bytes);
        CHECK(rep.devices[d].peak_bytes <= cala::device::needed_bytes(shape, plan, sizeof(T)));
    }
    return rep;
}

}  // namespace

TEST_CASE_TEMPLATE("device_gemm matches the naive product on 1, 2, 3 host devices", T, float, double,
                   std::complex<double>) {
    const Op ops[] = {Op::N, Op::T, Op::C};
    for (int g = 1; g <= 3; ++g)
        for (Op oa : ops)
            for (Op ob : ops) {
                CAPTURE(g);
                Case<T> cs(oa, ob, 37, 29, 23, T(1.5), T(-0.5), 7);
                check_run(cs, {.devices = hosts(g), .tile = 8}, g);
            }
}

TEST_CASE("memory caps force regimes (a), (b), (c) and C larger than all device memory") {
    // m = 45, n = 61, k = 53 with tile 8: 6 x 8 tiles of C, 7 of k; none divides.
    for (int g = 1; g <= 3; ++g) {
        const cala::device::ChunkedShape shape{6, 8, 7, g};
        std::map<char, std::int64_t> first;  // smallest cap (in tiles) giving each regime
        for (std::int64_t mem = 1; mem <= 400; ++mem) {
            try {
                const auto p = cala::device::plan_chunked(shape, 8, mem, {});
                if (!first.count(p.regime)) first[p.regime] = mem;
            } catch (const cala::Error&) {
            }
        }
        CAPTURE(g);
        REQUIRE(first.count('a'));
        REQUIRE(first.count('c'));
        for (auto [regime, mem] : first) {
            CAPTURE(regime);
            Case<double> cs(Op::N, Op::T, 45, 61, 53, 1.0, 0.25, 11);
            const auto rep = check_run(
                cs, {.devices = hosts(g), .max_device_bytes = mem * 64 * 8, .tile = 8, .k_split = 1}, g);
            CHECK(rep.regime == regime);
            if (regime == 'c') CHECK(6 * 8 > g * mem);  // C (48 tiles) exceeds all device memory: c2
        }
    }
    // Regime (b) forced where it fits (rare in the automatic choice, as the seed says).
    for (int g = 1; g <= 3; ++g) {
        Case<double> cs(Op::T, Op::N, 45, 61, 53, -1.0, 1.0, 5);
        check_run(cs, {.devices = hosts(g), .max_device_bytes = 60 * 64 * 8, .tile = 8, .b = 2, .c = 3, .d = 2,
                       .lookahead = 1, .regime = 'b'},
                  g);
    }
}

TEST_CASE("C streamed under the products: chosen when C fits, forced on and off, every lookahead") {
    // 6 x 8 tiles of C, 7 of k (tile 8): C fits a HostDevice, so the plan streams C in 2 x 2 blocks.
    for (int g = 1; g <= 3; ++g) {
        CAPTURE(g);
        Case<double> cs(Op::N, Op::T, 45, 61, 53, 1.0, 0.25, 13);
        const auto rep = check_run(cs, {.devices = hosts(g), .tile = 8}, g);
        CHECK(rep.stream_c);
        CHECK(rep.regime == 'a');
        CHECK(rep.b == 3);
        CHECK(rep.d == 1);
        CHECK(rep.lookahead == 3);
        Case<double> off(Op::N, Op::T, 45, 61, 53, 1.0, 0.25, 13);
        CHECK_FALSE(check_run(off, {.devices = hosts(g), .tile = 8, .stream_c = 0}, g).stream_c);
        CHECK(off.c == cs.c);  // the same products in the same order per tile: bitwise equal
        for (int la = 0; la <= 4; ++la) {
            CAPTURE(la);
            for (double beta : {0.0, -1.5}) {
                Case<double> f(Op::T, Op::N, 45, 61, 53, 2.0, beta, 17 + la);
                if (beta == 0.0) std::fill(f.c.begin(), f.c.end(), std::nan(""));
                const auto r = check_run(f, {.devices = hosts(g), .tile = 8, .b = 2, .c = 3, .d = 2, .lookahead = la,
                                            .stream_c = 1}, g);
                CHECK(r.stream_c);
            }
        }
    }
    // Where C does not fit, or another regime is forced, it is not chosen; forcing it there fails.
    Case<double> small(Op::N, Op::N, 45, 61, 53, 1.0, 1.0, 19), forced_b(Op::N, Op::N, 45, 61, 53, 1.0, 1.0, 23);
    CHECK_FALSE(check_run(small, {.devices = "host", .max_device_bytes = 30 * 64 * 8, .tile = 8}, 1).stream_c);
    CHECK_FALSE(check_run(forced_b, {.devices = "host", .tile = 8, .regime = 'b'}, 1).stream_c);
    CHECK_THROWS_AS(small.run({.devices = "host", .max_device_bytes = 30 * 64 * 8, .tile = 8, .stream_c = 1}),
                    cala::Error);
    CHECK_THROWS_AS(small.run({.devices = "host", .tile = 8, .stream_c = 2}), cala::Error);
}

TEST_CASE("Accumulator: C stays on the devices across updates, read once, written back once") {
    // C := alpha·A·B + beta·C as three updates along k (16, 16, 9 of k = 41), tile 8.
    for (int g = 1; g <= 3; ++g)
        for (double beta : {0.0, -0.5}) {
            CAPTURE(g);
            CAPTURE(beta);
            Case<double> cs(Op::N, Op::N, 45, 61, 41, 1.5, beta, 29 + g);
            if (beta == 0.0) std::fill(cs.c.begin(), cs.c.end(), std::nan(""));
            const cala::DeviceGemmOptions o{.devices = hosts(g), .tile = 8};
            auto devs = cala::device::make_devices(o.devices, 0);
            std::vector<cala::device::Device*> raw;
            for (auto& d : devs) raw.push_back(d.get());
            cala::reset_device_traffic();
            cala::DeviceTraffic want;
            {
                cala::device::Accumulator<double> acc(cs.m, cs.n, cs.c.data(), cs.ldc, o);
                index_t k0 = 0;
                for (index_t w : {16, 16, 9}) {
                    acc.update(Op::N, Op::N, w, cs.alpha, cs.a.data() + k0 * cs.lda, cs.lda, cs.b.data() + k0, cs.ldb,
                               k0 == 0 ? cs.beta : 1.0);
                    CHECK(acc.holds_c());
                    const auto lp = cala::device::accumulate_plan(cs.m, cs.n, w, sizeof(double), o, raw);
                    REQUIRE(lp.has_value());
                    CHECK(lp->plan.b == 6);
                    CHECK(lp->plan.c == 8);
                    for (const auto& t : cala::device::model_traffic(lp->shape, lp->plan,
                                                                     k0 == 0 && beta != 0.0, false))
                        want.h2d += t.h2d, want.d2d += t.d2d, want.d2h += t.d2h;
                    k0 += w;
                }
                acc.finish();
                CHECK_FALSE(acc.holds_c());
                acc.finish();  // nothing held: nothing moves
            }
            want.d2h += 6 * 8;  // every C tile back once
            CHECK(cs.error() < 50 * k_eps<double>(cs.k));
            const auto dt = cala::device_traffic_total();
            CHECK(dt.h2d == want.h2d);
            CHECK(dt.d2d == want.d2d);
            CHECK(dt.d2h == want.d2h);
        }
    // An update with k = 0 (beta only) sends C back first and scales it on the host; a node's
    // units are not devices.
    Case<double> cs(Op::N, Op::N, 20, 17, 10, 1.0, 2.0, 41);
    {
        cala::device::Accumulator<double> acc(cs.m, cs.n, cs.c.data(), cs.ldc, {.devices = "host", .tile = 8});
        acc.update(Op::N, Op::N, 10, 1.0, cs.a.data(), cs.lda, cs.b.data(), cs.ldb, 1.0);
        acc.update(Op::N, Op::N, 0, 1.0, cs.a.data(), cs.lda, cs.b.data(), cs.ldb, 0.5);
        CHECK_FALSE(acc.holds_c());
        acc.finish();
    }
    // After both: 0.5 (A·B + C0), and the reference (beta 2) is A·B + 2 C0.
    Case<double> fresh(Op::N, Op::N, 20, 17, 10, 1.0, 2.0, 41);
    double e = 0;
    for (index_t j = 0; j < cs.n; ++j)
        for (index_t i = 0; i < cs.m; ++i) {
            const auto q = static_cast<std::size_t>(i + j * cs.ldc);
            e = std::max(e, std::abs(cs.c[q] - 0.5 * (fresh.ref[q] - fresh.c[q])));
        }
    CHECK(e < 1e-12);
    CHECK_THROWS_AS(cala::device::Accumulator<double>(4, 4, cs.c.data(), cs.ldc, {.devices = "cpu,host"}),
                    cala::Error);
}

TEST_CASE("forced b, c, d and lookahead 0, 1, 2; beta == 0 does not read C") {
    for (int la = 0; la <= 2; ++la)
        for (int g = 1; g <= 3; ++g) {
            CAPTURE(la);
            Case<double> cs(Op::N, Op::N, 50, 43, 31, 2.0, 0.0, 3);
            std::fill(cs.c.begin(), cs.c.end(), std::nan(""));
            check_run(cs, {.devices = hosts(g), .tile = 7, .b = 3, .c = 2, .d = 2, .lookahead = la, .regime = 'c'}, g);
        }
}

TEST_CASE_TEMPLATE("half-depth slabs: every transpose, regime and lookahead, k the slab does not divide", T, float,
                   double, std::complex<double>) {
    const Op ops[] = {Op::N, Op::T, Op::C};
    for (int g = 1; g <= 3; ++g)
        for (Op oa : ops)
            for (Op ob : ops) {
                CAPTURE(g);
                Case<T> cs(oa, ob, 37, 29, 23, T(1.5), T(-0.5), 7);  // k = 23: slabs of 4, the last 3 deep
                const auto rep = check_run(cs, {.devices = hosts(g), .tile = 8, .k_split = 2}, g);
                CHECK(rep.k_split == 2);
            }
    // Caps in slabs of 8 x 4: every regime that fits, forced; lookahead 0-2; beta == 0 on NaN C.
    for (int g = 1; g <= 3; ++g)
        for (char regime : {'a', 'b', 'c'})
            for (int la = 0; la <= 2; ++la) {
                CAPTURE(g);
                CAPTURE(regime);
                CAPTURE(la);
                Case<double> cs(Op::T, Op::N, 45, 61, 53, 2.0, 0.0, 31 + la);
                std::fill(cs.c.begin(), cs.c.end(), std::nan(""));
                const auto rep = check_run(cs, {.devices = hosts(g), .max_device_bytes = 220 * 32 * 8, .tile = 8,
                                                .b = 2, .c = 3, .d = 2, .lookahead = la, .regime = regime, .k_split = 2},
                                           g);
                CHECK(rep.regime == regime);
                CHECK(rep.d == 4);  // d = 2 tiles of depth: 4 slabs
            }
    // A split that does not divide the tile, or a negative one: refused, C untouched.
    Case<double> bad(Op::N, Op::N, 20, 17, 10, 1.0, 2.0, 41);
    const auto c0 = bad.c;
    CHECK_THROWS_AS(bad.run({.devices = "host", .tile = 8, .k_split = 3}), cala::Error);
    CHECK_THROWS_AS(bad.run({.devices = "host", .tile = 8, .k_split = -1}), cala::Error);
    CHECK_THROWS_AS(bad.run({.devices = "host", .tile = 8, .stream_c = 1, .k_split = 2}), cala::Error);
    CHECK(bad.c == c0);
    // Quarter depth (k_split 4) runs through the same engine.
    Case<double> q(Op::N, Op::T, 37, 29, 23, 1.0, 1.0, 43);
    CHECK(check_run(q, {.devices = "host,host", .max_device_bytes = 40 * 16 * 8, .tile = 8, .k_split = 4}, 2).k_split ==
          4);
}

TEST_CASE("the planner takes half depth where C exceeds the cap and the model says it moves fewer bytes") {
    // Case c2 of docs/device.md at tile 8: 16 x 16 x 16 tiles, a cap of 64 tiles. Whole tiles fit
    // b = c = 6 with l = 1 (X = Y = 3 passes: 1536 tiles in); half-depth slabs fit b x c = 48
    // (X = 2, Y = 3 or X = 3, Y = 2: 2560 slabs = 1280 tiles in, 17% fewer bytes).
    const std::int64_t cap = 64 * 64 * 8;
    const cala::device::ChunkedShape whole_shape{16, 16, 16, 1};
    const auto whole = cala::device::plan_chunked(whole_shape, 8, 64, {});
    CHECK(whole.b * whole.c == 36);
    CHECK(cala::device::model_bytes(whole_shape, whole, false, 8) == (1536 + 256) * 64 * 8);
    for (int g = 1; g <= 2; ++g) {
        CAPTURE(g);
        Case<double> cs(Op::N, Op::N, 128, 128, 128, 1.0, 0.0, 47);
        std::fill(cs.c.begin(), cs.c.end(), std::nan(""));
        const auto rep = check_run(cs, {.devices = hosts(g), .max_device_bytes = cap, .tile = 8}, g);
        CHECK(rep.k_split == 2);
        CHECK(rep.lookahead >= 1);
        std::int64_t in = 0;
        for (const auto& d : rep.devices) {
            in += d.h2d + d.d2d;
            CHECK(d.peak_bytes <= cap);
        }
        if (g == 1) CHECK(in == 2560);
        const auto shape = cala::device::chunked_shape(128, 128, 128, 8, 2, g);
        const cala::device::ChunkedPlan plan{8, rep.b, rep.c, rep.d, static_cast<int>(rep.lookahead), rep.regime,
                                             false, 2};
        CHECK(20 * cala::device::model_bytes(shape, plan, false, 8) <
              19 * cala::device::model_bytes(cala::device::chunked_shape(128, 128, 128, 8, 1, g),
                                             cala::device::plan_chunked({16, 16, 16, g}, 8, 64, {}), false, 8));
        // Forced whole tiles: the old plan, the same product.
        Case<double> w(Op::N, Op::N, 128, 128, 128, 1.0, 0.0, 47);
        CHECK(check_run(w, {.devices = hosts(g), .max_device_bytes = cap, .tile = 8, .k_split = 1}, g).k_split == 1);
    }
    // Where C fits, whole tiles stay.
    Case<double> fits(Op::N, Op::N, 45, 61, 53, 1.0, 0.25, 13);
    CHECK(check_run(fits, {.devices = "host", .tile = 8}, 1).k_split == 1);
    // Nothing with half depth fits 3 slabs (C alone takes 2, one product 2 more).
    CHECK_THROWS_AS(cala::device::plan_half_depth({16, 16, 32, 1}, 8, 3, {}), cala::Error);
}

TEST_CASE("the model is the seed's equation (1) where the tile and G divide") {
    // Mt = Nt = Kt = 8 tiles, G = 2, b = c = 4, d = 2: X = Y = 2.
    const cala::device::ChunkedShape s{8, 8, 8, 2};
    const std::int64_t M = 8, N = 8, K = 8, G = 2, X = 2, Y = 2;
    for (char r : {'a', 'b', 'c'}) {
        const auto t = cala::device::model_traffic(s, {8, 4, 4, 2, 1, r}, false);
        for (int g = 0; g < 2; ++g) {
            const std::int64_t in = t[g].h2d + t[g].d2d + t[g].d2h;  // C counted once, as in (1)
            const std::int64_t eq1 = r == 'a'   ? M * K + K * N / G + M * N / G
                                     : r == 'b' ? Y * M * K + K * N / G + M * N / G
                                                : Y * M * K + X * K * N / G + M * N / G;
            CHECK(in == eq1);
        }
        CHECK(t[0].d2d == 0);  // device 0 loads A from the host, device 1 copies it from device 0
        CHECK(t[1].d2d == (r == 'a' ? M * K : Y * M * K));
    }
}

TEST_CASE("degenerate sizes and errors") {
    Case<double> cs(Op::N, Op::N, 9, 5, 0, 1.0, 3.0);
    cs.run({.devices = "host,host"});
    CHECK(cs.error() == 0);
    Case<double> e(Op::N, Op::N, 40, 40, 40, 1.0, 1.0);
    // Two tiles: whole tiles need three (C, A, B), half-depth slabs fit (C, an A and a B slab);
    // one tile fits neither.
    const auto two = check_run(e, {.devices = "host", .max_device_bytes = 64 * 8 * 2, .tile = 8}, 1);
    CHECK(two.k_split == 2);
    CHECK_THROWS_AS(e.run({.devices = "host", .max_device_bytes = 64 * 8 * 2, .tile = 8, .k_split = 1}), cala::Error);
    CHECK_THROWS_AS(e.run({.devices = "host", .max_device_bytes = 64 * 8, .tile = 8}), cala::Error);
    CHECK_THROWS_AS(e.run({.devices = "hots"}), cala::Error);
    double x = 0;
    CHECK_THROWS_AS(cala::device_gemm<double>(Op::N, Op::N, 4, 4, 4, 1.0, &x, 3, &x, 4, 0.0, &x, 4), cala::Error);
}

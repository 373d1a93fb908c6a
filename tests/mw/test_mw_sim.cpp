// The master-worker simulator without MPI: layouts, the paper's Table 2 platform, homogeneous
// platforms (Section 4's worker count), the steady-state bound, traffic and memory of plans.

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <random>

#include "cala/mw.hpp"
#include "../support/helpers.hpp"

using namespace cala;
using mw::Platform;
using mw::Strategy;

namespace {

Platform random_platform(std::mt19937& g, int p, index_t q) {
    std::uniform_real_distribution<double> u(1, 4);
    Platform pl{q, {}};
    for (int i = 0; i < p; ++i)
        pl.workers.push_back({1e-3 * u(g), 1e-4 * u(g), 5 + static_cast<std::int64_t>(g() % 60)});
    return pl;
}


}  // namespace

TEST_CASE(
    "memory layouts: mu^2 + 4 mu <= m for the largest mu, 3 beta^2 <= m for the largest beta") {
    CHECK(mw::mu_of(4) == 0);
    CHECK(mw::mu_of(5) == 1);
    CHECK(mw::mu_of(21) ==
          3);  // the paper's Figure 2 example without double buffering has mu = 4 at m = 21
    for (std::int64_t m = 0; m < 5000; ++m) {
        const std::int64_t mu = mw::mu_of(m), beta = mw::bmm_side_of(m);
        CHECK(mu * mu + 4 * mu <= m);
        CHECK((mu + 1) * (mu + 1) + 4 * (mu + 1) > m);
        CHECK(3 * beta * beta <= m);
        CHECK(3 * (beta + 1) * (beta + 1) > m);
    }
}

TEST_CASE("Table 2: the steady-state bound is bandwidth-centric, and not reachable with mu = 2") {
    // P1: c = 1, w = 2; P2: c = x, w = 2x; mu = 2 for both (m = 12): 2c/(mu w) = 1/2 each.
    for (double x : {1.0, 3.0, 10.0, 100.0}) {
        CAPTURE(x);
        const Platform p{10, {{1, 2, 12}, {x, 2 * x, 12}}};
        const index_t m = 400, n = 4000, k = 400;  // 40 x 400 blocks of C, t = 40

        const mw::SteadyState ss = mw::steady_state(p, m, n, k);
        const mw::Prediction het = mw::simulate(p, m, n, k, Strategy::Het);

        CHECK(ss.throughput == doctest::Approx(0.5 + 0.5 / x));
        CHECK(ss.x[0] == doctest::Approx(0.5));
        CHECK(ss.x[1] == doctest::Approx(0.5 / x));
        CHECK(ss.makespan_bound_s == doctest::Approx(40.0 * 400 * 40 / (0.5 + 0.5 / x)));
        const double throughput = het.block_updates / het.makespan_s;
        CHECK(throughput < ss.throughput);
        CHECK(throughput > 0.9 * 0.5);  // at least P1 alone, less its C traffic and pipeline fill
        if (x >= 10) {
            CHECK(het.enrolled == std::vector<int>{0});  // P2's steps would starve P1's buffers
            CHECK(throughput < 0.5);  // so the bound's 0.5 + 0.5/x stays out of reach
        }
    }
}

TEST_CASE("homogeneous platforms: Hom enrolls min(p, ceil(mu q / 2 · tau_a / tau_c)) workers") {
    const index_t q = 8;
    for (int p = 1; p <= 8; ++p)
        for (std::int64_t mem : {5, 21, 45})
            for (double ratio : {0.3, 1.0, 2.5, 4.0, 9.0}) {
                // tau_c = 1e-6 s per element moved, tau_a = ratio·tau_c / q per multiply-add.
                const double tau_c = 1e-6, tau_a = ratio * tau_c / q;
                const double c = q * q * tau_c, w = q * q * q * tau_a;
                const Platform pl{q, std::vector<mw::Worker>(p, mw::Worker{c, w, mem})};
                const std::int64_t mu = mw::mu_of(mem);
                const int want = std::min<int>(
                    p, static_cast<int>(std::ceil(mu * q / 2.0 * tau_a / tau_c - 1e-9)));
                CAPTURE(p);
                CAPTURE(mu);
                CAPTURE(ratio);

                // Wide enough that every enrolled worker gets panels: s = 8·mu·p block columns.
                const mw::Prediction hom =
                    mw::simulate(pl, 4 * mu * q, 8 * mu * p * q, 6 * q, Strategy::Hom);

                CHECK(static_cast<int>(hom.enrolled.size()) == want);
            }
}

TEST_CASE(
    "every strategy on random platforms: above the steady-state bound, within memory, one port") {
    std::mt19937 g(7);
    for (int trial = 0; trial < 12; ++trial) {
        const Platform pl = random_platform(g, 1 + trial % 6, 4 + g() % 5);
        const index_t m = 1 + g() % 120, n = 1 + g() % 200, k = 1 + g() % 90;
        const mw::SteadyState ss = mw::steady_state(pl, m, n, k);
        for (const mw::Prediction& pr : mw::simulate_all(pl, m, n, k)) {
            CAPTURE(trial);
            CAPTURE(mw::to_string(pr.strategy));
            CHECK(pr.makespan_s >= ss.makespan_bound_s * (1 - 1e-12));
            CHECK(pr.port_busy_s <= pr.makespan_s * (1 + 1e-12));
            CHECK(!pr.enrolled.empty());
            for (std::size_t i = 0; i < pl.workers.size(); ++i)
                CHECK(pr.blocks[i] <= pl.workers[i].m);
            // Every element of C goes out and comes back once; every product needs A and B.
            CHECK(pr.traffic.data_words_recv == m * n);
            CHECK(pr.traffic.data_words_sent >= m * n + k * (m + n));
            const mw::Prediction again = mw::simulate(pl, m, n, k, pr.strategy);
            CHECK(again.makespan_s == pr.makespan_s);
            CHECK(again.enrolled == pr.enrolled);
        }
    }
}

TEST_CASE(
    "Het is the best of its 8 variants and close to the best strategy on the paper's classes") {
    // Memory heterogeneity (2 x 256, 4 x 512, 2 x 1024 MB of 80 x 80 double blocks), links
    // (2 x c, 4 x 2c, 2 x 10c) and compute (2 x w, 4 x 2w, 2 x 4w); A 8000 x 8000, B 8000 x 80000.
    const double c = 8e-3, w = 0.34e-3;
    const std::int64_t mb = 80 * 80 * 8;
    auto mem = [&](std::int64_t mib) { return (mib << 20) / mb; };
    std::vector<Platform> classes(3, Platform{80, {}});
    for (int i = 0; i < 8; ++i) {
        const int g = i < 2 ? 0 : i < 6 ? 1 : 2;
        classes[0].workers.push_back({c, w, mem(256 << g)});
        classes[1].workers.push_back({c * (g == 0 ? 1 : g == 1 ? 2 : 10), w, mem(1024)});
        classes[2].workers.push_back({c, w * (1 << g), mem(1024)});
    }
    for (const Platform& p : classes) {
        const auto all = mw::simulate_all(p, 8000, 80000, 8000);
        double best = INFINITY;
        for (const auto& pr : all) best = std::min(best, pr.makespan_s);

        CHECK(all[0].strategy == Strategy::Het);
        CHECK(all[0].makespan_s <= 1.05 * best);
        CHECK(all[0].makespan_s <= 0.8 * all[6].makespan_s);  // BMM
        CHECK(all[0].enrolled.size() < p.workers.size());     // resource selection
    }
}

TEST_CASE("bad platforms name the worker") {
    const Platform ok{16, {{1e-3, 1e-4, 21}, {1e-3, 1e-4, 21}, {1e-3, 1e-4, 21}}};
    Platform small = ok;
    small.workers[2].m = 4;
    Platform slow = ok;
    slow.workers[1].w = 0;
    Platform none{16, {}};

    CHECK(test::error_message([&] { mw::simulate(small, 10, 10, 10, Strategy::Het); }) ==
          "mw::simulate: worker 2 (rank 3) has memory for 4 blocks of 16x16, but one step of the "
          "maximum re-use "
          "layout needs 5 (mu^2 + 4 mu with mu = 1)");
    CHECK(test::error_message([&] {
              mw::simulate(slow, 10, 10, 10, Strategy::Het);
          }).find("worker 1 (rank 2) has compute cost") != std::string::npos);
    CHECK(test::error_message([&] { mw::simulate(none, 10, 10, 10, Strategy::Het); }) ==
          "mw::simulate: no workers (the platform has none)");
    CHECK(test::error_message([&] { mw::simulate(ok, -1, 10, 10, Strategy::Het); }).find("must be >= 0") !=
          std::string::npos);
    CHECK(test::error_message([&] { mw::strategy_from_string("fastest"); }).find("'fastest'") !=
          std::string::npos);
    CHECK(mw::strategy_from_string("oddoml") == Strategy::ODDOML);
    CHECK(test::error_message([&] { mw::simulate(ok, 10, 10, 10, Strategy::Het); }).empty());
}

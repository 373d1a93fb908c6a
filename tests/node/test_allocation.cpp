// Node allocation (issue 19), pure functions: NRRP's continuous partition against the 2/√3 bound,
// ROUNDED and PRECISE discretizations, the column-block and cyclic baselines, bad speeds.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <vector>

#include "cala/error.hpp"
#include "cala/node.hpp"

using cala::index_t;
namespace node = cala::node;

namespace {

double lower_bound(const std::vector<double>& s) {
    const double sum = std::accumulate(s.begin(), s.end(), 0.0);
    double lb = 0;
    for (double x : s) lb += 2 * std::sqrt(x / sum);
    return lb;
}

// Random speed vectors of 1..12 units: uniform, log-uniform over 4 decades, GPU-like classes.
std::vector<double> random_speeds(std::mt19937& g, int trial) {
    std::uniform_int_distribution<int> count(1, 12);
    const int m = count(g);
    std::vector<double> s(static_cast<std::size_t>(m));
    std::uniform_real_distribution<double> u(0.01, 1), lg(-4 * std::log(10.0), 0);
    const double classes[] = {1, 2, 4, 8, 16, 40};
    std::uniform_int_distribution<int> cls(0, 5);
    for (auto& x : s) x = trial % 3 == 0 ? u(g) : trial % 3 == 1 ? std::exp(lg(g)) : classes[cls(g)];
    return s;
}

// Area of unit u's zone.
double area(const std::vector<node::Rect>& z, int u) {
    double a = 0;
    for (const auto& r : z)
        if (r.unit == u) a += (r.x1 - r.x0) * (r.y1 - r.y0);
    return a;
}

// Independent check of ROUNDED: tile (i, j) is in a rectangle's rounded range iff
// x0 < i + 1/2 <= x1 (halves round up), likewise for j.
int rounded_owner(const std::vector<node::Rect>& z, index_t i, index_t j, int* hits) {
    int o = -1;
    *hits = 0;
    for (const auto& r : z) {
        const double ci = static_cast<double>(i) + 0.5, cj = static_cast<double>(j) + 0.5;
        if (r.x0 < ci && ci <= r.x1 && r.y0 < cj && cj <= r.y1) o = r.unit, ++*hits;
    }
    return o;
}

}  // namespace

TEST_CASE("nrrp: zones have the right areas and tile the unit square; half-perimeters within 2/sqrt(3) of the bound") {
    const unsigned seed = std::random_device{}();
    std::printf("test_allocation: nrrp seed %u\n", seed);
    std::mt19937 g(seed);
    double worst = 0;
    for (int trial = 0; trial < 600; ++trial) {
        const auto s = random_speeds(g, trial);
        const double sum = std::accumulate(s.begin(), s.end(), 0.0);

        const auto z = node::nrrp(s);

        double total = 0;
        for (const auto& r : z) {
            CHECK(r.x0 >= 0.0);
            CHECK(r.y0 >= 0.0);
            CHECK(r.x1 <= 1.0);
            CHECK(r.y1 <= 1.0);
            CHECK(r.x0 <= r.x1);
            CHECK(r.y0 <= r.y1);
            total += (r.x1 - r.x0) * (r.y1 - r.y0);
        }
        CHECK(total == doctest::Approx(1.0).epsilon(1e-12));
        for (int u = 0; u < static_cast<int>(s.size()); ++u) CHECK(area(z, u) == doctest::Approx(s[u] / sum).epsilon(1e-9));
        const double ratio = node::half_perimeter_sum(z, static_cast<int>(s.size())) / lower_bound(s);
        CHECK(ratio >= 1.0 - 1e-12);
        CHECK(ratio <= 2.0 / std::sqrt(3.0) + 1e-12);
        worst = std::max(worst, ratio);
    }
    std::printf("test_allocation: worst half-perimeter ratio over 600 vectors %.4f (bound %.4f)\n", worst,
                2.0 / std::sqrt(3.0));
}

TEST_CASE("nrrp: a single unit gets the square, two equal units halves, one dominant unit an L") {
    const std::vector<double> one{3.0}, two{1.0, 1.0}, skew{1.0, 20.0};

    const auto z1 = node::nrrp(one), z2 = node::nrrp(two), z3 = node::nrrp(skew);

    CHECK(node::half_perimeter_sum(z1, 1) == doctest::Approx(2.0));
    CHECK(node::half_perimeter_sum(z2, 2) == doctest::Approx(3.0));
    // Square corner: the big unit's projections are the whole square, the small one a square.
    CHECK(node::half_perimeter_sum(z3, 2) == doctest::Approx(2.0 + 2.0 * std::sqrt(1.0 / 21.0)));
}

TEST_CASE("rounded and precise cover every tile exactly once; precise gives each unit its share exactly") {
    std::mt19937 g(7);
    const std::vector<std::pair<index_t, index_t>> grids{{1, 1}, {2, 3}, {5, 5}, {8, 8}, {16, 16}, {7, 13}, {20, 6}, {32, 32}};
    for (int trial = 0; trial < 200; ++trial) {
        auto s = random_speeds(g, trial);
        if (s.size() > 6) s.resize(6);
        for (auto [mt, nt] : grids) {
            CAPTURE(trial);
            CAPTURE(mt);
            CAPTURE(nt);
            const int units = static_cast<int>(s.size());
            const auto z = node::nrrp(s, static_cast<double>(mt), static_cast<double>(nt));

            const auto r = node::rounded(z, units, mt, nt);
            const auto p = node::precise(z, s, mt, nt);

            const auto share = node::precise_shares(s, mt * nt);
            CHECK(std::accumulate(share.begin(), share.end(), index_t{0}) == mt * nt);
            index_t sum_r = 0, sum_p = 0;
            for (int u = 0; u < units; ++u) {
                CHECK(p.tiles(u) == share[u]);
                sum_r += r.tiles(u), sum_p += p.tiles(u);
            }
            CHECK(sum_r == mt * nt);
            CHECK(sum_p == mt * nt);
            for (index_t j = 0; j < nt; ++j)
                for (index_t i = 0; i < mt; ++i) {
                    int hits = 0;
                    const int o = rounded_owner(z, i, j, &hits);
                    REQUIRE(hits == 1);
                    CHECK(r.owner(i, j) == o);
                    CHECK(p.owner(i, j) >= 0);
                    CHECK(p.owner(i, j) < units);
                }
        }
    }
}

TEST_CASE("precise: shares by rounded partial sums; every inner-rectangle tile kept by its unit when owed") {
    const std::vector<double> s{1, 4, 4, 8};

    const auto n = node::precise_shares(s, 256);
    const auto z = node::nrrp(s, 16, 16);
    const auto p = node::precise(z, s, 16, 16);

    // 256/17 = 15.06 -> 15; 5·256/17 = 75.3 -> 75: 60; 9·256/17 = 135.5 -> 136: 61; 256: 120.
    CHECK(n == std::vector<index_t>{15, 60, 61, 120});
    index_t inner_kept = 0, inner = 0;
    for (const auto& r : z)
        for (index_t j = static_cast<index_t>(std::ceil(r.y0)); j < static_cast<index_t>(std::floor(r.y1)); ++j)
            for (index_t i = static_cast<index_t>(std::ceil(r.x0)); i < static_cast<index_t>(std::floor(r.x1)); ++i)
                ++inner, inner_kept += p.owner(i, j) == r.unit;
    CHECK(inner > 0);
    // A unit whose inner tiles outnumber its share gives up only the excess.
    index_t excess = 0;
    for (int u = 0; u < 4; ++u) {
        index_t in_u = 0;
        for (const auto& r : z)
            if (r.unit == u)
                in_u += std::max<index_t>(0, static_cast<index_t>(std::floor(r.x1)) - static_cast<index_t>(std::ceil(r.x0))) *
                        std::max<index_t>(0, static_cast<index_t>(std::floor(r.y1)) - static_cast<index_t>(std::ceil(r.y0)));
        excess += std::max<index_t>(0, in_u - n[u]);
    }
    CHECK(inner_kept == inner - excess);
}

TEST_CASE("projections: NRRP moves fewer A and B tiles than column blocks for skewed speeds") {
    const std::vector<double> s{1, 4, 4, 8};
    const index_t nt = 32;

    const auto a = node::nrrp_allocation(s, nt, nt, node::Discretization::Rounded);
    const auto c = node::column_blocks(s, nt, nt);
    const auto y = node::cyclic_columns(4, nt, nt);

    index_t pa = 0, pc = 0, py = 0;
    for (int u = 0; u < 4; ++u) pa += a.rows(u) + a.cols(u), pc += c.rows(u) + c.cols(u), py += y.rows(u) + y.cols(u);
    CHECK(pc == 4 * nt + nt);  // every unit needs every row of A, the columns split
    CHECK(py == 4 * nt + nt);
    CHECK(pa < pc);
    const auto w = node::precise_shares(s, nt);
    for (int u = 0; u < 4; ++u) CHECK(c.cols(u) == w[u]);
    for (index_t j = 0; j < nt; ++j) CHECK(y.owner(5, j) == static_cast<int>(j % 4));
}

TEST_CASE("empty and tiny grids") {
    const std::vector<double> s{1, 4, 4, 8};
    for (auto d : {node::Discretization::Rounded, node::Discretization::Precise}) {
        const auto e = node::nrrp_allocation(s, 0, 5, d);
        CHECK(e.tiles(0) == 0);
        const auto one = node::nrrp_allocation(s, 1, 1, d);
        index_t sum = 0;
        for (int u = 0; u < 4; ++u) sum += one.tiles(u);
        CHECK(sum == 1);
    }
    // The partial sums 1/17, 5/17, 9/17 round to 0, 0, 1: the one tile goes to unit 2.
    CHECK(node::precise(node::nrrp(s, 1, 1), s, 1, 1).tiles(2) == 1);
}

TEST_CASE("bad speeds: zero, negative, NaN, infinite, none, more speeds than units") {
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    for (double bad : {0.0, -1.0, nan, inf}) {
        const std::vector<double> s{1.0, bad, 2.0};
        CHECK_THROWS_WITH_AS(node::nrrp(s), doctest::Contains("speeds[1]"), cala::Error);
        CHECK_THROWS_WITH_AS(node::precise_shares(s, 10), doctest::Contains("speeds[1]"), cala::Error);
        CHECK_THROWS_WITH_AS(node::column_blocks(s, 3, 3), doctest::Contains("speeds[1]"), cala::Error);
        CHECK_THROWS_AS(node::nrrp_allocation(s, 3, 3, node::Discretization::Precise), cala::Error);
    }
    CHECK_THROWS_WITH_AS(node::nrrp(std::vector<double>{}), doctest::Contains("no speeds"), cala::Error);
    const std::vector<double> three{1, 2, 3};
    CHECK_THROWS_WITH_AS(node::check_speeds(three, 2, "gemm"), doctest::Contains("more speeds than units"), cala::Error);
    CHECK_NOTHROW(node::check_speeds(three, 3, "gemm"));
    CHECK_THROWS_AS(node::nrrp_allocation(three, -1, 3, node::Discretization::Rounded), cala::Error);
}

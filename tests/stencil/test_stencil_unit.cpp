// cala::stencil without MPI: domain arithmetic, stencils, the model on hand-counted cases, and the
// local sweep kernel (any blocking, any thread count) bit for bit against a plain loop.

#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <vector>

#include "cala/error.hpp"
#include "cala/stencil.hpp"
#include "stencil/sweep.hpp"

using cala::Boundary;
using cala::index_t;
using cala::StencilCost;
using cala::StencilDomain;
using cala::StencilShape;

namespace {
constexpr Boundary D = Boundary::Dirichlet, P = Boundary::Periodic;
}

TEST_CASE("domain: uneven block split, coordinates and neighbours") {
    const StencilDomain d = StencilDomain::make_3d(23, 10, 7, 4, 3, 2, P, D, P);
    CHECK(d.check().empty());
    CHECK(d.nranks() == 24);
    index_t sum = 0;
    for (int c = 0; c < 4; ++c) {
        CHECK(d.lo(0, c) == sum);
        sum += d.extent(0, c);
    }
    CHECK(sum == 23);
    CHECK(d.extent(0, 0) == 6);
    CHECK(d.extent(0, 3) == 5);
    CHECK(d.min_extent(0) == 5);
    CHECK(d.min_extent(2) == 3);
    for (int r = 0; r < 24; ++r) CHECK(d.rank_of(d.coords_of(r)) == r);
    CHECK(d.neighbor({0, 0, 0}, {-1, 0, 0}) == d.rank_of({3, 0, 0}));  // periodic x wraps
    CHECK(d.neighbor({0, 0, 0}, {0, -1, 0}) == -1);                     // Dirichlet y
    CHECK(d.neighbor({0, 2, 1}, {0, 1, 0}) == -1);
    CHECK(d.neighbor({1, 1, 1}, {1, 1, 1}) == d.rank_of({2, 2, 0}));   // periodic z wraps
    CHECK(StencilDomain::make_2d(5, 5, 6, 1).check().find("at least one point") != std::string::npos);
    CHECK(StencilDomain::make_2d(0, 5, 1, 1).check().find("n along x is 0") != std::string::npos);
}

TEST_CASE("stencils: presets, shapes and orders") {
    const auto five = cala::Stencil<double>::five_point();
    CHECK(five.points().size() == 5);
    CHECK(five.radius() == 1);
    CHECK(five.is_star());
    CHECK(five.points()[1].dx == -1);
    CHECK(five.points()[4].dy == 1);
    const auto nine = cala::Stencil<float>::preset("9pt");
    CHECK(nine.points().size() == 9);
    CHECK_FALSE(nine.is_star());
    CHECK(nine.points()[4].coef == 0.5f);
    const auto t27 = cala::Stencil<double>::twenty_seven_point();
    double sum = 0;
    for (const auto& p : t27.points()) sum += p.coef;
    CHECK(sum == doctest::Approx(1.0));
    CHECK(cala::Stencil<double>::seven_point().shape().dim == 3);
    const std::vector<double> c(13, 0.1);
    const auto s3 = cala::Stencil<double>::star(3, 2, c);
    CHECK(s3.radius() == 2);
    CHECK(s3.is_star());
    const auto custom = cala::Stencil<double>(2, {{0, 0, 0, 1.0}, {2, 1, 0, 0.5}});
    CHECK(custom.radius() == 2);
    CHECK_FALSE(custom.is_star());
    CHECK_THROWS_AS(cala::Stencil<double>::box(2, 1, c), cala::Error);
}

TEST_CASE("model: 2D 5-point and 9-point on an interior periodic rank, counted by hand") {
    // 40 x 30 over 2 x 3: rank (0, 1) owns 20 x 10; both x neighbours are the same rank, but
    // they are two messages.
    const StencilDomain d = StencilDomain::make_2d(40, 30, 2, 3, P, P);
    const StencilShape star{2, 1, true}, box{2, 1, false};

    const StencilCost s1 = cala::stencil_cost(d, {0, 1, 0}, star, 1, 1);
    CHECK(s1.msgs_sent == 4);
    CHECK(s1.words_sent == 2 * 10 + 2 * 20);
    CHECK(s1.msgs == 8);
    CHECK(s1.words == 120);
    CHECK(s1.updates == 200);
    CHECK(s1.redundant_updates == 0);

    // Width 2: the x faces, then the y faces grown by the x halo (the corners ride in them).
    const StencilCost s2 = cala::stencil_cost(d, {0, 1, 0}, star, 2, 2);
    CHECK(s2.msgs_sent == 4);
    CHECK(s2.words_sent == 2 * (2 * 10) + 2 * ((20 + 2 + 2) * 2));
    CHECK(s2.updates == 22 * 12 + 200);
    CHECK(s2.redundant_updates == 22 * 12 - 200);
    CHECK(s2.exchanges == 1);

    const StencilCost b1 = cala::stencil_cost(d, {1, 2, 0}, box, 1, 3);
    CHECK(b1.msgs_sent == 3 * 4);
    CHECK(b1.words_sent == 3 * (2 * 10 + 2 * (20 + 1 + 1)));  // a box reads corners at once
    CHECK(b1.exchanges == 3);

    // 7 steps at depth 3: cycles of 3, 3 and 1.
    const StencilCost s7 = cala::stencil_cost(d, {0, 1, 0}, star, 3, 7);
    const StencilCost c3 = cala::stencil_cost(d, {0, 1, 0}, star, 3, 3);
    CHECK(s7.exchanges == 3);
    CHECK(s7.msgs == 2 * c3.msgs + s1.msgs);
    CHECK(s7.words == 2 * c3.words + s1.words);
    CHECK(s7.redundant_updates == 2 * c3.redundant_updates);
    CHECK(c3.redundant_updates == (24 * 14 - 200) + (22 * 12 - 200));
}

TEST_CASE("model: Dirichlet sides send nothing and grow nothing") {
    const StencilDomain d = StencilDomain::make_2d(40, 30, 2, 3, D, D);
    const StencilShape star{2, 1, true};
    const StencilCost corner = cala::stencil_cost(d, {0, 0, 0}, star, 2, 2);
    CHECK(corner.msgs_sent == 2);  // +x, then +y grown by the +x halo only
    CHECK(corner.words_sent == 10 * 2 + (20 + 2) * 2);
    CHECK(corner.redundant_updates == 21 * 11 - 200);
    const StencilCost edge = cala::stencil_cost(d, {0, 1, 0}, star, 2, 2);
    CHECK(edge.msgs_sent == 3);
    CHECK(edge.words_sent == 10 * 2 + 2 * (20 + 2) * 2);
    CHECK(edge.redundant_updates == 21 * 12 - 200);
    // One rank: Dirichlet, nothing; periodic, the halo comes from itself: no message either.
    const StencilCost alone_d = cala::stencil_cost(StencilDomain::make_2d(8, 8, 1, 1, D, D), {0, 0, 0}, star, 4, 8);
    const StencilCost alone_p = cala::stencil_cost(StencilDomain::make_2d(8, 8, 1, 1, P, P), {0, 0, 0}, star, 4, 8);
    CHECK(alone_d.msgs == 0);
    CHECK(alone_d.redundant_updates == 0);
    CHECK(alone_p.msgs == 0);
    CHECK(alone_p.redundant_updates == 2 * ((14 * 14 - 64) + (12 * 12 - 64) + (10 * 10 - 64)));
}

TEST_CASE("model: 3D faces only; a star grows its later faces from 2 steps on, a box always") {
    const StencilDomain d = StencilDomain::make_3d(30, 30, 30, 3, 3, 3, P, P, P);
    const StencilShape star{3, 1, true}, box{3, 1, false};
    const std::array<int, 3> mid{1, 1, 1};
    CHECK(cala::stencil_cost(d, mid, star, 1, 1).msgs_sent == 6);
    CHECK(cala::stencil_cost(d, mid, star, 1, 1).words_sent == 600);
    // x faces w x 10 x 10; y faces (10 + 2w) x w x 10; z faces (10 + 2w) x (10 + 2w) x w.
    CHECK(cala::stencil_cost(d, mid, star, 2, 2).msgs_sent == 6);
    CHECK(cala::stencil_cost(d, mid, star, 2, 2).words_sent == 2 * 200 + 2 * 14 * 20 + 2 * 14 * 14 * 2);
    CHECK(cala::stencil_cost(d, mid, star, 3, 3).msgs_sent == 6);
    // = the 6 faces, 12 edges and 8 corners of width 3 that 26 messages would carry
    CHECK(cala::stencil_cost(d, mid, star, 3, 3).words_sent == 6 * 300 + 12 * 9 * 10 + 8 * 27);
    CHECK(cala::stencil_cost(d, mid, box, 1, 1).msgs_sent == 6);
    CHECK(cala::stencil_cost(d, mid, box, 1, 1).words_sent == 600 + 120 + 8);
    // A 1-rank periodic x (copies to oneself) still grows the y and z faces; a Dirichlet one not.
    const StencilDomain px = StencilDomain::make_3d(10, 30, 30, 1, 3, 3, P, P, P);
    const StencilDomain dx = StencilDomain::make_3d(10, 30, 30, 1, 3, 3, D, P, P);
    CHECK(cala::stencil_cost(px, {0, 1, 1}, box, 1, 1).msgs_sent == 4);
    CHECK(cala::stencil_cost(px, {0, 1, 1}, box, 1, 1).words_sent == 2 * (12 * 10) + 2 * (12 * 12));
    CHECK(cala::stencil_cost(dx, {0, 1, 1}, box, 1, 1).msgs_sent == 4);
    CHECK(cala::stencil_cost(dx, {0, 1, 1}, box, 1, 1).words_sent == 2 * (10 * 10) + 2 * (10 * 12));
    CHECK_THROWS_AS(cala::stencil_cost(d, mid, box, 11, 11), cala::Error);
    CHECK_THROWS_AS(cala::stencil_cost(d, mid, box, 1, -1), cala::Error);
    CHECK_THROWS_AS(cala::stencil_cost(d, {3, 0, 0}, box, 1, 1), cala::Error);
}

TEST_CASE("model: messages per step 8:4:2:1 at s = 1, 2, 4, 8 for every preset, words grow by the corners only") {
    const StencilDomain d2 = StencilDomain::make_2d(96, 80, 3, 2, P, D);
    const StencilDomain d3 = StencilDomain::make_3d(48, 40, 40, 3, 2, 2, P, P, D);
    for (const auto& [d, shape] : {std::pair{d2, StencilShape{2, 1, true}}, std::pair{d2, StencilShape{2, 1, false}},
                                   std::pair{d3, StencilShape{3, 1, true}}, std::pair{d3, StencilShape{3, 1, false}}})
        for (int r = 0; r < d.nranks(); ++r) {
            const auto c = d.coords_of(r);
            const StencilCost one = cala::stencil_cost(d, c, shape, 1, 8);
            int faces = 0;  // face neighbours that are other ranks
            for (int e = 0; e < d.dim; ++e)
                for (int side : {-1, 1}) {
                    std::array<int, 3> o{0, 0, 0};
                    o[e] = side;
                    const int nbr = d.neighbor(c, o);
                    faces += nbr >= 0 && nbr != r;
                }
            CHECK(one.msgs == 2 * faces * 8);
            for (int s : {2, 4, 8}) {
                const StencilCost cs = cala::stencil_cost(d, c, shape, s, 8);
                CHECK(cs.msgs * s == one.msgs);
                CHECK(cs.words >= one.words);
            }
        }
    // Interior 2D 5-point rank: the 8 steps move 8 x 4 faces at s = 1 and 4 faces at s = 8,
    // (2·n_y + 2·(n_x + 2w))·w words per exchange.
    const StencilDomain p2 = StencilDomain::make_2d(96, 80, 3, 4, P, P);
    const StencilCost s8 = cala::stencil_cost(p2, {1, 1, 0}, StencilShape{2, 1, true}, 8, 8);
    CHECK(s8.msgs_sent == 4);
    CHECK(s8.words_sent == 2 * 20 * 8 + 2 * (32 + 16) * 8);
    // Steps 2..8 of the cycle sweep together: all updates but step 1's (the block grown by 7).
    CHECK(s8.updates == [] {
        index_t v = 0;
        for (index_t e = 0; e < 8; ++e) v += (32 + 2 * e) * (20 + 2 * e);
        return v;
    }());
    CHECK(s8.cached_updates == s8.updates - (32 + 14) * (20 + 14));
    CHECK(cala::stencil_cost(p2, {1, 1, 0}, StencilShape{2, 1, true}, 1, 8).cached_updates == 0);
    const StencilCost s3 = cala::stencil_cost(p2, {1, 1, 0}, StencilShape{2, 1, true}, 3, 8);  // cycles 3, 3, 2
    CHECK(s3.cached_updates == 2 * ((32 + 2) * (20 + 2) + 32 * 20) + 32 * 20);
}

TEST_CASE("model: predicted time and the choice of depth") {
    StencilCost c;
    c.msgs_sent = 4;
    c.words_sent = 100;
    c.updates = 1000;
    CHECK(cala::stencil_time(c, {1e-6, 1e9, 1e9}, 8) == doctest::Approx(4e-6 + 800e-9 + 1e-6));
    c.cached_updates = 600;  // at 3e9 per second; the other 400 at 1e9
    CHECK(cala::stencil_time(c, {1e-6, 1e9, 1e9, 3e9}, 8) == doctest::Approx(4e-6 + 800e-9 + 0.4e-6 + 0.2e-6));
    CHECK(cala::stencil_time(c, {1e-6, 1e9, 1e9, 0}, 8) == doctest::Approx(4e-6 + 800e-9 + 1e-6));

    const StencilDomain d = StencilDomain::make_2d(64, 64, 2, 2, P, P);
    const StencilShape star{2, 1, true};
    // Free messages: redundant work only costs; s = 1.
    CHECK(cala::choose_stencil_depth(d, star, {0, 1e30, 1e9}, 8) == 1);
    // Free work: latency only; the deepest halo allowed (32, or max_depth).
    CHECK(cala::choose_stencil_depth(d, star, {1e-3, 1e30, 1e30}, 8) == 32);
    CHECK(cala::choose_stencil_depth(d, star, {1e-3, 1e30, 1e30}, 8, 16) == 16);
    // Somewhere in between for a balanced machine.
    const int s = cala::choose_stencil_depth(d, star, {1e-6, 1e10, 1e9}, 8);
    CHECK(s > 1);
    CHECK(s < 32);

    // The max over rank classes equals the max over every rank (uneven, Dirichlet, 3D).
    const StencilDomain u = StencilDomain::make_3d(23, 19, 17, 4, 3, 5, D, P, D);
    const StencilShape box{3, 1, false};
    const cala::StencilMachine m{2e-6, 1e10, 1e9};
    for (int depth : {1, 2, 3}) {
        double worst = 0;
        for (int r = 0; r < u.nranks(); ++r)
            worst = std::max(worst, cala::stencil_time(cala::stencil_cost(u, u.coords_of(r), box, depth, depth), m, 8) / depth);
        CHECK(cala::stencil_time_per_step(u, box, depth, m, 8) == doctest::Approx(worst).epsilon(1e-12));
    }
}

namespace {

// The kernel over box b of a random buffer against a plain loop, bit for bit.
template <class T>
bool kernel_matches(const cala::Stencil<T>& st, const cala::detail::Layout& L, const cala::detail::Box& b,
                    const cala::detail::Blocking& blk) {
    const index_t total = L.len[0] * L.len[1] * L.len[2];
    std::vector<T> in(total), out(total, T(-7)), ref(total, T(-7));
    std::mt19937_64 g(7);
    std::uniform_real_distribution<double> u(-1, 1);
    for (auto& x : in) x = static_cast<T>(u(g));
    const auto taps = cala::detail::make_taps(st, L);

    cala::detail::sweep_box(L, in.data(), out.data(), b, taps, blk);

    for (index_t k = b.lo[2]; k < b.hi[2]; ++k)
        for (index_t j = b.lo[1]; j < b.hi[1]; ++j)
            for (index_t i = b.lo[0]; i < b.hi[0]; ++i) {
                const auto& p = st.points();
                T acc = p[0].coef * in[L.index(i + p[0].dx, j + p[0].dy, k + p[0].dz)];
                for (std::size_t q = 1; q < p.size(); ++q) acc += p[q].coef * in[L.index(i + p[q].dx, j + p[q].dy, k + p[q].dz)];
                ref[L.index(i, j, k)] = acc;
            }
    return std::memcmp(out.data(), ref.data(), sizeof(T) * total) == 0;  // also: nothing outside b written
}

}  // namespace

TEST_CASE_TEMPLATE("sweep kernel: any blocking and thread count gives the plain loop's bits", T, float, double) {
    std::vector<T> c25(25), c125(125);
    for (std::size_t i = 0; i < c25.size(); ++i) c25[i] = static_cast<T>(0.01 * (i + 1));
    for (std::size_t i = 0; i < c125.size(); ++i) c125[i] = static_cast<T>(0.001 * (i + 1));
    const cala::detail::Layout L2{{2, 2, 0}, {37 + 4, 29 + 4, 1}};
    const cala::detail::Layout L3{{2, 2, 2}, {19 + 4, 13 + 4, 11 + 4}};
    const cala::detail::Box b2{{-1, 0, 0}, {37, 29 + 1, 1}};
    const cala::detail::Box b3{{-1, 0, -2 + 1}, {19 + 1, 13, 11}};
    const int threads = omp_get_max_threads();
    for (int nt : {1, 2, 3}) {
        omp_set_num_threads(nt);
        for (const cala::detail::Blocking& blk : {cala::detail::Blocking{}, cala::detail::Blocking{64, 64, 5, 3},
                                                  cala::detail::Blocking{1 << 20, 1 << 20, 1, 1},
                                                  cala::detail::Blocking{0, 0, 8, 0}, cala::detail::Blocking{64, 512, 0, 0},
                                                  cala::detail::Blocking{512 * 1024, 8 << 20, 0, 0, 0},  // streamed
                                                  cala::detail::Blocking{64, 64, 5, 3, 0}}) {
            CAPTURE(nt);
            CAPTURE(blk.bx);
            CHECK(kernel_matches(cala::Stencil<T>::five_point(), L2, b2, blk));
            CHECK(kernel_matches(cala::Stencil<T>::nine_point(), L2, b2, blk));
            CHECK(kernel_matches(cala::Stencil<T>::box(2, 2, c25), L2, cala::detail::Box{{0, 0, 0}, {37, 29, 1}}, blk));
            CHECK(kernel_matches(cala::Stencil<T>::seven_point(), L3, b3, blk));
            CHECK(kernel_matches(cala::Stencil<T>::twenty_seven_point(), L3, b3, blk));
            CHECK(kernel_matches(cala::Stencil<T>::box(3, 2, c125), L3, cala::detail::Box{{0, 0, 0}, {19, 13, 11}}, blk));
        }
    }
    omp_set_num_threads(threads);
}

namespace {

// PA1's boxes for S steps of radius r over an owned block n (dims dim): step k over the block
// grown by (S-1-k)·r, except along the low side of y and the high side of x (fixed boundaries).
std::vector<cala::detail::Box> cycle_boxes(std::array<index_t, 3> n, int dim, index_t r, index_t S) {
    std::vector<cala::detail::Box> out;
    for (index_t k = 0; k < S; ++k) {
        const index_t e = (S - 1 - k) * r;
        cala::detail::Box b{{-e, 0, dim == 3 ? -e : 0}, {n[0], n[1] + e, dim == 3 ? n[2] + e : 1}};
        out.push_back(b);
    }
    return out;
}

// sweep_steps against S calls of sweep_box: both buffers bit for bit.
template <class T>
bool steps_match(const cala::Stencil<T>& st, int dim, std::array<index_t, 3> n, index_t S,
                 const cala::detail::Blocking& blk) {
    const index_t r = st.radius(), h = S * r + r;
    const cala::detail::Layout L{{h, h, dim == 3 ? h : 0}, {n[0] + 2 * h, n[1] + 2 * h, dim == 3 ? n[2] + 2 * h : 1}};
    const index_t total = L.len[0] * L.len[1] * L.len[2];
    std::vector<T> a(total), b(total);
    std::mt19937_64 g(11);
    std::uniform_real_distribution<double> u(-1, 1);
    for (auto& x : a) x = static_cast<T>(u(g));
    for (auto& x : b) x = static_cast<T>(u(g));
    std::vector<T> ra = a, rb = b;
    const auto taps = cala::detail::make_taps(st, L);
    const auto boxes = cycle_boxes(n, dim, r, S);
    cala::detail::sweep_steps(L, a.data(), b.data(), boxes, taps, blk);
    for (index_t k = 0; k < S; ++k)
        cala::detail::sweep_box(L, k % 2 ? rb.data() : ra.data(), k % 2 ? ra.data() : rb.data(), boxes[k], taps,
                                cala::detail::Blocking{});
    return std::memcmp(a.data(), ra.data(), sizeof(T) * total) == 0 &&
           std::memcmp(b.data(), rb.data(), sizeof(T) * total) == 0;
}

}  // namespace

TEST_CASE_TEMPLATE("temporal blocking: any wavefront, group and thread count gives the step-by-step bits", T, float,
                   double) {
    std::vector<T> c25(25);
    for (std::size_t i = 0; i < c25.size(); ++i) c25[i] = static_cast<T>(0.01 * (i + 1));
    const int threads = omp_get_max_threads();
    const std::array<index_t, 3> n2{53, 41, 1}, n3{13, 11, 9};
    auto forced = [](index_t units, index_t tile = 0) {
        cala::detail::Blocking b;
        b.wave_units = units;
        b.wave_tile = tile;
        return b;
    };
    auto window = [](std::int64_t bytes) {
        cala::detail::Blocking b;
        b.window_bytes = bytes;
        return b;
    };
    for (int nt : {1, 2, 3}) {
        omp_set_num_threads(nt);
        CAPTURE(nt);
        for (index_t S : {1, 2, 3, 5, 8}) {
            CAPTURE(S);
            // Forced wavefront heights, the default, no blocking, and budgets that cut S into groups.
            // Skewed tiles along x (2D) or y (3D), forced or from small budgets.
            std::vector<cala::detail::Blocking> blks{forced(1), forced(2), forced(3), forced(7), forced(1000),
                                                     forced(1, 1), forced(2, 3), forced(3, 5), forced(4, 16),
                                                     cala::detail::Blocking{}, window(0), window(4096),
                                                     window(16384), window(65536)};
            for (index_t G : {2, 3}) blks.push_back(window(2 * (n2[0] + 2 * 8 * 2) * sizeof(T) * 2 * (G + 5)));
            for (const auto& blk : blks) {
                CAPTURE(blk.wave_units);
                CAPTURE(blk.wave_tile);
                CAPTURE(blk.window_bytes);
                CHECK(steps_match(cala::Stencil<T>::five_point(), 2, n2, S, blk));
                CHECK(steps_match(cala::Stencil<T>::nine_point(), 2, n2, S, blk));
                CHECK(steps_match(cala::Stencil<T>::box(2, 2, c25), 2, n2, S, blk));
                CHECK(steps_match(cala::Stencil<T>::seven_point(), 3, n3, S, blk));
                CHECK(steps_match(cala::Stencil<T>::twenty_seven_point(), 3, n3, S, blk));
            }
        }
    }
    omp_set_num_threads(threads);
}

TEST_CASE("the wavefront's default window: one of the two candidates, by the rates measured (or forced)") {
    const auto& w = cala::detail::window_choice();
    const auto c = cala::detail::window_candidates();
    CAPTURE(w.reason);
    CHECK(w.l2_bytes == c.l2_bytes);
    CHECK(w.llc_bytes == c.llc_bytes);
    CHECK(c.l2_bytes > 0);
    CHECK(c.llc_bytes > 0);
    CHECK(!w.reason.empty());
    CHECK(cala::detail::window_default_bytes() == w.bytes);
    if (w.l2_rate > 0) {  // measured (or read from the machine's cache): the rule of sweep.hpp
        CHECK(w.llc_rate > 0);
        CHECK(w.bytes == (w.l2_rate > 1.03 * w.llc_rate ? w.l2_bytes : w.llc_bytes));
    } else {  // CALA_STENCIL_WINDOW_BYTES
        CHECK(w.reason.rfind("CALA_STENCIL_WINDOW_BYTES=", 0) == 0);
    }
}

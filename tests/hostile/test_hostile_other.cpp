// Hostile inputs to cala::stencil (and its grid and field), cala::mw::gemm and cala::device_gemm.
// (run as: mpiexec.mpich -n N test_hostile, N in {2, 3, 4})

#include <cmath>
#include <limits>

#include "cala/device.hpp"
#include "cala/mw.hpp"
#include "cala/stencil.hpp"
#include "hostile/hostile.hpp"

using namespace cala;
using hostile::Row;
using hostile::world;

TEST_CASE("hostile: stencil, StencilGrid, StencilField") {
    const int np = world().size();
    const bool last = world().rank() == np - 1;
    // 1 x np ranks over 10 x (4·np + 1) points: the smallest local extent along y is 4.
    const StencilDomain dom = StencilDomain::make_2d(10, 4 * np + 1, 1, np, Boundary::Periodic, Boundary::Dirichlet);
    StencilDomain wrong_procs = dom, wrong_n = dom, one_differs = dom;
    wrong_procs.procs[1] += 1;
    wrong_n.n[0] = -2;
    if (last) one_differs.n[0] += 1;
    const StencilGrid grid(world(), dom);
    StencilField<double> u(grid, 2);
    u.fill([](index_t i, index_t j, index_t) { return double(i * 100 + j); });
    const auto five = Stencil<double>::five_point();
    hostile::Guard guard;  // (the field is compared through gather, in the table's last row)
    const auto before = u.gather(0);
    const auto unchanged = [&] { return u.gather(0) == before; };

    hostile::run_table(world(), "StencilGrid / StencilField", {
        {"procs do not match the communicator", [&] { StencilGrid(world(), wrong_procs); }, "does not match"},
        {"negative n", [&] { StencilGrid(world(), wrong_n); }, "n along x"},
        {"ranks disagree on the domain", [&] { StencilGrid(world(), one_differs); }, "different arguments"},
        {"halo < 0", [&] { StencilField<double>(grid, -1); }, "halo is -1"},
        {"halo past the smallest extent", [&] { StencilField<double>(grid, 5); }, "smallest local extent 4"},
        {"ranks disagree on the halo", [&] { StencilField<double>(grid, last ? 2 : 1); }, "different arguments"},
    }, guard);

    hostile::run_table(world(), "stencil", {
        {"steps < 0", [&] { (void)stencil(u, five, -1); }, "steps is -1"},
        {"depth 0", [&] { (void)stencil(u, five, 3, {.depth = 0}); }, "depth is 0"},
        {"3D stencil on a 2D domain", [&] { (void)stencil(u, Stencil<double>::seven_point(), 3); }, "3D stencil on a 2D"},
        {"depth past the field's halo", [&] { (void)stencil(u, five, 4, {.depth = 3}); }, "exceeds the field's halo 2"},
        {"ranks disagree on steps", [&] { (void)stencil(u, five, last ? 4 : 3); }, "different arguments"},
        {"ranks disagree on depth", [&] { (void)stencil(u, five, 4, {.depth = last ? 2 : 1}); }, "different arguments"},
        {"ranks disagree on a coefficient",
         [&] { (void)stencil(u, Stencil<double>::five_point(last ? 0.6 : 0.5), 2); }, "different arguments"},
        {"ranks disagree on overlap", [&] { (void)stencil(u, five, 2, {.overlap = !last}); }, "different arguments"},
        {"the field is untouched by all of the above", [] {}, "", unchanged},
    }, guard);
}

TEST_CASE("hostile: mw::gemm") {
    const int np = world().size();
    const bool master = world().rank() == 0, last = world().rank() == np - 1;
    const index_t m = 12, n = 10, k = 6;
    std::vector<double> a(m * k, 1.0), b(k * n, 2.0), c(m * n + 4, 3.0);
    hostile::Guard guard;
    guard.watch(a), guard.watch(b), guard.watch(c);
    const Comm alone = world().split(world().rank(), 0);
    const auto mw_call = [&](index_t mm, index_t nn, index_t kk, const double* pa, index_t lda, const double* pb,
                             index_t ldb, double* pc, index_t ldc, const Comm* comm) {
        return [=] { (void)mw::gemm<double>(mm, nn, kk, pa, lda, pb, ldb, pc, ldc, *comm); };
    };
    const Comm* w = &world();

    hostile::run_table(world(), "mw::gemm", {
        {"m < 0", mw_call(-1, n, k, a.data(), m, b.data(), k, c.data(), m, w), "sizes m = -1"},
        {"k < 0 on the master only", mw_call(m, n, master ? -2 : k, a.data(), m, b.data(), k, c.data(), m, w),
         "k = -2 must be >= 0"},
        {"lda < m on the master", mw_call(m, n, k, a.data(), m - 1, b.data(), k, c.data(), m, w), "lda is 11"},
        {"ldb < k on the master", mw_call(m, n, k, a.data(), m, b.data(), -1, c.data(), m, w), "ldb is -1"},
        {"A nullptr on the master", mw_call(m, n, k, master ? nullptr : a.data(), m, b.data(), k, c.data(), m, w),
         "must not be null on the master"},
        {"C nullptr on the master", mw_call(m, n, k, a.data(), m, b.data(), k, nullptr, m, w),
         "must not be null on the master"},
        {"one rank only", mw_call(m, n, k, a.data(), m, b.data(), k, c.data(), m, &alone), "no workers"},
        {"ranks disagree on n", mw_call(m, last ? n - 1 : n, k, a.data(), m, b.data(), k, c.data(), m, w),
         "different arguments"},
    }, guard);
}

TEST_CASE("hostile: device_gemm (local)") {
    const index_t m = 9, n = 7, k = 5;
    std::vector<double> a(m * k + 3, 1.0), b(k * n + 3, 2.0), c(m * n + 3, 3.0);
    hostile::Guard guard;
    guard.watch(a), guard.watch(b), guard.watch(c);
    const auto dg = [&](index_t mm, index_t nn, index_t kk, const double* pa, index_t lda, const double* pb, index_t ldb,
                        double* pc, index_t ldc, DeviceGemmOptions o = {}) {
        return [=] { device_gemm(Op::N, Op::N, mm, nn, kk, 1.0, pa, lda, pb, ldb, 1.0, pc, ldc, o); };
    };
    const double nan = std::numeric_limits<double>::quiet_NaN();

    hostile::run_table(world(), "device_gemm", {
        {"m < 0", dg(-1, n, k, a.data(), m, b.data(), k, c.data(), m), "sizes must be non-negative"},
        {"lda < m", dg(m, n, k, a.data(), m - 1, b.data(), k, c.data(), m), "lda is 8"},
        {"ldc negative", dg(m, n, k, a.data(), m, b.data(), k, c.data(), -1), "ldc is -1"},
        {"A nullptr", dg(m, n, k, nullptr, m, b.data(), k, c.data(), m), "device_gemm: A is a null pointer"},
        {"B nullptr", dg(m, n, k, a.data(), m, nullptr, k, c.data(), m), "device_gemm: B is a null pointer"},
        {"C nullptr", dg(m, n, k, a.data(), m, b.data(), k, nullptr, m), "device_gemm: C is a null pointer"},
        {"unknown device", dg(m, n, k, a.data(), m, b.data(), k, c.data(), m, {.devices = "fpga"}), "fpga"},
        {"bad regime", dg(m, n, k, a.data(), m, b.data(), k, c.data(), m, {.devices = "host", .regime = 'x'}),
         "regime"},
        {"op out of range",
         [&] { device_gemm(static_cast<Op>(6), Op::N, m, n, k, 1.0, a.data(), m, b.data(), k, 1.0, c.data(), m); },
         "device_gemm: op_a is 6"},
    }, guard);

    std::vector<double> an(a);
    an[2] = nan;
    hostile::run_table(world(), "device_gemm (NaN)", {
        {"NaN in A(2, 0) reaches row 2 of C only",
         [&] { device_gemm(Op::N, Op::N, m, n, k, 1.0, an.data(), m, b.data(), k, 1.0, c.data(), m, {.devices = "host"}); },
         "", [&] {
             bool ok = true;
             for (index_t j = 0; j < n; ++j)
                 for (index_t i = 0; i < m; ++i) ok = ok && (i == 2 ? std::isnan(c[i + m * j]) : c[i + m * j] == 13.0);
             return ok && c[m * n] == 3.0;
         }},
    }, hostile::Guard{});
}

// 2.5D / 3D SUMMA on resident matrices (issue 30, item 2), on HostDevice memory: every p x q x c
// grid the world holds (idle ranks included), every variant, against the sequential reference
// and the host's 2.5D path with the same options; traffic == resident_gemm_cost on every rank,
// the device's peak workspace == its extra_bytes, the planner's choice; bad input.
// (run as: mpiexec.mpich -n N test_resident_3d, N in {1, 2, 3, 4})

#include <doctest/doctest.h>

#include <limits>

#include "cala/resident.hpp"
#include "device/device.hpp"
#include "support/helpers.hpp"
#include "support/resident.hpp"

using namespace cala;

namespace {

constexpr std::int64_t kCap = std::int64_t{64} << 20;


// Every p x q x c shape with c >= 2 over at most `ranks` ranks, and the 2D ones 1 x 1 x 1 and
// (on 3 or more ranks) 1 x 2 x 1 of a part of the ranks.
std::vector<Shape3D> shapes(int ranks) {
    std::vector<Shape3D> out;
    for (int c = 2; c <= ranks; ++c)
        for (int p = 1; p * c <= ranks; ++p)
            for (int q = 1; p * q * c <= ranks; ++q) out.push_back({p, q, c});
    out.push_back({1, 1, 1});
    if (ranks >= 3) out.push_back({1, 2, 1});
    return out;
}

using Case = test::ResidentCase;

const Case kCases[] = {
    {1, 1, 1, 4, 4, 4, 4, 4, 4, false},
    {13, 11, 7, 4, 4, 4, 4, 4, 4, true},    // nb divides nothing; fewer k-blocks than some c
    {37, 29, 41, 5, 7, 7, 3, 5, 3, false},  // blocks unlike, operands and C moved
    {6, 5, 3, 2, 2, 2, 2, 2, 2, false},     // one k-block a layer at most
};

struct Run {
    Shape3D g3;
    Variant variant;
    bool plan_grid = false;
    index_t block_size = 0;
    int lookahead = 1;
    index_t panel_width = 0;
};

template <class T>
void run_case(const Grid2D& g, const Case& s, Op oa, Op ob, bool beta_zero, const Run& run) {
    const ResidentDevice dev = ResidentDevice::open("host", kCap);
    const index_t am = oa == Op::N ? s.m : s.k, an = oa == Op::N ? s.k : s.m;
    const index_t bm = ob == Op::N ? s.k : s.n, bn = ob == Op::N ? s.n : s.k;
    const BlockCyclic la(am, an, s.mb_a, s.nb_a, g.p(), g.q()), lb(bm, bn, s.mb_b, s.nb_b, g.p(), g.q(), g.p() - 1, 0);
    const BlockCyclic lc(s.m, s.n, s.mb_c, s.nb_c, g.p(), g.q(), 0, g.q() - 1);
    ResidentMatrix<T> a = test::random_resident<T>(g, la, dev), b = test::random_resident<T>(g, lb, dev);
    ResidentMatrix<T> c = test::random_resident<T>(g, lc, dev);
    if (beta_zero) c.fill(T(std::numeric_limits<real_t<T>>::quiet_NaN()));  // must not leak
    const T alpha(1.25), beta = beta_zero ? T(0) : T(-0.75);
    const auto ga = gather(a), gb = gather(b), gc = gather(c);
    ResidentGemmOptions o{.variant = run.variant, .lookahead = run.lookahead, .panel_width = run.panel_width,
                          .grid3d = run.g3, .plan_grid = run.plan_grid, .block_size = run.block_size};
    // The host's 2.5D path with the same options on the same inputs.
    DistMatrix<T> ha(g, la), hb(g, lb), hc(g, lc);
    redistribute(Op::N, a, ha.view());
    redistribute(Op::N, b, hb.view());
    redistribute(Op::N, c, hc.view());
    const GemmOptions ho{.variant = run.variant, .lookahead = run.lookahead, .panel_width = run.panel_width,
                         .grid3d = run.g3, .block_size = run.block_size};
    gemm(oa, ob, alpha, ha.view(), hb.view(), beta, hc.view(), ho);
    const std::int64_t used = dev.used_bytes();
    dev.get()->reset_peak();
    ResidentGemmReport report;
    o.report = &report;
    reset_traffic();

    gemm(oa, ob, alpha, a, b, beta, c, o);

    const Traffic t = traffic();
    o.report = nullptr;
    const Cost model = resident_gemm_cost(oa, ob, la, lb, lc, o, g.row(), g.col(), sizeof(T), is_complex_v<T>, g.order());
    const auto got = gather(c), host = gather(hc.view());
    double err = 0, vs_host = 0;
    if (g.comm().rank() == 0) {
        const auto ref = test::reference_gemm(oa, ob, s.m, s.n, s.k, alpha, ga, std::max<index_t>(am, 1), gb,
                                              std::max<index_t>(bm, 1), beta, gc);
        err = test::gemm_error(got, ref, s.k);
        vs_host = test::gemm_error(got, test::GemmReference<T>{host, ref.scale}, s.k);
    }
    const bool ran = s.m > 0 && s.n > 0 && s.k > 0;
    CAPTURE(g.p());
    CAPTURE(g.q());
    CAPTURE(run.g3.p);
    CAPTURE(run.g3.q);
    CAPTURE(run.g3.c);
    CAPTURE(run.plan_grid);
    CAPTURE(s.m);
    CAPTURE(s.n);
    CAPTURE(s.k);
    CAPTURE(static_cast<int>(oa));
    CAPTURE(static_cast<int>(ob));
    CAPTURE(static_cast<int>(run.variant));
    CAPTURE(static_cast<int>(report.variant));
    CAPTURE(err);
    CAPTURE(vs_host);
    CAPTURE(t.words());
    CAPTURE(model.words);
    CAPTURE(t.msgs());
    CAPTURE(model.msgs);
    CAPTURE(dev.peak_bytes() - used);
    CAPTURE(model.extra_bytes);
    CHECK(test::all_ranks(err < 2.0, g));
    CHECK(test::all_ranks(vs_host < 4.0, g));
    CHECK(test::all_ranks(t.words() == model.words && t.msgs() == model.msgs, g));
    CHECK(test::all_ranks(dev.used_bytes() == used, g));  // the workspace is given back
    CHECK(test::all_ranks(!ran || (report.device_bytes == model.extra_bytes && dev.peak_bytes() == used + model.extra_bytes),
                          g));
    if (!ran) return;
    // The grid and variant that ran: the host planner's (plan_gemm) with the same options.
    GemmOptions po = ho;
    po.grid3d = run.g3;
    const GemmPlanInfo info = plan_gemm(oa, ob, la, lb, lc, g.order(), po, sizeof(T), is_complex_v<T>);
    const bool three = !info.user_grid;
    CHECK(test::all_ranks(three || !run.plan_grid || report.grid3d.c == 0, g));
    CHECK(test::all_ranks(!three || (report.grid3d.p == info.grid.p && report.grid3d.q == info.grid.q &&
                                     report.grid3d.c == info.grid.c && report.variant == info.variant),
                          g));
    if (!run.plan_grid) CHECK(test::all_ranks(three && report.grid3d.c == run.g3.c, g));
    if (run.variant != Variant::Auto) CHECK(test::all_ranks(report.variant == run.variant, g));
}

// The squarest grid of the world in the given order (collective).
Grid2D world_grid(GridOrder order) {
    const Comm w = Comm::borrow(MPI_COMM_WORLD);
    const auto [p, q] = Grid2D::squarest(w.size());
    return Grid2D(w, p, q, order);
}

}  // namespace

TEST_CASE_TEMPLATE("resident 2.5D / 3D gemm: every grid and variant against the reference, the host and the model", T,
                   double, std::complex<float>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    int count = 0;
    for (GridOrder order : {GridOrder::RowMajor, GridOrder::ColumnMajor}) {
        const Grid2D g = world_grid(order);
        for (const Shape3D sh : shapes(world.size()))
            for (const Case& s : kCases)
                for (Op oa : {Op::N, Op::T, Op::C})
                    for (Op ob : {Op::N, Op::T, Op::C}) {
                        if (!s.all_ops && !(oa == Op::N && ob == Op::N) && !(oa == Op::T && ob == Op::C)) continue;
                        if (order == GridOrder::ColumnMajor && !(oa == Op::N && ob == Op::N)) continue;
                        for (Variant v : {Variant::Auto, Variant::StationaryC, Variant::StationaryA, Variant::StationaryB}) {
                            ++count;
                            run_case<T>(g, s, oa, ob, count % 3 == 0,
                                        {.g3 = sh, .variant = v, .block_size = count % 4 == 0 ? 3 : 0,
                                         .lookahead = 1 + count % 2, .panel_width = count % 5 == 1 ? 3 : 0});
                        }
                    }
    }
}

TEST_CASE("resident gemm with plan_grid: the host planner's grid and variant") {
    const Grid2D g = world_grid(GridOrder::RowMajor);
    // Deep products (k >> m, n): on 4 ranks the planner takes 1 x 1 x 4 for the last one.
    for (const Case& s : {Case{16, 16, 512, 8, 8, 8, 8, 8, 8, false}, Case{40, 36, 96, 4, 4, 4, 4, 4, 4, false},
                          Case{8, 8, 8192, 8, 8, 8, 8, 8, 8, false}})
        for (Variant v : {Variant::Auto, Variant::StationaryC})
            run_case<float>(g, s, Op::N, Op::N, false, {.g3 = {}, .variant = v, .plan_grid = true});
}

TEST_CASE("resident 2.5D / 3D gemm: bad input is a clear cala::Error on every rank, C untouched") {
    using T = double;
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D g = world_grid(GridOrder::RowMajor);
    const ResidentDevice dev = ResidentDevice::open("host", kCap);
    const BlockCyclic l(9, 9, 2, 2, g.p(), g.q());
    ResidentMatrix<T> a = test::random_resident<T>(g, l, dev), b = test::random_resident<T>(g, l, dev), c = test::random_resident<T>(g, l, dev);
    const auto before = gather(c);
    const int n = world.size();
    CHECK(test::fails_everywhere(g, "grid3d is 1 x 1 x " + std::to_string(n + 1) + ", not a grid of at most",
                                 [&] { gemm(Op::N, Op::N, 1.0, a, b, 0.0, c, {.grid3d = {1, 1, n + 1}}); }));
    CHECK(test::fails_everywhere(g, "grid3d is 0 x 1 x 1",
                                 [&] { gemm(Op::N, Op::N, 1.0, a, b, 0.0, c, {.grid3d = {0, 1, 1}}); }));
    CHECK(test::fails_everywhere(g, "block_size is -2", [&] { gemm(Op::N, Op::N, 1.0, a, b, 0.0, c, {.grid3d = {1, 1, 1}, .block_size = -2}); }));
    CHECK(test::fails_everywhere(g, "memory_limit_bytes is -1",
                                 [&] { gemm(Op::N, Op::N, 1.0, a, b, 0.0, c, {.plan_grid = true, .memory_limit_bytes = -1}); }));
    // A memory limit no plan fits.
    CHECK(test::fails_everywhere(g, "gemm", [&] { gemm(Op::N, Op::N, 1.0, a, b, 0.0, c, {.grid3d = {1, 1, n}, .memory_limit_bytes = 8}); }));
    // Operands that fit, a layered workspace that does not (on the last rank only).
    const bool last = world.rank() == n - 1;
    const std::int64_t op_bytes = 3 * l.rows.local_size(g.row()) * l.cols.local_size(g.col()) * std::int64_t(sizeof(T));
    const ResidentDevice tight = ResidentDevice::open("host", last ? std::max<std::int64_t>(op_bytes, 8) : kCap);
    ResidentMatrix<T> ta = test::random_resident<T>(g, l, tight), tb = test::random_resident<T>(g, l, tight), tc = test::random_resident<T>(g, l, tight);
    const auto tc_before = gather(tc);
    CHECK(test::fails_everywhere(g, "bytes of workspace on",
                                 [&] { gemm(Op::N, Op::N, 1.0, ta, tb, 0.0, tc, {.grid3d = {1, 1, n}}); }));
    CHECK(test::all_ranks(gather(tc) == tc_before, g));
    CHECK(test::all_ranks(gather(c) == before, g));
}

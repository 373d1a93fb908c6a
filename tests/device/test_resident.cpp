// Device-resident matrices on HostDevice memory (issue 30): layout, fill, gather / scatter,
// redistribute between host and device and between grids, and the resident gemm against the
// sequential reference and the host algorithm, traffic == resident_gemm_cost, bad input.
// (run as: mpiexec.mpich -n N test_resident, N in {1, 2, 4}; every p x q with p·q = N, and on 4
// ranks the odd grids 1 x 3 and 3 x 1 on ranks 0..2)

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "cala/resident.hpp"
#include "support/helpers.hpp"
#include "support/resident.hpp"

using namespace cala;

namespace {

constexpr std::int64_t kCap = std::int64_t{64} << 20;

// fn(grid) on every p x q grid of the world, and on 4 ranks 1 x 3 and 3 x 1 on ranks 0..2.
void for_each_grid(const std::function<void(const Grid2D&)>& fn) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    test::for_each_grid(fn);
    if (world.size() == 4) {
        const Comm three = world.split(world.rank() < 3 ? 0 : 1, world.rank());
        if (world.rank() < 3)
            for (auto [p, q] : {std::pair{1, 3}, std::pair{3, 1}}) fn(Grid2D(three, p, q));
    }
}


// op(x) of a column-major m x n array as a column-major array.
template <class T>
std::vector<T> op_of(Op op, const std::vector<T>& x, index_t m, index_t n) {
    if (op == Op::N) return x;
    std::vector<T> y(x.size());
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < m; ++i) y[j + i * n] = conj_if(x[i + j * m], op == Op::C);
    return y;
}

}  // namespace

TEST_CASE_TEMPLATE("a resident matrix keeps DistMatrix's local arrays; fill, scatter and gather", T, double,
                   std::complex<float>) {
    for_each_grid([](const Grid2D& g) {
        const ResidentDevice dev = ResidentDevice::open("host", kCap);
        const BlockCyclic l(13, 11, 4, 3, g.p(), g.q(), std::min(1, g.p() - 1), 0);
        std::vector<T> global(13 * 11);
        for (auto& x : global) x = test::random_value<T>(test::rng());
        MPI_Bcast(global.data(), static_cast<int>(global.size() * sizeof(T)), MPI_BYTE, 0, g.comm().get());
        DistMatrix<T> host(g, l);
        ResidentMatrix<T> res(g, l, dev);
        const std::int64_t bytes = res.m_loc() * res.n_loc() * std::int64_t(sizeof(T));

        scatter(global.data(), 13, host.view(), 0);
        scatter(global.data(), 13, res, 0);

        std::vector<T> local(static_cast<std::size_t>(std::max<index_t>(1, res.m_loc()) * res.n_loc()));
        res.to_host(local.data(), std::max<index_t>(1, res.m_loc()));
        bool same = res.ld() == std::max<index_t>(1, host.m_loc()) && res.m_loc() == host.m_loc() &&
                    res.n_loc() == host.n_loc() && dev.used_bytes() == bytes && res.on_device();
        for (index_t j = 0; j < res.n_loc(); ++j)
            for (index_t i = 0; i < res.m_loc(); ++i) same = same && local[i + j * res.ld()] == host.local(i, j);
        CHECK(test::all_ranks(same, g));
        const auto back = gather(res, g.comm().size() - 1);
        CHECK(test::all_ranks(g.comm().rank() != g.comm().size() - 1 || back == global, g));
        res.fill(T(2.5));
        const auto filled = gather(res, 0);
        CHECK(test::all_ranks(g.comm().rank() != 0 || filled == std::vector<T>(global.size(), T(2.5)), g));
        CHECK_THROWS_AS(res.host_view(), Error);
    });
}

TEST_CASE_TEMPLATE("redistribute between host and device layouts and between grids", T, float, std::complex<double>) {
    for_each_grid([](const Grid2D& g) {
        const ResidentDevice dev = ResidentDevice::open("host", kCap);
        const Grid2D other(g.comm(), g.q(), g.p(), GridOrder::ColumnMajor);  // same ranks, another grid
        for (Op op : {Op::N, Op::T, Op::C}) {
            const index_t m = 17, n = 10;  // the source is m x n; op(src) lands
            const index_t dm = op == Op::N ? m : n, dn = op == Op::N ? n : m;
            DistMatrix<T> src(g, m, n, 4, 4);
            test::randomize(src.view());
            ResidentMatrix<T> d1(g, BlockCyclic(dm, dn, 3, 5, g.p(), g.q(), g.p() - 1, 0), dev);
            ResidentMatrix<T> d2(other, dm, dn, 2, 3, dev);
            DistMatrix<T> out(other, dm, dn, 5, 2);
            const auto gs = gather(src.view());
            const auto want = g.comm().rank() == 0 ? op_of(op, gs, m, n) : gs;
            reset_traffic();

            redistribute(op, src.view(), d1);  // host -> device, same grid

            const Traffic t = traffic();
            const Cost model = redistribute_cost(op, src.layout(), d1.layout(), g.row(), g.col());
            redistribute(Op::N, d1, d2);          // device -> device, another grid
            redistribute(Op::N, d2, out.view());  // device -> host
            const auto got1 = gather(d1), got2 = gather(d2), got3 = gather(out.view());
            CHECK(test::all_ranks(t.words() == model.words && t.msgs() == model.msgs, g));
            CHECK(test::all_ranks(g.comm().rank() != 0 || (got1 == want && got2 == want && got3 == want), g));
        }
    });
}

namespace {

using Case = test::ResidentCase;

const Case kCases[] = {
    {0, 5, 7, 2, 2, 2, 2, 2, 2, false},     // m = 0
    {6, 0, 3, 2, 2, 2, 2, 2, 2, false},     // n = 0
    {5, 4, 0, 2, 2, 2, 2, 2, 2, false},     // k = 0: C := beta·C
    {1, 1, 1, 4, 4, 4, 4, 4, 4, false},
    {3, 5, 2, 8, 8, 8, 8, 8, 8, true},      // everything smaller than a block
    {13, 11, 7, 4, 4, 4, 4, 4, 4, true},    // nb divides nothing
    {37, 29, 41, 5, 7, 7, 3, 5, 3, true},   // aligned for stationary C (N, N)
    {31, 23, 19, 3, 5, 6, 2, 4, 6, false},  // nothing aligned: operands moved on the device
};

constexpr Variant kVariants[] = {Variant::Auto, Variant::StationaryC, Variant::StationaryA, Variant::StationaryB};

template <class T>
void run_gemm_case(const Grid2D& g, const Case& s, Op oa, Op ob, bool beta_zero, const ResidentGemmOptions& opts) {
    const ResidentDevice dev = ResidentDevice::open("host", kCap);
    const index_t am = oa == Op::N ? s.m : s.k, an = oa == Op::N ? s.k : s.m;
    const index_t bm = ob == Op::N ? s.k : s.n, bn = ob == Op::N ? s.n : s.k;
    const BlockCyclic la(am, an, s.mb_a, s.nb_a, g.p(), g.q()), lb(bm, bn, s.mb_b, s.nb_b, g.p(), g.q());
    const BlockCyclic lc(s.m, s.n, s.mb_c, s.nb_c, g.p(), g.q(), 0, g.q() - 1);
    ResidentMatrix<T> a = test::random_resident<T>(g, la, dev), b = test::random_resident<T>(g, lb, dev);
    ResidentMatrix<T> c = test::random_resident<T>(g, lc, dev);
    if (beta_zero) c.fill(T(std::numeric_limits<real_t<T>>::quiet_NaN()));  // must not leak
    const T alpha(1.25), beta = beta_zero ? T(0) : T(-0.75);
    const auto ga = gather(a), gb = gather(b), gc = gather(c);
    // The host algorithm on the same inputs.
    DistMatrix<T> ha(g, la), hb(g, lb), hc(g, lc);
    redistribute(Op::N, a, ha.view());
    redistribute(Op::N, b, hb.view());
    redistribute(Op::N, c, hc.view());
    gemm(oa, ob, alpha, ha.view(), hb.view(), beta, hc.view(), {.variant = Variant::StationaryC});
    const std::int64_t used = dev.used_bytes();
    ResidentGemmReport report;
    ResidentGemmOptions o = opts;
    o.report = &report;
    reset_traffic();

    gemm(oa, ob, alpha, a, b, beta, c, o);

    const Traffic t = traffic();
    const Cost model = resident_gemm_cost(oa, ob, la, lb, lc, opts, g.row(), g.col(), sizeof(T), is_complex_v<T>);
    const auto got = gather(c), host = gather(hc.view());
    double err = 0, vs_host = 0;
    if (g.comm().rank() == 0) {
        const auto ref = test::reference_gemm(oa, ob, s.m, s.n, s.k, alpha, ga, std::max<index_t>(am, 1), gb,
                                              std::max<index_t>(bm, 1), beta, gc);
        err = test::gemm_error(got, ref, s.k);
        vs_host = test::gemm_error(got, test::GemmReference<T>{host, ref.scale}, s.k);
    }
    CAPTURE(g.p());
    CAPTURE(g.q());
    CAPTURE(s.m);
    CAPTURE(s.n);
    CAPTURE(s.k);
    CAPTURE(static_cast<int>(oa));
    CAPTURE(static_cast<int>(ob));
    CAPTURE(opts.lookahead);
    CAPTURE(static_cast<int>(opts.variant));
    CAPTURE(static_cast<int>(report.variant));
    CAPTURE(err);
    CAPTURE(vs_host);
    CAPTURE(t.words());
    CAPTURE(model.words);
    CHECK(test::all_ranks(err < 2.0, g));
    CHECK(test::all_ranks(vs_host < 4.0, g));
    CHECK(test::all_ranks(t.words() == model.words && t.msgs() == model.msgs, g));
    CHECK(test::all_ranks(dev.used_bytes() == used, g));  // the workspace is given back
    const bool ran = s.m > 0 && s.n > 0 && s.k > 0;
    CHECK(test::all_ranks(!ran || (report.transport == PanelTransport::Staged && report.device_bytes == model.extra_bytes),
                          g));
    // The variant asked for ran; Auto is the host planner's 2D choice (stationary C on one rank).
    const Variant want = opts.variant != Variant::Auto     ? opts.variant
                         : g.comm().size() == 1            ? Variant::StationaryC
                                                           : choose_gemm_variant(oa, ob, la, lb, lc, {});
    CHECK(test::all_ranks(!ran || report.variant == want, g));
}

}  // namespace

TEST_CASE_TEMPLATE("resident gemm matches the sequential reference, the host algorithm and the model", T, float, double,
                   std::complex<float>, std::complex<double>) {
    int count = 0;
    for_each_grid([&](const Grid2D& g) {
        for (const Case& s : kCases)
            for (Op oa : {Op::N, Op::T, Op::C})
                for (Op ob : {Op::N, Op::T, Op::C}) {
                    if (!s.all_ops && !(oa == Op::N && ob == Op::N) && !(oa == Op::T && ob == Op::C)) continue;
                    for (Variant v : kVariants) {
                        ++count;
                        run_gemm_case<T>(g, s, oa, ob, count % 3 == 0,
                                         {.variant = v, .lookahead = 1 + count % 2,
                                          .panel_width = count % 5 == 0 ? 0 : count % 5 == 1 ? 3 : 8});
                    }
                }
    });
}

namespace {

}  // namespace

TEST_CASE("bad input: a clear cala::Error on every rank, C untouched") {
    using T = double;
    for_each_grid([](const Grid2D& g) {
        const ResidentDevice dev = ResidentDevice::open("host", kCap), dev2 = ResidentDevice::open("host", kCap);
        const BlockCyclic l(9, 9, 2, 2, g.p(), g.q());
        ResidentMatrix<T> a = test::random_resident<T>(g, l, dev), b = test::random_resident<T>(g, l, dev);
        ResidentMatrix<T> c = test::random_resident<T>(g, l, dev);
        const auto before = gather(c);

        // Mixed host and device operands; operands on two devices of one rank (the message is the
        // lowest failing rank's: device numbers differ between ranks).
        ResidentMatrix<T> on_host = test::random_resident<T>(g, l, ResidentDevice{});
        ResidentMatrix<T> elsewhere = test::random_resident<T>(g, l, dev2);
        CHECK(test::fails_everywhere(g, "A lives on host memory but C on host#",
                               [&] { gemm(Op::N, Op::N, 1.0, on_host, b, 0.0, c); }));
        CHECK(test::fails_everywhere(g, "B lives on host#",
                               [&] { gemm(Op::N, Op::N, 1.0, a, elsewhere, 0.0, c); }));
        // Ranks on different kinds of memory: rank 0 in host memory, the others on a device.
        if (g.comm().size() > 1) {
            const ResidentDevice mine = g.comm().rank() == 0 ? ResidentDevice{} : dev;
            ResidentMatrix<T> x(g, l, mine), y(g, l, mine), z(g, l, mine);
            CHECK(test::fails_everywhere(g, "on some ranks", [&] { gemm(Op::N, Op::N, 1.0, x, y, 0.0, z); }));
        }
        // Shapes, options, a transport HostDevice memory cannot take.
        ResidentMatrix<T> wide(g, 9, 10, 2, 2, dev);
        CHECK(test::fails_everywhere(g, "gemm: ", [&] { gemm(Op::N, Op::N, 1.0, a, wide, 0.0, c); }));
        CHECK(test::fails_everywhere(g, "lookahead is 0", [&] { gemm(Op::N, Op::N, 1.0, a, b, 0.0, c, {.lookahead = 0}); }));
        CHECK(test::fails_everywhere(g, "variant is 7, not a Variant",
                                     [&] { gemm(Op::N, Op::N, 1.0, a, b, 0.0, c, {.variant = static_cast<Variant>(7)}); }));
        CHECK(test::fails_everywhere(g, "transport Nccl needs CUDA devices",
                               [&] { gemm(Op::N, Op::N, 1.0, a, b, 0.0, c, {.transport = PanelTransport::Nccl}); }));
        CHECK(test::fails_everywhere(g, "op(src) is", [&] { redistribute(Op::T, wide, c); }));
        const auto after = gather(c);
        CHECK(test::all_ranks(after == before, g));

        // An allocation past the cap on the last rank only fails on every rank.
        const bool last = g.comm().rank() == g.comm().size() - 1;
        const ResidentDevice small = ResidentDevice::open("host", last ? 64 : kCap);
        CHECK(test::fails_everywhere(g, "ResidentMatrix: allocating", [&] { ResidentMatrix<T> big(g, 64, 64, 8, 8, small); }));
        CHECK(small.used_bytes() == 0);
        // Operands that fit, a workspace that does not: op(A) = A^T moves A onto the device.
        const std::int64_t op_bytes = 3 * l.rows.local_size(g.row()) * l.cols.local_size(g.col()) * std::int64_t(sizeof(T));
        const ResidentDevice tight = ResidentDevice::open("host", std::max<std::int64_t>(op_bytes, 8));
        ResidentMatrix<T> ta = test::random_resident<T>(g, l, tight), tb = test::random_resident<T>(g, l, tight);
        ResidentMatrix<T> tc = test::random_resident<T>(g, l, tight);
        const auto tc_before = gather(tc);
        CHECK(test::fails_everywhere(g, "bytes of workspace on", [&] { gemm(Op::T, Op::N, 1.0, ta, tb, 0.0, tc); }));
        const auto tc_after = gather(tc);
        CHECK(test::all_ranks(tc_after == tc_before, g));
    });
}

// cala::trsm on resident matrices, on HostDevice memory (issue 30, item 4's p?trsm_): every side x
// uplo x op x diag x type on fresh random inputs, against the residual of the solve on gathered
// data; words, words received and messages == resident_trsm_cost on every rank (the host
// trsm_cost's), the device's peak == the model's workspace, A untouched (its other triangle and a
// unit diagonal NaN: never read); alpha = 0; host memory == the host cala::trsm bit for bit; bad
// input as cala::Error on every rank with B untouched.
// (run as: mpiexec.mpich -n N test_resident_trsm, N in {1, 2, 4}: every p x q with p·q = N)

#include <doctest/doctest.h>

#include <cstring>

#include "cala/resident.hpp"
#include "device/device.hpp"
#include "trsm/trsm_case.hpp"

using namespace cala;

namespace {

constexpr std::int64_t kCap = std::int64_t{64} << 20;

// B is m x n; A is k x k with k = m (Left) or n (Right).
struct Shape {
    index_t m, n;
    index_t mba, nba, mbb, nbb;  // block sizes of A and B
    bool sources;                // non-zero source processes
    bool all_ops;                // every uplo x op x diag, else a sample
};

const Shape kShapes[] = {
    {0, 3, 2, 2, 2, 2, false, false},   // m = 0
    {4, 0, 2, 2, 2, 2, false, false},   // n = 0
    {1, 1, 4, 4, 4, 4, false, false},   // 1 x 1
    {3, 5, 8, 8, 8, 8, true, true},     // smaller than a block
    {13, 11, 4, 4, 4, 3, true, true},   // block sizes divide nothing
    {23, 4, 3, 3, 4, 2, true, true},    // B's rows do not line up (left: B moves, 2·n < m)
    {16, 9, 4, 3, 4, 4, false, true},   // A without square tiles: A moves
    {40, 12, 5, 5, 5, 5, true, false},  // several steps of lookahead
};

template <class T>
void run_case(const Grid2D& g, const Shape& s, Side side, Uplo uplo, Op op, Diag diag, bool alpha_zero,
              int lookahead) {
    std::mt19937_64 shared(static_cast<std::uint64_t>(s.m * 131 + s.n));  // same alpha on every rank
    const int p = g.p(), q = g.q();
    const int rs = s.sources ? 1 % p : 0, cs = s.sources ? q - 1 : 0;
    const index_t k = side == Side::Left ? s.m : s.n;
    const ResidentDevice dev = ResidentDevice::open("host", kCap);
    const BlockCyclic la(k, k, s.mba, s.nba, p, q, rs, cs), lb(s.m, s.n, s.mbb, s.nbb, p, q, cs % p, rs % q);
    DistMatrix<T> ha(g, la), hb(g, lb);  // fresh inputs, made in host memory
    test::randomize(hb.view());
    test::triangular(ha.view(), uplo, diag);
    const auto ga = gather(ha.view()), gb = gather(hb.view());
    ResidentMatrix<T> a(g, la, dev), b(g, lb, dev);
    scatter(ga.data(), std::max<index_t>(k, 1), a);
    scatter(gb.data(), std::max<index_t>(s.m, 1), b);
    const T alpha = alpha_zero ? T(0) : test::random_value<T>(shared) + T(1);
    ResidentGemmReport report;
    const ResidentPotrfOptions opts{.lookahead = lookahead, .report = &report};
    const Cost model = alpha_zero ? Cost{}
                                  : resident_trsm_cost(side, uplo, op, la, lb, opts, g.row(), g.col(), sizeof(T),
                                                       is_complex_v<T>);
    const std::int64_t used = dev.used_bytes();
    dev.get()->reset_peak();
    reset_traffic();

    trsm(side, uplo, op, diag, alpha, a, b, opts);

    const Traffic t = traffic();
    const std::int64_t extra = dev.peak_bytes() - used;
    const auto x = gather(b), a_after = gather(a);
    double err = 0;
    if (g.comm().rank() == 0)
        err = side == Side::Left ? test::trsm_residual(ga, k, uplo, op, diag, alpha, gb, x, s.n)
                                 : test::trsm_right_residual(ga, k, uplo, op, diag, alpha, gb, x, s.m);
    const bool a_same = std::equal(ga.begin(), ga.end(), a_after.begin(), a_after.end(),
                                   [](T u, T v) { return u == v || (u != u && v != v); });
    CAPTURE(p); CAPTURE(q); CAPTURE(s.m); CAPTURE(s.n); CAPTURE(static_cast<int>(side)); CAPTURE(uplo_char(uplo));
    CAPTURE(op_char(op)); CAPTURE(static_cast<int>(diag)); CAPTURE(alpha_zero); CAPTURE(lookahead); CAPTURE(err);
    CAPTURE(t.words()); CAPTURE(model.words); CAPTURE(t.msgs()); CAPTURE(model.msgs);
    CAPTURE(extra); CAPTURE(model.extra_bytes);
    CHECK(test::all_ranks(err < 4.0, g));
    CHECK(test::all_ranks(t.words() == model.words && t.words_recv == model.words_recv, g));
    CHECK(test::all_ranks(t.msgs() == model.msgs, g));
    CHECK(test::all_ranks(extra == model.extra_bytes, g));
    CHECK(test::all_ranks(alpha_zero || s.m == 0 || s.n == 0 || report.device_bytes == model.extra_bytes, g));
    CHECK(test::all_ranks(dev.used_bytes() == used, g));  // the workspace is given back
    CHECK(test::all_ranks(g.comm().rank() != 0 || a_same, g));
    if (alpha_zero)
        CHECK(test::all_ranks(std::all_of(x.begin(), x.end(), [](T v) { return v == T(0); }), g));
}

}  // namespace

TEST_CASE_TEMPLATE("resident trsm solves both sides and matches the model", T, float, double, std::complex<float>,
                   std::complex<double>) {
    int count = 0;
    test::for_each_grid([&](const Grid2D& g) {
        for (const Shape& s : kShapes)
            for (Side side : {Side::Left, Side::Right})
                for (Uplo uplo : {Uplo::Lower, Uplo::Upper})
                    for (Op op : {Op::N, Op::T, Op::C})
                        for (Diag diag : {Diag::NonUnit, Diag::Unit}) {
                            ++count;
                            if (!s.all_ops && count % 5 != 0) continue;
                            run_case<T>(g, s, side, uplo, op, diag, false, count % 2);
                        }
        run_case<T>(g, kShapes[4], Side::Right, Uplo::Upper, Op::C, Diag::NonUnit, true, 1);
        run_case<T>(g, kShapes[4], Side::Left, Uplo::Lower, Op::N, Diag::Unit, true, 0);
    });
}

TEST_CASE("the model: one rank moves nothing; more ranks move what the host trsm moves") {
    const BlockCyclic a1(50, 50, 8, 8, 1, 1), b1(50, 3, 8, 2, 1, 1);
    const Cost c1 = resident_trsm_cost(Side::Left, Uplo::Lower, Op::N, a1, b1, {}, 0, 0, 8, false);
    CHECK(c1.words == 0);
    CHECK(c1.msgs == 0);
    CHECK(c1.extra_bytes == 0);
    CHECK(c1.flops == doctest::Approx(50.0 * 50 * 3));
    const BlockCyclic a(77, 77, 6, 6, 2, 2, 1, 0), b(77, 9, 6, 4, 2, 2, 1, 1), br(9, 77, 4, 6, 2, 2, 0, 1);
    for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 2; ++c) {
            const Cost left = resident_trsm_cost(Side::Left, Uplo::Upper, Op::T, a, b, {.lookahead = 0}, r, c, 16, true);
            const Cost hl = trsm_cost(Side::Left, Uplo::Upper, Op::T, a, b, {.lookahead = 0}, r, c, 16, true);
            const Cost right = resident_trsm_cost(Side::Right, Uplo::Lower, Op::C, a, br, {}, r, c, 16, true);
            const Cost hr = trsm_cost(Side::Right, Uplo::Lower, Op::C, a, br, {}, r, c, 16, true);
            CHECK(left.words == hl.words);
            CHECK(left.msgs == hl.msgs);
            CHECK(right.words == hr.words);
            CHECK(right.msgs == hr.msgs);
            CHECK(right.words > 0);
            CHECK(left.extra_bytes > 0);
            CHECK(right.extra_bytes > 0);
        }
    CHECK(test::error_message([&] { resident_trsm_cost(Side::Right, Uplo::Lower, Op::N, a, b, {}, 0, 0, 8, false); })
              .find("trsm_cost: B has 9 columns but A is 77 x 77 (right side)") != std::string::npos);
    CHECK(test::error_message([&] {
              resident_trsm_cost(Side::Left, Uplo::Lower, Op::N, a, b, {.lookahead = 3}, 0, 0, 8, false);
          }).find("lookahead is 3") != std::string::npos);
}

TEST_CASE_TEMPLATE("in host memory on every rank: the host trsm, bit for bit", T, double, std::complex<float>) {
    test::for_each_grid([](const Grid2D& g) {
        for (Side side : {Side::Left, Side::Right}) {
            const index_t m = 19, n = 7, k = side == Side::Left ? m : n;
            const BlockCyclic la(k, k, 4, 4, g.p(), g.q()), lb(m, n, 3, 2, g.p(), g.q());
            DistMatrix<T> ha(g, la), hb(g, lb);
            test::randomize(hb.view());
            test::triangular(ha.view(), Uplo::Upper, Diag::NonUnit);
            const auto ga = gather(ha.view()), gb = gather(hb.view());
            ResidentMatrix<T> a(g, la, ResidentDevice{}), b(g, lb, ResidentDevice{});
            scatter(ga.data(), k, a);
            scatter(gb.data(), m, b);
            const T alpha(2);
            trsm(side, Uplo::Upper, Op::T, Diag::NonUnit, alpha, a, b);
            trsm(side, Uplo::Upper, Op::T, Diag::NonUnit, alpha, ha.view(), hb.view());
            CHECK(test::all_ranks(test::same_bits(gather(b), gather(hb.view())), g));
        }
    });
}

namespace {

}  // namespace

TEST_CASE("bad input: a clear cala::Error on every rank, B untouched") {
    using T = double;
    test::for_each_grid([](const Grid2D& g) {
        const ResidentDevice dev = ResidentDevice::open("host", kCap), other = ResidentDevice::open("host", kCap);
        const index_t n = 11, nrhs = 4;
        const BlockCyclic la(n, n, 3, 3, g.p(), g.q()), lb(n, nrhs, 3, 2, g.p(), g.q());
        DistMatrix<T> ha(g, la), hb(g, lb);
        test::randomize(hb.view());
        test::triangular(ha.view(), Uplo::Lower, Diag::NonUnit);
        const auto ga = gather(ha.view()), before = gather(hb.view());
        ResidentMatrix<T> a(g, la, dev), b(g, lb, dev);
        scatter(ga.data(), n, a);
        scatter(before.data(), n, b);
        const auto L = Side::Left, R = Side::Right;
        const auto lo = Uplo::Lower;
        const auto nu = Diag::NonUnit;
        ResidentMatrix<T> wide(g, n, n + 1, 3, 3, dev);
        CHECK(test::fails_everywhere(g, "trsm: A is 11 x 12, not square", [&] { trsm(L, lo, Op::N, nu, 1.0, wide, b); }));
        CHECK(test::fails_everywhere(g, "trsm: B has 4 columns but A is 11 x 11 (right side)",
                               [&] { trsm(R, lo, Op::N, nu, 1.0, a, b); }));
        CHECK(test::fails_everywhere(g, "trsm: side is 5", [&] { trsm(static_cast<Side>(5), lo, Op::N, nu, 1.0, a, b); }));
        CHECK(test::fails_everywhere(g, "trsm: diag is 3", [&] { trsm(L, lo, Op::N, static_cast<Diag>(3), 1.0, a, b); }));
        CHECK(test::fails_everywhere(g, "trsm: op is 9", [&] { trsm(L, lo, static_cast<Op>(9), nu, 1.0, a, b); }));
        CHECK(test::fails_everywhere(g, "trsm: lookahead is 2", [&] { trsm(L, lo, Op::N, nu, 1.0, a, b, {.lookahead = 2}); }));
        CHECK(test::fails_everywhere(g, "trsm: transport Nccl needs CUDA devices",
                               [&] { trsm(L, lo, Op::N, nu, 1.0, a, b, {.transport = PanelTransport::Nccl}); }));
        ResidentMatrix<T> bh(g, lb, ResidentDevice{}), bo(g, lb, other);
        scatter(before.data(), n, bh);
        scatter(before.data(), n, bo);
        CHECK(test::fails_everywhere(g, "trsm: B lives on host memory but A on host", [&] { trsm(L, lo, Op::N, nu, 1.0, a, bh); }));
        CHECK(test::fails_everywhere(g, "trsm: B lives on host#", [&] { trsm(L, lo, Op::N, nu, 1.0, a, bo); }));
        CHECK(test::all_ranks(test::same_bits(gather(bh), before) && test::same_bits(gather(bo), before), g));
        if (g.comm().size() > 1) {
            CHECK(test::fails_everywhere(g, "different arguments",
                                   [&] { trsm(L, lo, g.comm().rank() == 0 ? Op::T : Op::N, nu, 1.0, a, b); }));
            // Workspace that does not fit the device of the last rank (A and B fit).
            const bool last = g.comm().rank() == g.comm().size() - 1;
            const std::int64_t own = (la.rows.local_size(g.row()) * la.cols.local_size(g.col()) +
                                      lb.rows.local_size(g.row()) * lb.cols.local_size(g.col())) *
                                     std::int64_t(sizeof(T));
            const ResidentDevice tight = ResidentDevice::open("host", last ? std::max<std::int64_t>(own, 16) : kCap);
            ResidentMatrix<T> ta(g, la, tight), tb(g, lb, tight);
            scatter(ga.data(), n, ta);
            scatter(before.data(), n, tb);
            CHECK(test::fails_everywhere(g, "trsm: the resident solve needs", [&] { trsm(L, lo, Op::C, nu, 1.0, ta, tb); }));
            CHECK(test::all_ranks(test::same_bits(gather(tb), before), g));
        }
        CHECK(test::all_ranks(test::same_bits(gather(b), before), g));
        // After all that, the same operands still solve.
        trsm(L, lo, Op::N, nu, 1.0, a, b);
        const auto x = gather(b);
        CHECK(test::all_ranks(g.comm().rank() != 0 || test::trsm_residual(ga, n, lo, Op::N, nu, 1.0, before, x, nrhs) < 4.0, g));
    });
}

// cala::potrs on resident matrices, on HostDevice memory (issue 30, item 3): resident potrf then
// resident potrs on fresh random inputs, against the sequential reference on gathered data
// (‖A·X − B‖ / (n·‖A‖·‖X‖·eps)), traffic == resident_potrs_cost on every rank, the device's peak
// == the model's workspace, the host-memory path == the host cala::potrs bit for bit, bad input as
// cala::Error on every rank with B untouched.
// (run as: mpiexec.mpich -n N test_resident_potrs, N in {1, 2, 3, 4}: every p x q with p·q = N)

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "cala/resident.hpp"
#include "device/device.hpp"
#include "support/cholesky.hpp"
#include "support/helpers.hpp"

using namespace cala;

namespace {

constexpr std::int64_t kCap = std::int64_t{64} << 20;


// A: n x n in amb x anb blocks from (arsrc, acsrc); B: n x nrhs in bmb x bnb blocks from (brsrc, bcsrc).
struct Case {
    index_t n, nrhs, amb, anb, bmb, bnb;
    int arsrc, acsrc, brsrc, bcsrc;
};

// The whole of a fresh random n x cols matrix on rank 0.
template <class T>
std::vector<T> fresh(const Grid2D& g, index_t n, index_t cols) {
    std::vector<T> v;
    if (g.comm().rank() == 0)
        for (index_t i = 0; i < n * cols; ++i) v.push_back(test::random_value<T>(test::rng()));
    return v;
}

template <class T>
void run_case(const Grid2D& g, const Case& c, Uplo uplo, int potrf_lookahead) {
    const ResidentDevice dev = ResidentDevice::open("host", kCap);
    const BlockCyclic la(c.n, c.n, c.amb, c.anb, g.p(), g.q(), c.arsrc % g.p(), c.acsrc % g.q());
    const BlockCyclic lb(c.n, c.nrhs, c.bmb, c.bnb, g.p(), g.q(), c.brsrc % g.p(), c.bcsrc % g.q());
    const index_t ld = std::max<index_t>(c.n, 1);
    const std::vector<T> spd = g.comm().rank() == 0
                                   ? test::make_spd(std::vector<T>(static_cast<std::size_t>(c.n * c.n)), ld, 0, c.n, -1)
                                   : std::vector<T>{};
    ResidentMatrix<T> a(g, la, dev);
    scatter(spd.data(), ld, a);
    const index_t info = potrf(uplo, a, {.lookahead = potrf_lookahead});
    REQUIRE(test::all_ranks(info == 0, g));

    for (int lookahead : {0, 1}) {
        const std::vector<T> rhs = fresh<T>(g, c.n, c.nrhs);
        ResidentMatrix<T> b(g, lb, dev);
        scatter(rhs.data(), ld, b);
        ResidentGemmReport report;
        const ResidentPotrfOptions opts{.lookahead = lookahead, .report = &report};
        const Cost model = resident_potrs_cost(uplo, la, lb, opts, g.row(), g.col(), sizeof(T), is_complex_v<T>);
        const std::int64_t used = dev.used_bytes();
        dev.get()->reset_peak();
        reset_traffic();

        potrs(uplo, a, b, opts);

        const Traffic t = traffic();
        const std::int64_t extra = dev.peak_bytes() - used;
        const auto x = gather(b);
        const double res = g.comm().rank() == 0 ? test::potrs_residual(spd, c.n, rhs, x, c.nrhs) : 0.0;
        CAPTURE(g.p());
        CAPTURE(g.q());
        CAPTURE(c.n);
        CAPTURE(c.nrhs);
        CAPTURE(c.amb);
        CAPTURE(c.bmb);
        CAPTURE(uplo_char(uplo));
        CAPTURE(lookahead);
        CAPTURE(res);
        CAPTURE(t.words());
        CAPTURE(model.words);
        CAPTURE(t.msgs());
        CAPTURE(model.msgs);
        CAPTURE(extra);
        CAPTURE(model.extra_bytes);
        CHECK(test::all_ranks(res < 10.0, g));
        CHECK(test::all_ranks(t.words() == model.words && t.words_recv == model.words_recv, g));
        CHECK(test::all_ranks(t.msgs() == model.msgs, g));
        CHECK(test::all_ranks(extra == model.extra_bytes && report.device_bytes == model.extra_bytes, g));
        CHECK(test::all_ranks(dev.used_bytes() == used, g));  // the workspace is given back
        CHECK(test::all_ranks(report.transport == PanelTransport::Staged, g));
    }
}

// n = 0, 1, tiny, nb not dividing n, nrhs = 1 and several, non-zero source processes;
// B not lined up with A (moved: 2·nrhs < n), A's tiles not square or B wide (A moved).
constexpr Case kCases[] = {
    {0, 2, 4, 4, 4, 4, 0, 0, 0, 0},     {1, 1, 4, 4, 4, 4, 0, 0, 0, 0},    {3, 2, 4, 4, 4, 2, 1, 0, 1, 1},
    {13, 1, 4, 4, 4, 3, 0, 1, 0, 0},    {37, 5, 5, 5, 5, 2, 1, 1, 1, 0},   {64, 8, 8, 8, 8, 8, 0, 0, 0, 1},
    {26, 4, 4, 4, 3, 3, 0, 1, 0, 0},    {20, 12, 4, 4, 3, 5, 1, 0, 0, 1},  {30, 4, 3, 5, 4, 2, 0, 0, 1, 1},
};

}  // namespace

TEST_CASE_TEMPLATE("resident potrs matches the sequential reference and the model", T, float, double,
                   std::complex<float>, std::complex<double>) {
    int count = 0;
    test::for_each_grid([&](const Grid2D& g) {
        for (const Case& c : kCases)
            for (Uplo uplo : {Uplo::Lower, Uplo::Upper}) run_case<T>(g, c, uplo, ++count % 2);
    });
}

TEST_CASE("the model: one rank moves nothing; more ranks move what the host potrs moves") {
    const BlockCyclic a1(50, 50, 8, 8, 1, 1), b1(50, 3, 8, 2, 1, 1);
    const Cost c1 = resident_potrs_cost(Uplo::Lower, a1, b1, {}, 0, 0, 8, false);
    CHECK(c1.words == 0);
    CHECK(c1.msgs == 0);
    CHECK(c1.extra_bytes == 0);
    CHECK(c1.flops == doctest::Approx(2.0 * 50 * 50 * 3));
    const BlockCyclic a(77, 77, 6, 6, 2, 2, 1, 0), b(77, 9, 6, 4, 2, 2, 1, 1);
    for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 2; ++c) {
            const Cost res = resident_potrs_cost(Uplo::Upper, a, b, {.lookahead = 0}, r, c, 16, true);
            const Cost host = potrs_cost(Uplo::Upper, a, b, {.lookahead = 0}, r, c, 16, true);
            CHECK(res.words == host.words);
            CHECK(res.msgs == host.msgs);
            CHECK(res.words > 0);
            CHECK(res.extra_bytes > 0);
        }
    CHECK(test::error_message([&] { resident_potrs_cost(Uplo::Lower, a, b1, {}, 0, 0, 8, false); })
              .find("resident_potrs_cost: ") == 0);
    CHECK(test::error_message([&] { resident_potrs_cost(Uplo::Lower, a, b, {.lookahead = 3}, 0, 0, 8, false); })
              .find("lookahead is 3") != std::string::npos);
    CHECK(test::error_message([&] { resident_potrs_cost(Uplo::Lower, a, b, {}, 2, 0, 8, false); }) != "");
}

TEST_CASE_TEMPLATE("in host memory on every rank: the host potrs, bit for bit", T, double, std::complex<float>) {
    test::for_each_grid([](const Grid2D& g) {
        for (Uplo uplo : {Uplo::Lower, Uplo::Upper}) {
            const index_t n = 23, nrhs = 3;
            const BlockCyclic la(n, n, 4, 4, g.p(), g.q()), lb(n, nrhs, 3, 2, g.p(), g.q());
            const std::vector<T> spd =
                g.comm().rank() == 0 ? test::make_spd(std::vector<T>(static_cast<std::size_t>(n * n)), n, 0, n, -1)
                                     : std::vector<T>{};
            const std::vector<T> rhs = fresh<T>(g, n, nrhs);
            ResidentMatrix<T> a(g, la, ResidentDevice{}), b(g, lb, ResidentDevice{});
            scatter(spd.data(), n, a);
            scatter(rhs.data(), n, b);
            DistMatrix<T> ha(g, la), hb(g, lb);
            scatter(spd.data(), n, ha.view());
            scatter(rhs.data(), n, hb.view());

            REQUIRE(test::all_ranks(potrf(uplo, a) == 0 && potrf(uplo, ha.view()) == 0, g));
            potrs(uplo, a, b);
            potrs(uplo, ha.view(), hb.view());

            const auto x = gather(b), hx = gather(hb.view());
            CAPTURE(uplo_char(uplo));
            CHECK(test::all_ranks(test::same_bits(x, hx), g));
            CHECK(test::all_ranks(g.comm().rank() != 0 || test::potrs_residual(spd, n, rhs, x, nrhs) < 10.0, g));
        }
    });
}

namespace {

}  // namespace

TEST_CASE("bad input: a clear cala::Error on every rank, B untouched") {
    using T = double;
    test::for_each_grid([](const Grid2D& g) {
        const ResidentDevice dev = ResidentDevice::open("host", kCap), other = ResidentDevice::open("host", kCap);
        const index_t n = 11, nrhs = 2;
        const BlockCyclic la(n, n, 3, 3, g.p(), g.q()), lb(n, nrhs, 3, 2, g.p(), g.q());
        const std::vector<T> spd = g.comm().rank() == 0
                                       ? test::make_spd(std::vector<T>(static_cast<std::size_t>(n * n)), n, 0, n, -1)
                                       : std::vector<T>{};
        const std::vector<T> rhs = fresh<T>(g, n, nrhs);
        ResidentMatrix<T> a(g, la, dev), b(g, lb, dev);
        scatter(spd.data(), n, a);
        REQUIRE(test::all_ranks(potrf(Uplo::Lower, a) == 0, g));
        scatter(rhs.data(), n, b);
        const auto before = gather(b);
        auto untouched = [&](const ResidentMatrix<T>& m, const std::vector<T>& was) {
            const auto now = gather(m);
            return test::all_ranks(test::same_bits(now, was), g);
        };

        ResidentMatrix<T> wide(g, n, n + 1, 3, 3, dev), tall(g, n + 1, nrhs, 3, 2, dev);
        CHECK(test::fails_everywhere(g, "potrs: A must be square, got 11 x 12", [&] { potrs(Uplo::Lower, wide, b); }));
        CHECK(test::fails_everywhere(g, "potrs: B has 12 rows but A is 11 x 11", [&] { potrs(Uplo::Lower, a, tall); }));
        CHECK(test::fails_everywhere(g, "potrs: uplo is 7", [&] { potrs(static_cast<Uplo>(7), a, b); }));
        CHECK(test::fails_everywhere(g, "potrs: lookahead is 2", [&] { potrs(Uplo::Lower, a, b, {.lookahead = 2}); }));
        CHECK(test::fails_everywhere(g, "potrs: transport is 9",
                               [&] { potrs(Uplo::Lower, a, b, {.transport = static_cast<PanelTransport>(9)}); }));
        CHECK(test::fails_everywhere(g, "potrs: transport Nccl needs CUDA devices",
                               [&] { potrs(Uplo::Upper, a, b, {.transport = PanelTransport::Nccl}); }));
        // A on a device, B in host memory; A and B on two devices; A on another grid.
        ResidentMatrix<T> bh(g, lb, ResidentDevice{}), bo(g, lb, other);
        scatter(rhs.data(), n, bh);
        scatter(rhs.data(), n, bo);
        CHECK(test::fails_everywhere(g, "potrs: B lives on host memory but A on host", [&] { potrs(Uplo::Lower, a, bh); }));
        CHECK(test::fails_everywhere(g, "potrs: B lives on host#", [&] { potrs(Uplo::Lower, a, bo); }));
        const Grid2D g2(g.comm(), g.p(), g.q(), GridOrder::ColumnMajor);
        ResidentMatrix<T> a2(g2, la, dev);
        CHECK(test::fails_everywhere(g, "potrs: A lives on a different process grid", [&] { potrs(Uplo::Lower, a2, b); }));
        CHECK(untouched(bh, before));
        CHECK(untouched(bo, before));
        if (g.comm().size() > 1) {
            // Ranks that disagree on uplo; ranks on different kinds of memory.
            CHECK(test::fails_everywhere(g, "different arguments",
                                   [&] { potrs(g.comm().rank() == 0 ? Uplo::Upper : Uplo::Lower, a, b); }));
            const ResidentDevice mine = g.comm().rank() == 0 ? ResidentDevice{} : dev;
            ResidentMatrix<T> ma(g, la, mine), mb(g, lb, mine);
            scatter(rhs.data(), n, mb);
            CHECK(test::fails_everywhere(g, "potrs: the operands live on host memory on some ranks and on a HostDevice",
                                   [&] { potrs(Uplo::Lower, ma, mb); }));
            CHECK(untouched(mb, before));
            // Workspace that does not fit the device of the last rank (A and B fit).
            const bool last = g.comm().rank() == g.comm().size() - 1;
            const std::int64_t own = (la.rows.local_size(g.row()) * la.cols.local_size(g.col()) +
                                      lb.rows.local_size(g.row()) * lb.cols.local_size(g.col())) *
                                     std::int64_t(sizeof(T));
            const ResidentDevice tight = ResidentDevice::open("host", last ? std::max<std::int64_t>(own, 16) : kCap);
            ResidentMatrix<T> ta(g, la, tight), tb(g, lb, tight);
            scatter(spd.data(), n, ta);
            scatter(rhs.data(), n, tb);
            CHECK(test::fails_everywhere(g, "potrs: the resident solve needs", [&] { potrs(Uplo::Lower, ta, tb); }));
            CHECK(untouched(tb, before));
            CHECK(test::all_ranks(tight.used_bytes() == own || !last, g));
        }
        CHECK(untouched(b, before));

        // After all that, the same operands still solve.
        potrs(Uplo::Lower, a, b);
        const auto x = gather(b);
        CHECK(test::all_ranks(g.comm().rank() != 0 || test::potrs_residual(spd, n, rhs, x, nrhs) < 10.0, g));
    });
}

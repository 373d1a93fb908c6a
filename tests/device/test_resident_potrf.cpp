// cala::potrf on resident matrices, on HostDevice memory (issue 30, item 3): against the
// sequential reference (‖A − L·Lᴴ‖ / (n·‖A‖·eps)) and the host cala::potrf on the same input,
// traffic == resident_potrf_cost on every rank, the device slots == the model's, info of a matrix
// that is not positive definite on every rank, bad input as cala::Error on every rank.
// (run as: mpiexec.mpich -n N test_resident_potrf, N in {1, 2, 3, 4}: every p x q with p·q = N)

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "cala/resident.hpp"
#include "device/device.hpp"
#include "support/cholesky.hpp"
#include "support/helpers.hpp"

using namespace cala;

namespace {

constexpr std::int64_t kCap = std::int64_t{64} << 20;


struct Case {
    index_t n, mb, nb;
    int rsrc, csrc;
};

// A fresh random SPD matrix (its minor bad + 1 failing when bad >= 0), on rank 0.
template <class T>
std::vector<T> fresh_spd(const Grid2D& g, index_t n, index_t bad) {
    if (g.comm().rank() != 0) return {};
    return test::make_spd(std::vector<T>(static_cast<std::size_t>(n * n)), std::max<index_t>(n, 1), 0, n, bad);
}

template <class T>
void run_case(const Grid2D& g, const Case& c, Uplo uplo, int lookahead, index_t bad = -1) {
    const ResidentDevice dev = ResidentDevice::open("host", kCap);
    const BlockCyclic l(c.n, c.n, c.mb, c.nb, g.p(), g.q(), c.rsrc % g.p(), c.csrc % g.q());
    const std::vector<T> spd = fresh_spd<T>(g, c.n, bad);
    const index_t ld = std::max<index_t>(c.n, 1);
    ResidentMatrix<T> a(g, l, dev);
    scatter(spd.data(), ld, a);
    DistMatrix<T> h(g, l);
    scatter(spd.data(), ld, h.view());
    const index_t host_info = potrf(uplo, h.view());
    const ResidentPotrfOptions opts{.lookahead = lookahead};
    const Cost model = resident_potrf_cost(uplo, l, opts, g.row(), g.col(), sizeof(T), is_complex_v<T>);
    const std::int64_t used = dev.used_bytes();
    dev.get()->reset_peak();
    reset_traffic();

    const index_t info = potrf(uplo, a, opts);

    const Traffic t = traffic();
    const std::int64_t extra = dev.peak_bytes() - used;
    const auto f = gather(a), hf = gather(h.view());
    double err = 0, gap = 0;
    bool untouched = true;
    if (g.comm().rank() == 0 && bad < 0) {
        err = test::factor_error(spd, f, ld, 0, c.n, uplo);
        gap = test::factor_gap(f, hf, c.n, uplo);
        untouched = test::rest_untouched(spd, f, ld, 0, c.n, uplo);
    }
    CAPTURE(g.p());
    CAPTURE(g.q());
    CAPTURE(c.n);
    CAPTURE(c.mb);
    CAPTURE(c.nb);
    CAPTURE(uplo_char(uplo));
    CAPTURE(lookahead);
    CAPTURE(bad);
    CAPTURE(t.words());
    CAPTURE(model.words);
    CAPTURE(extra);
    CAPTURE(model.extra_bytes);
    CHECK(test::all_ranks(info == (bad < 0 ? 0 : bad + 1) && info == host_info, g));
    CHECK(test::all_ranks(err < 30.0, g));
    CHECK(test::all_ranks(gap < 30.0, g));
    CHECK(test::all_ranks(untouched, g));
    CHECK(test::all_ranks(t.words() == model.words && t.words_recv == model.words_recv, g));
    CHECK(test::all_ranks(t.msgs() == model.msgs, g));
    CHECK(test::all_ranks(extra == model.extra_bytes, g));
    CHECK(test::all_ranks(dev.used_bytes() == used, g));  // the slots are given back
}

// (mb != nb: redistributed into nb x nb tiles on the device and back, counted in the model.)
constexpr Case kCases[] = {{0, 4, 4, 0, 0},  {1, 4, 4, 0, 0},  {3, 4, 4, 1, 0},  {13, 4, 4, 0, 1},
                           {37, 5, 5, 1, 1}, {64, 8, 8, 0, 0}, {29, 3, 5, 1, 0}, {40, 8, 4, 0, 1}};

}  // namespace

TEST_CASE_TEMPLATE("resident potrf matches the sequential reference, the host potrf and the model", T, float, double,
                   std::complex<float>, std::complex<double>) {
    int count = 0;
    test::for_each_grid([&](const Grid2D& g) {
        for (const Case& c : kCases)
            for (Uplo uplo : {Uplo::Lower, Uplo::Upper}) run_case<T>(g, c, uplo, ++count % 2);
    });
}

TEST_CASE_TEMPLATE("a matrix that is not positive definite: the first failed minor on every rank", T, double,
                   std::complex<float>) {
    test::for_each_grid([&](const Grid2D& g) {
        for (Uplo uplo : {Uplo::Lower, Uplo::Upper})
            for (index_t bad : {0, 6, 17, 28}) run_case<T>(g, {29, 4, 4, 1, 0}, uplo, bad % 2 == 0, bad);
    });
}

TEST_CASE("the model: one rank moves nothing; Lower equals cala::potrf's 2D model") {
    const BlockCyclic one(100, 100, 16, 16, 1, 1);
    const Cost c1 = resident_potrf_cost(Uplo::Lower, one, {}, 0, 0, 8, false);
    CHECK(c1.words == 0);
    CHECK(c1.msgs == 0);
    CHECK(c1.extra_bytes == 0);
    CHECK(c1.flops == doctest::Approx(1e6 / 3.0));
    // Lower on a square-tiled layout: the host engine's 2D schedule (lib/cholesky), message for message.
    for (auto [p, q] : {std::pair{2, 2}, std::pair{1, 3}, std::pair{3, 2}}) {
        const BlockCyclic l(77, 77, 6, 6, p, q, p - 1, 0);
        for (int r = 0; r < p; ++r)
            for (int c = 0; c < q; ++c) {
                const Cost res = resident_potrf_cost(Uplo::Lower, l, {}, r, c, 8, false);
                const Cost host = potrf_cost(Uplo::Lower, l, GridOrder::RowMajor, {.variant = CholeskyVariant::TwoD},
                                             r * q + c, 8, false);
                CAPTURE(p);
                CAPTURE(q);
                CHECK(res.words == host.words);
                CHECK(res.words_recv == host.words_recv);
                CHECK(res.msgs == host.msgs);
                CHECK(res.flops == doctest::Approx(host.flops));
                // Upper on the transposed grid is Lower's traffic on the transposed process.
                const BlockCyclic lt(77, 77, 6, 6, q, p, 0, p - 1);
                const Cost up = resident_potrf_cost(Uplo::Upper, lt, {}, c, r, 8, false);
                CHECK(up.words == res.words);
                CHECK(up.msgs == res.msgs);
            }
    }
}

namespace {

}  // namespace

TEST_CASE("bad input: a clear cala::Error on every rank, A untouched") {
    using T = double;
    test::for_each_grid([](const Grid2D& g) {
        const ResidentDevice dev = ResidentDevice::open("host", kCap);
        const BlockCyclic l(11, 11, 3, 3, g.p(), g.q());
        const std::vector<T> spd = fresh_spd<T>(g, 11, -1);
        ResidentMatrix<T> a(g, l, dev);
        scatter(spd.data(), 11, a);
        const auto before = gather(a);

        ResidentMatrix<T> wide(g, 11, 12, 3, 3, dev);
        CHECK(test::fails_everywhere(g, "potrf: A must be square, got 11 x 12", [&] { potrf(Uplo::Lower, wide); }));
        CHECK(test::fails_everywhere(g, "potrf: uplo is 7", [&] { potrf(static_cast<Uplo>(7), a); }));
        CHECK(test::fails_everywhere(g, "lookahead is 2", [&] { potrf(Uplo::Lower, a, {.lookahead = 2}); }));
        CHECK(test::fails_everywhere(g, "transport Nccl needs CUDA devices",
                               [&] { potrf(Uplo::Upper, a, {.transport = PanelTransport::Nccl}); }));
        if (g.comm().size() > 1) {
            // Ranks that disagree on uplo; ranks on different kinds of memory.
            CHECK(test::fails_everywhere(g, "different arguments",
                                   [&] { potrf(g.comm().rank() == 0 ? Uplo::Upper : Uplo::Lower, a); }));
            const ResidentDevice mine = g.comm().rank() == 0 ? ResidentDevice{} : dev;
            ResidentMatrix<T> mixed(g, l, mine);
            CHECK(test::fails_everywhere(g, "on some ranks", [&] { potrf(Uplo::Lower, mixed); }));
            // Slots that do not fit the device of the last rank.
            const bool last = g.comm().rank() == g.comm().size() - 1;
            const std::int64_t own = l.rows.local_size(g.row()) * l.cols.local_size(g.col()) * std::int64_t(sizeof(T));
            const ResidentDevice tight = ResidentDevice::open("host", last ? std::max<std::int64_t>(own, 8) : kCap);
            ResidentMatrix<T> t(g, l, tight);
            scatter(spd.data(), 11, t);
            const auto t_before = gather(t);
            CHECK(test::fails_everywhere(g, "bytes of workspace on", [&] { potrf(Uplo::Lower, t); }));
            const auto t_after = gather(t);
            CHECK(test::all_ranks(t_after == t_before, g));
        }
        const auto after = gather(a);
        CHECK(test::all_ranks(after == before, g));

        // In host memory on every rank: the host algorithm on its view.
        ResidentMatrix<T> on_host(g, l, ResidentDevice{});
        scatter(spd.data(), 11, on_host);
        const index_t info = potrf(Uplo::Lower, on_host);
        const auto f = gather(on_host);
        CHECK(test::all_ranks(info == 0 && (g.comm().rank() != 0 || test::factor_error(spd, f, 11, 0, 11, Uplo::Lower) < 30), g));
    });
}

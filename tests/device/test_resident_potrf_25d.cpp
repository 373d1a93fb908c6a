// The replicated-diagonal 2.5D Cholesky on resident matrices (issue 30, item 3), on HostDevice
// memory: every p x q x h grid with h >= 2 the world holds (idle ranks included), Repl and
// ReplPart, both triangles, layouts converted or not, against the sequential reference and the
// host cala::potrf with the same options; traffic == resident_potrf_cost == the host's potrf_cost
// on every rank, the device's peak workspace == its extra_bytes; the planner (Auto); info of a
// matrix that is not positive definite; bad input as cala::Error on every rank, A untouched.
// (run as: mpiexec.mpich -n N test_resident_potrf_25d, N in {2, 3, 4})

#include <doctest/doctest.h>

#include "cala/resident.hpp"
#include "device/device.hpp"
#include "support/cholesky.hpp"
#include "support/helpers.hpp"

using namespace cala;

namespace {

constexpr std::int64_t kCap = std::int64_t{64} << 20;

// Every p x q x h shape with h >= 2 over at most `ranks` ranks.
std::vector<Shape3D> shapes(int ranks) {
    std::vector<Shape3D> out;
    for (int h = 2; h <= ranks; ++h)
        for (int p = 1; p * h <= ranks; ++p)
            for (int q = 1; p * q * h <= ranks; ++q) out.push_back({p, q, h});
    return out;
}

struct Case {
    index_t n, mb, nb, block_size;
};

// (mb != nb or block_size: the layered layout's tiles differ from A's.)
constexpr Case kCases[] = {{1, 4, 4, 0}, {13, 4, 4, 0}, {37, 5, 5, 0}, {29, 3, 5, 0}, {40, 8, 8, 3}, {24, 2, 2, 0}};

struct Run {
    Shape3D g3;
    CholeskyVariant variant;
    int lookahead = 1;
    index_t bad = -1;
    std::int64_t memory_limit = 0;
};

// The squarest grid of the world in the given order (collective).
Grid2D world_grid(GridOrder order) {
    const Comm w = Comm::borrow(MPI_COMM_WORLD);
    const auto [p, q] = Grid2D::squarest(w.size());
    return Grid2D(w, p, q, order);
}

template <class T>
void run_case(const Grid2D& g, const Case& c, Uplo uplo, const Run& run) {
    const ResidentDevice dev = ResidentDevice::open("host", kCap);
    const BlockCyclic l(c.n, c.n, c.mb, c.nb, g.p(), g.q(), g.p() - 1, 0);
    const index_t ld = std::max<index_t>(c.n, 1);
    const std::vector<T> spd = g.comm().rank() == 0 ? test::make_spd(std::vector<T>(std::size_t(c.n * c.n)), ld, 0, c.n, run.bad)
                                                    : std::vector<T>{};
    ResidentMatrix<T> a(g, l, dev);
    scatter(spd.data(), ld, a);
    // The host's 2.5D path with the same options on the same input.
    DistMatrix<T> h(g, l);
    scatter(spd.data(), ld, h.view());
    const CholeskyOptions ho{.variant = run.variant, .lookahead = run.lookahead, .grid3d = run.g3,
                             .block_size = c.block_size, .memory_limit_bytes = run.memory_limit};
    const index_t host_info = potrf(uplo, h.view(), ho);
    ResidentGemmReport report;
    ResidentPotrfOptions o{.lookahead = run.lookahead, .report = &report, .variant = run.variant, .grid3d = run.g3,
                           .block_size = c.block_size, .memory_limit_bytes = run.memory_limit};
    const std::int64_t used = dev.used_bytes();
    dev.get()->reset_peak();
    reset_traffic();

    const index_t info = potrf(uplo, a, o);

    const Traffic t = traffic();
    const std::int64_t extra = dev.peak_bytes() - used;
    o.report = nullptr;
    const Cost model = resident_potrf_cost(uplo, l, o, g.row(), g.col(), sizeof(T), is_complex_v<T>, g.order());
    const Cost host = potrf_cost(uplo, l, g.order(), ho, g.comm().rank(), sizeof(T), is_complex_v<T>);
    const auto f = gather(a), hf = gather(h.view());
    double err = 0, gap = 0;
    bool untouched = true;
    if (g.comm().rank() == 0 && run.bad < 0) {
        err = test::factor_error(spd, f, ld, 0, c.n, uplo);
        gap = test::factor_gap(f, hf, c.n, uplo);
        untouched = test::rest_untouched(spd, f, ld, 0, c.n, uplo);
    }
    CAPTURE(g.p());
    CAPTURE(g.q());
    CAPTURE(run.g3.p);
    CAPTURE(run.g3.q);
    CAPTURE(run.g3.c);
    CAPTURE(to_string(run.variant));
    CAPTURE(c.n);
    CAPTURE(c.mb);
    CAPTURE(c.nb);
    CAPTURE(c.block_size);
    CAPTURE(uplo_char(uplo));
    CAPTURE(run.lookahead);
    CAPTURE(run.bad);
    CAPTURE(err);
    CAPTURE(gap);
    CAPTURE(t.words());
    CAPTURE(model.words);
    CAPTURE(host.words);
    CAPTURE(t.msgs());
    CAPTURE(model.msgs);
    CAPTURE(extra);
    CAPTURE(model.extra_bytes);
    CHECK(test::all_ranks(info == (run.bad < 0 ? 0 : run.bad + 1) && info == host_info, g));
    CHECK(test::all_ranks(err < 30.0, g));
    CHECK(test::all_ranks(gap < 30.0, g));
    CHECK(test::all_ranks(untouched, g));
    CHECK(test::all_ranks(t.words() == model.words && t.words_recv == model.words_recv && t.msgs() == model.msgs, g));
    CHECK(test::all_ranks(model.words == host.words && model.msgs == host.msgs, g));
    CHECK(test::all_ranks(extra == model.extra_bytes && report.device_bytes == model.extra_bytes, g));
    CHECK(test::all_ranks(dev.used_bytes() == used, g));  // the workspace is given back
    // The grid that ran: the host planner's (plan_potrf) with the same options (zero: 2D on A's grid).
    const CholeskyPlanInfo pi = plan_potrf(uplo, l, g.order(), ho, sizeof(T), is_complex_v<T>);
    const Shape3D want = pi.grid.c > 1 ? pi.grid : Shape3D{};
    CAPTURE(pi.describe());
    CHECK(test::all_ranks(report.grid3d.p == want.p && report.grid3d.q == want.q && report.grid3d.c == want.c, g));
    if (run.g3.c > 0) CHECK(test::all_ranks(report.grid3d.c == run.g3.c, g));
}

}  // namespace

TEST_CASE_TEMPLATE("resident 2.5D potrf: every layered grid against the reference, the host and the model", T, float,
                   double, std::complex<float>, std::complex<double>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    int count = 0;
    for (GridOrder order : {GridOrder::RowMajor, GridOrder::ColumnMajor}) {
        const Grid2D g = world_grid(order);
        for (const Shape3D sh : shapes(world.size()))
            for (const Case& c : kCases)
                for (Uplo uplo : {Uplo::Lower, Uplo::Upper})
                    for (CholeskyVariant v : {CholeskyVariant::Repl, CholeskyVariant::ReplPart}) {
                        if (order == GridOrder::ColumnMajor && (uplo == Uplo::Upper || c.n < 20)) continue;
                        ++count;
                        run_case<T>(g, c, uplo, {.g3 = sh, .variant = v, .lookahead = count % 2});
                    }
    }
}

TEST_CASE_TEMPLATE("resident 2.5D potrf of a matrix that is not positive definite: the first failed minor", T, double,
                   std::complex<float>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D g = world_grid(GridOrder::RowMajor);
    for (const Shape3D sh : shapes(world.size()))
        for (Uplo uplo : {Uplo::Lower, Uplo::Upper})
            for (index_t bad : {0, 6, 17, 28})
                run_case<T>(g, {29, 4, 4, 0}, uplo,
                            {.g3 = sh, .variant = bad % 2 ? CholeskyVariant::Repl : CholeskyVariant::ReplPart,
                             .lookahead = bad % 3 == 0, .bad = bad});
}

TEST_CASE("resident potrf with Auto, or Repl without a grid: the host planner's grid, the same traffic as the host") {
    const Grid2D g = world_grid(GridOrder::RowMajor);
    for (std::int64_t limit : {std::int64_t{0}, std::int64_t{1} << 20})
        for (const Case& c : {Case{48, 4, 4, 0}, Case{96, 8, 8, 0}})
            for (CholeskyVariant v : {CholeskyVariant::Auto, CholeskyVariant::Repl, CholeskyVariant::ReplPart})
                run_case<double>(g, c, Uplo::Lower, {.g3 = {}, .variant = v, .memory_limit = limit});
}

TEST_CASE("resident 2.5D potrf: bad input is a clear cala::Error on every rank, A untouched") {
    using T = double;
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D g = world_grid(GridOrder::RowMajor);
    const int n = world.size();
    const ResidentDevice dev = ResidentDevice::open("host", kCap);
    const BlockCyclic l(11, 11, 3, 3, g.p(), g.q());
    const std::vector<T> spd =
        world.rank() == 0 ? test::make_spd(std::vector<T>(121), 11, 0, 11, -1) : std::vector<T>{};
    ResidentMatrix<T> a(g, l, dev);
    scatter(spd.data(), 11, a);
    const auto before = gather(a);
    const auto repl = [](Shape3D s) { return ResidentPotrfOptions{.variant = CholeskyVariant::Repl, .grid3d = s}; };
    CHECK(test::fails_everywhere(g, "needs " + std::to_string(n + 1) + " ranks",
                                 [&] { potrf(Uplo::Lower, a, repl({1, 1, n + 1})); }));
    CHECK(test::fails_everywhere(g, "grid3d must give p, q and h together", [&] { potrf(Uplo::Lower, a, repl({0, 1, 2})); }));
    CHECK(test::fails_everywhere(g, "not a CholeskyVariant",
                                 [&] { potrf(Uplo::Lower, a, {.variant = static_cast<CholeskyVariant>(9)}); }));
    CHECK(test::fails_everywhere(g, "block_size must be >= 0",
                                 [&] { potrf(Uplo::Lower, a, {.variant = CholeskyVariant::Repl, .block_size = -2}); }));
    CHECK(test::fails_everywhere(g, "grid3d is for the 2.5D variants",
                                 [&] { potrf(Uplo::Lower, a, {.variant = CholeskyVariant::TwoD, .grid3d = {1, 1, 2}}); }));
    CHECK(test::fails_everywhere(g, "no plan fits the memory limit", [&] {
        potrf(Uplo::Lower, a, {.variant = CholeskyVariant::Auto, .memory_limit_bytes = 8});
    }));
    if (n > 1) {
        // Ranks that disagree on the grid.
        CHECK(test::fails_everywhere(g, "different arguments",
                                     [&] { potrf(Uplo::Lower, a, repl({1, 1, world.rank() == 0 ? 2 : 1})); }));
        // A layer share that does not fit the device of the last rank (A itself does; h = n: no rank idle).
        const bool last = world.rank() == n - 1;
        const std::int64_t own = l.rows.local_size(g.row()) * l.cols.local_size(g.col()) * std::int64_t(sizeof(T));
        const ResidentDevice tight = ResidentDevice::open("host", last ? std::max<std::int64_t>(own, 8) : kCap);
        ResidentMatrix<T> t(g, l, tight);
        scatter(spd.data(), 11, t);
        const auto t_before = gather(t);
        CHECK(test::fails_everywhere(g, "bytes of workspace on", [&] { potrf(Uplo::Lower, t, repl({1, 1, n})); }));
        const auto t_after = gather(t);
        CHECK(test::all_ranks(t_after == t_before, g));
    }
    const auto after = gather(a);
    CHECK(test::all_ranks(after == before, g));
    // In host memory on every rank: the host's layered algorithm on its view.
    ResidentMatrix<T> on_host(g, l, ResidentDevice{});
    scatter(spd.data(), 11, on_host);
    const index_t info = potrf(Uplo::Lower, on_host, repl({1, 1, std::min(n, 2)}));
    const auto f = gather(on_host);
    CHECK(test::all_ranks(info == 0 && (world.rank() != 0 || test::factor_error(spd, f, 11, 0, 11, Uplo::Lower) < 30), g));
}

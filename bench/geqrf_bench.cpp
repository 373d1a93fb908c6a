// cala-bench geqrf: cala::geqrf against ScaLAPACK's p?geqrf, same run, same matrix.
//
// cala-bench geqrf -> cala::geqrf (CAQR: TSQR panels, lookahead) | scalapack_qr (p?geqrf_)
//
// Measurement (STYLE.md section 7): one warm-up run, not reported; then each run is barrier,
// time, barrier, and a run's time is the maximum over ranks. A is reset to the same random
// matrix before every run (not timed). The last factorization is checked with a random probe:
// ‖A·x − Q·(R·x)‖∞ / (n·‖A‖max·‖x‖∞·eps·n), Q applied by cala::ormqr on cala's output (LAPACK
// format), R its upper trapezoid.
//
// --count-only: one run, no timing: words and messages per rank, measured and modeled.

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cala/cala.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "concurrent_ref.hpp"
#include "kernels/lapack_qr.hpp"
#include "scalapack_qr.hpp"

namespace cala::bench {

namespace {

struct GeqrfArgs {
    index_t m = 0, n = 4096, nb = 256;
    std::string grid, compare = "none", type = "d";
    int runs = 3, threads = 0, lookahead = 1, delay = 0;
    std::string variant = "auto";
    bool count_only = false;
    std::string trace;
    std::string threads_from;
};

template <class T>
double probe_error(const DistMatrix<T>& a0, const DistMatrix<T>& f, const std::vector<T>& tau, std::uint64_t seed) {
    const Grid2D& g = f.grid();
    const index_t m = f.m(), n = f.n(), nb = f.layout().rows.nb, k = std::min(m, n);
    DistMatrix<T> r(g, f.layout()), x(g, n, 1, nb, nb), y(g, m, 1, nb, nb), z(g, m, 1, nb, nb);
    for (index_t jl = 0; jl < f.n_loc(); ++jl) {
        const index_t j = f.layout().cols.to_global(jl, g.col());
        for (index_t il = 0; il < f.m_loc(); ++il)
            r.local(il, jl) = f.layout().rows.to_global(il, g.row()) <= j ? f.local(il, jl) : T(0);
    }
    fill_random<T>(x, seed);
    gemm<T>(Op::N, Op::N, T(1), a0, x, T(0), y);
    gemm<T>(Op::N, Op::N, T(1), r, x, T(0), z);
    ormqr<T>(Side::Left, Op::N, f.sub(0, 0, m, k), tau, z);
    double v[3] = {0, 0, 0};
    for (index_t i = 0; i < y.m_loc() * y.n_loc(); ++i) v[0] = std::max(v[0], double(std::abs(y.data()[i] - z.data()[i])));
    for (index_t jl = 0; jl < a0.n_loc(); ++jl)
        for (index_t il = 0; il < a0.m_loc(); ++il) v[1] = std::max(v[1], double(std::abs(a0.local(il, jl))));
    for (index_t i = 0; i < x.m_loc() * x.n_loc(); ++i) v[2] = std::max(v[2], double(std::abs(x.data()[i])));
    MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_DOUBLE, MPI_MAX, g.comm().get());
    return v[0] == 0 ? 0 : v[0] / (double(n) * v[1] * v[2] * double(eps<T>()) * double(std::max(m, n)));
}

template <class T>
void run_geqrf(const GeqrfArgs& args, int p, int q) {
    const index_t m = args.m > 0 ? args.m : args.n, n = args.n, nb = args.nb, k = std::min(m, n);
    omp_set_num_threads(args.threads);
    touch_blas<T>();
    Grid2D grid(Comm::borrow(MPI_COMM_WORLD), p, q);
    MPI_Comm comm = grid.comm().get();
    const std::uint64_t seed = fresh_seed(comm);
    DistMatrix<T> a0(grid, m, n, nb, nb), a(grid, m, n, nb, nb);
    fill_random<T>(a0, seed);
    // 2mn² − 2n³/3 (m >= n) multiply-adds·2, and its transpose for m < n.
    const double fma = is_complex_v<T> ? 8.0 : 2.0;
    const double big = double(std::max(m, n)), sm = double(k);
    const double flops = fma * (big * sm * sm - sm * sm * sm / 3.0);

    double scalapack_best = 0;
    nlohmann::ordered_json sref;
    if (args.compare == "scalapack" && !args.count_only) {
        BlacsGrid blacs(p, q);
        std::vector<T> stau;
        const Times ts = time_runs("geqrf", "ScaLAPACK p?geqrf", args.runs, comm, [&] { copy_local<T>(a0, a); },
                                   [&] { pgeqrf<T>(blacs, a, stau); });
        scalapack_best = ts.best();
        sref = {{"scalapack_time_s", ts.best()}, {"scalapack_time_median_s", ts.median()}, {"scalapack_times_s", ts.runs},
                {"scalapack_gflops", flops / ts.best() / 1e9}};
    }
    const QrVariant variant = args.variant == "2D" ? QrVariant::TwoD : args.variant == "1xP" ? QrVariant::OneRow : QrVariant::Auto;
    const QrOptions opts{.lookahead = args.lookahead, .delay = args.delay, .variant = variant};
    Traffic tr;
    std::int64_t extra = 0;
    std::vector<T> tau;
    const Times tc = time_runs("geqrf", "cala::geqrf", args.count_only ? 1 : args.runs, comm, [&] { copy_local<T>(a0, a); },
                               [&] {
                                   reset_traffic();
                                   reset_peak_memory();
                                   const std::int64_t before = memory_stats().current_bytes;
                                   geqrf<T>(a, tau, opts);
                                   tr = traffic();
                                   extra = std::max(extra, memory_stats().peak_bytes - before);
                               });
    const Cost model = geqrf_cost(a.layout(), opts, grid.row(), grid.col(), sizeof(T), is_complex_v<T>);
    const std::int64_t mismatch =
        (tr.words() != model.words || tr.words_recv != model.words_recv || tr.msgs() != model.msgs) ? 1 : 0;
    nlohmann::ordered_json j = {
        {"bench", "geqrf"}, {"type", args.type}, {"m", m}, {"n", n}, {"nb", nb},
        {"grid", std::to_string(p) + "x" + std::to_string(q)}, {"lookahead", args.lookahead},
        {"variant", to_string(geqrf_variant(a.layout(), opts, sizeof(T)))},
        {"delay", geqrf_delay(a.layout(), opts, sizeof(T))},
        {"qr_panel", kernels::panel_qr_choice().reason},  // rank 0's (each rank measures its own)
        {"ranks", grid.comm().size()}, {"threads", args.threads}, {"threads_from", args.threads_from},
        {"runs", args.count_only ? 1 : args.runs},
        {"words_max", max_over_ranks(tr.words(), comm)}, {"words_model_max", max_over_ranks(model.words, comm)},
        {"msgs_max", max_over_ranks(tr.msgs(), comm)}, {"msgs_model_max", max_over_ranks(model.msgs, comm)},
        {"ranks_model_mismatch", max_over_ranks(mismatch, comm) > 0 ? "yes" : "none"},
        {"extra_bytes_max", max_over_ranks(extra, comm)}, {"extra_bytes_model_max", max_over_ranks(model.extra_bytes, comm)},
    };
    if (!args.trace.empty() && !args.count_only) {
        copy_local<T>(a0, a);
        j["trace_file"] = args.trace;
        j["trace_time_s"] = traced_run(comm, args.trace, [&] { geqrf<T>(a, tau, opts); });
    }
    if (!args.count_only) {
        j["time_s"] = tc.best();
        j["time_median_s"] = tc.median();
        j["times_s"] = tc.runs;
        j["gflops"] = flops / tc.best() / 1e9;
        j["check_error"] = probe_error<T>(a0, a, tau, seed ^ 5);
        if (scalapack_best > 0) {
            for (auto& [key, v] : sref.items()) j[key] = v;
            j["speedup_vs_scalapack"] = scalapack_best / tc.best();
        }
    }
    emit(j);
}

void run(const GeqrfArgs& in) {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    GeqrfArgs args = in;
    int p = 0, q = 0;
    if (args.grid.empty()) {
        std::tie(p, q) = Grid2D::squarest(size);
    } else if (char x = 0; std::sscanf(args.grid.c_str(), "%d%c%d", &p, &x, &q) != 3 || p < 1 || q < 1) {
        throw CLI::ValidationError("--grid", "is '" + args.grid + "', expected PxQ");
    }
    if (p * q != size)
        throw CLI::ValidationError("--grid", std::to_string(p) + "x" + std::to_string(q) + " needs " +
                                                 std::to_string(p * q) + " ranks, running on " + std::to_string(size));
    args.threads_from = threads_from(args.threads > 0);
    if (args.threads <= 0) args.threads = omp_get_max_threads();
    if (args.type == "d") run_geqrf<double>(args, p, q);
    else if (args.type == "s") run_geqrf<float>(args, p, q);
    else if (args.type == "z") run_geqrf<std::complex<double>>(args, p, q);
    else run_geqrf<std::complex<float>>(args, p, q);
}

}  // namespace

void add_geqrf_command(CLI::App& app) {
    auto args = std::make_shared<GeqrfArgs>();
    auto* cmd = app.add_subcommand("geqrf", "QR: cala::geqrf (CAQR) vs ScaLAPACK's p?geqrf");
    cmd->add_option("--m", args->m, "rows of A (0: n)")->check(CLI::NonNegativeNumber)->capture_default_str();
    cmd->add_option("--n", args->n, "columns of A")->check(CLI::NonNegativeNumber)->capture_default_str();
    cmd->add_option("--nb", args->nb, "block size of A")->check(CLI::PositiveNumber)->capture_default_str();
    cmd->add_option("--grid", args->grid, "process grid PxQ (default: the squarest)");
    cmd->add_option("--runs", args->runs, "reported runs (after one warm-up)")->check(CLI::PositiveNumber)->capture_default_str();
    cmd->add_option("--threads", args->threads, "OpenMP threads per rank (default: OpenMP's max)")->check(CLI::NonNegativeNumber);
    cmd->add_option("--lookahead", args->lookahead, "0 or 1")->capture_default_str();
    cmd->add_option("--variant", args->variant, "auto, 2D (the user's grid) or 1xP (a p x 1 grid's matrix on the 1 x p grid of its ranks)")
        ->check(CLI::IsMember({"auto", "2D", "1xP"}))
        ->capture_default_str();
    cmd->add_option("--delay", args->delay, "one process row: panels per delayed trailing update (0: the planner's)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    cmd->add_option("--compare", args->compare, "reference to run on the same data")
        ->check(CLI::IsMember({"none", "scalapack"}))->capture_default_str();
    cmd->add_option("--type", args->type, "element type: d, s, z, c")->check(CLI::IsMember({"d", "s", "z", "c"}))->capture_default_str();
    cmd->add_option("--trace", args->trace,
                    "one more run after the timed ones, traced: a Chrome/Perfetto trace of every rank to FILE");
    cmd->add_flag("--count-only", args->count_only, "one untimed run: measured and modeled words and messages");
    cmd->callback([args] { run(*args); });
}

}  // namespace cala::bench

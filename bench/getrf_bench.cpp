// cala-bench getrf: cala::getrf (CALU) against ScaLAPACK's p?getrf on the same matrix, same run.
//
// cala-bench getrf -> cala::getrf (2D CALU on the grid) | p?getrf_ (libscalapack-mpich, Fortran ABI)
//
// Measurement (STYLE.md section 7): one warm-up run, not reported; then each run is barrier,
// time, barrier, and a run's time is the maximum over ranks. A is reset to the same random
// matrix before every run (not timed). The last factors are checked by a solve: b = A·x,
// x̂ = getrs(b), ‖A·x̂ − b‖∞ / (n·‖A‖max·‖x̂‖∞·eps) (cala::gemm, cala::getrs).
// The rate is (2/3)·n³ flops (real; ×4 complex) over the best time.

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
#include "output.hpp"
#include "scalapack_ref.hpp"

extern "C" {
void psgetrf_(const int*, const int*, float*, const int*, const int*, const int*, int*, int*);
void pdgetrf_(const int*, const int*, double*, const int*, const int*, const int*, int*, int*);
void pcgetrf_(const int*, const int*, std::complex<float>*, const int*, const int*, const int*, int*, int*);
void pzgetrf_(const int*, const int*, std::complex<double>*, const int*, const int*, const int*, int*, int*);
}

namespace cala::bench {

namespace {

struct GetrfArgs {
    index_t n = 4096, nb = 256;
    std::string grid, compare = "none", type = "d";
    int runs = 5, threads = 0, lookahead = 1;
    std::string variant = "auto";
    Shape3D grid3d{};  ///< --grid PxQxH: the layered grid (the user's grid is then the squarest)
    bool count_only = false, no_node_shared = false;
    std::string trace, matrix = "random";
    std::string threads_from;
};

// ScaLAPACK's p?getrf on a's local storage (its pivots in a local array of LOCr(M) + MB).
template <class T>
index_t pgetrf(const BlacsGrid& g, const MatrixRef<T>& a, std::vector<int>& ipiv) {
    const auto da = descriptor(g, a.layout(), a.ld());
    const int m = static_cast<int>(a.m()), n = static_cast<int>(a.n()), one = 1;
    ipiv.assign(static_cast<std::size_t>(a.m_loc() + a.layout().rows.nb), 0);
    int info = 0;
    kernels::set_threads(omp_get_max_threads());  // ScaLAPACK's BLAS, where libblas.so.3 is BLIS
    if constexpr (std::is_same_v<T, float>) psgetrf_(&m, &n, a.data(), &one, &one, da.data(), ipiv.data(), &info);
    else if constexpr (std::is_same_v<T, double>) pdgetrf_(&m, &n, a.data(), &one, &one, da.data(), ipiv.data(), &info);
    else if constexpr (std::is_same_v<T, std::complex<float>>) pcgetrf_(&m, &n, a.data(), &one, &one, da.data(), ipiv.data(), &info);
    else pzgetrf_(&m, &n, a.data(), &one, &one, da.data(), ipiv.data(), &info);
    if (info < 0) throw Error("scalapack: p?getrf rejected argument " + std::to_string(-info));
    return info;
}

// The solve check of the factors f (with ipiv) of a0.
template <class T>
double solve_error(const DistMatrix<T>& a0, const DistMatrix<T>& f, const std::vector<index_t>& ipiv, std::uint64_t seed) {
    const Grid2D& g = f.grid();
    const index_t n = f.n(), nb = f.layout().rows.nb;
    DistMatrix<T> x(g, n, 1, nb, nb), b(g, n, 1, nb, nb), r(g, n, 1, nb, nb);
    fill_random<T>(x, seed);
    gemm<T>(Op::N, Op::N, T(1), a0, x, T(0), b);
    copy_local<T>(b, r);
    getrs<T>(Op::N, f, ipiv, b);  // b := x̂
    gemm<T>(Op::N, Op::N, T(1), a0, b, T(-1), r);
    double v[3] = {0, 0, 0};
    for (index_t i = 0; i < r.m_loc() * r.n_loc(); ++i) v[0] = std::max(v[0], double(std::abs(r.data()[i])));
    for (index_t i = 0; i < b.m_loc() * b.n_loc(); ++i) v[2] = std::max(v[2], double(std::abs(b.data()[i])));
    for (index_t j = 0; j < a0.n_loc(); ++j)
        for (index_t i = 0; i < a0.m_loc(); ++i) v[1] = std::max(v[1], double(std::abs(a0.local(i, j))));
    MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_DOUBLE, MPI_MAX, g.comm().get());
    if (v[0] == 0) return 0;
    return v[0] / (double(n) * double(n) * v[1] * v[2] * double(eps<T>()));
}

template <class T>
void run_getrf(const GetrfArgs& args, int p, int q) {
    const index_t n = args.n, nb = args.nb;
    omp_set_num_threads(args.threads);
    touch_blas<T>();
    Grid2D grid(Comm::borrow(MPI_COMM_WORLD), p, q);
    MPI_Comm comm = grid.comm().get();
    const std::uint64_t seed = fresh_seed(comm);
    DistMatrix<T> a0(grid, n, n, nb, nb), a(grid, n, n, nb, nb);
    fill_random<T>(a0, seed);
    if (args.matrix == "dominant") {  // n added to the diagonal: partial pivoting swaps no row
        const BlockCyclic& l = a0.layout();
        for (index_t j = 0; j < a0.n_loc(); ++j)
            for (index_t i = 0; i < a0.m_loc(); ++i)
                if (l.rows.to_global(i, grid.row()) == l.cols.to_global(j, grid.col())) a0.local(i, j) += T(double(n));
    }
    const double flops = (is_complex_v<T> ? 8.0 : 2.0) / 3.0 * double(n) * double(n) * double(n);
    const LuVariant variant = args.grid3d.c > 0 || args.variant == "2.5D" ? LuVariant::Layered
                              : args.variant == "2D"                      ? LuVariant::TwoD
                              : args.variant == "1xP"                     ? LuVariant::OneRow
                                                                          : LuVariant::Auto;
    const LuOptions opts{.variant = variant, .lookahead = args.lookahead, .node_shared_memory = !args.no_node_shared,
                         .grid3d = args.grid3d};

    nlohmann::ordered_json sref;
    double scalapack_best = 0;
    if (args.compare == "scalapack" && !args.count_only) {
        BlacsGrid blacs(p, q);
        std::vector<int> piv;
        index_t info = 0;
        const Times ts = time_runs("getrf", "ScaLAPACK p?getrf", args.runs, comm, [&] { copy_local<T>(a0, a); },
                                   [&] { info = pgetrf<T>(blacs, a, piv); });
        scalapack_best = ts.best();
        sref = {{"scalapack_time_s", ts.best()}, {"scalapack_time_median_s", ts.median()}, {"scalapack_times_s", ts.runs},
                {"scalapack_gflops", flops / ts.best() / 1e9}, {"scalapack_info", info}};
    }
    Traffic tr;
    index_t info = 0;
    std::vector<index_t> ipiv;
    const Times tc = time_runs("getrf", "cala::getrf", args.count_only ? 1 : args.runs, comm, [&] { copy_local<T>(a0, a); },
                               [&] {
                                   reset_traffic();
                                   info = getrf<T>(a, ipiv, opts);
                                   tr = traffic();
                               });
    const Cost model = getrf_cost(a.layout(), opts, grid.order(), grid.comm().rank(), sizeof(T), is_complex_v<T>, ipiv);
    const Shape3D g3 = getrf_grid(a.layout(), opts, sizeof(T));
    const std::int64_t mismatch =
        (tr.words() != model.words || tr.words_recv != model.words_recv || tr.msgs() != model.msgs) ? 1 : 0;
    nlohmann::ordered_json j = {
        {"bench", "getrf"}, {"type", args.type}, {"n", n}, {"nb", nb},
        {"grid", std::to_string(p) + "x" + std::to_string(q)}, {"matrix", args.matrix}, {"variant", to_string(getrf_variant(a.layout(), opts, sizeof(T)))},
        {"grid3d", std::to_string(g3.p) + "x" + std::to_string(g3.q) + "x" + std::to_string(g3.c)},
        {"lookahead", args.lookahead}, {"node_shared", !args.no_node_shared}, {"ranks", grid.comm().size()}, {"threads", args.threads},
        {"threads_from", args.threads_from}, {"runs", args.count_only ? 1 : args.runs}, {"info", info},
        {"words_max", max_over_ranks(tr.words(), comm)}, {"words_model_max", max_over_ranks(model.words, comm)},
        {"msgs_max", max_over_ranks(tr.msgs(), comm)}, {"msgs_model_max", max_over_ranks(model.msgs, comm)},
        {"ranks_model_mismatch", max_over_ranks(mismatch, comm) > 0 ? "yes" : "none"},
    };
    if (!args.trace.empty() && !args.count_only) {
        copy_local<T>(a0, a);
        j["trace_file"] = args.trace;
        j["trace_time_s"] = traced_run(comm, args.trace, [&] { getrf<T>(a, ipiv, opts); });
    }
    if (!args.count_only) {
        j["time_s"] = tc.best();
        j["time_median_s"] = tc.median();
        j["times_s"] = tc.runs;
        j["gflops"] = flops / tc.best() / 1e9;
        j["check_error"] = solve_error<T>(a0, a, ipiv, seed ^ 5);
        if (scalapack_best > 0) {
            for (auto& [k, v] : sref.items()) j[k] = v;
            j["speedup_vs_scalapack"] = scalapack_best / tc.best();
        }
    }
    emit(j);
}

void run(const GetrfArgs& in) {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    GetrfArgs args = in;
    int p = 0, q = 0;
    if (args.grid.empty()) {
        std::tie(p, q) = Grid2D::squarest(size);
    } else {
        char x = 0, y = 0, extra = 0;
        int h = 0;
        const int got = std::sscanf(args.grid.c_str(), "%d%c%d%c%d%c", &p, &x, &q, &y, &h, &extra);
        if (got == 5 && h >= 1 && p >= 1 && q >= 1) {  // PxQxH: the layered grid, on the squarest user grid
            args.grid3d = {p, q, h};
            std::tie(p, q) = Grid2D::squarest(size);
        } else if (got != 3 || p < 1 || q < 1) {
            throw CLI::ValidationError("--grid", "is '" + args.grid + "', expected PxQ or PxQxH");
        }
    }
    if (p * q != size)
        throw CLI::ValidationError("--grid", std::to_string(p) + "x" + std::to_string(q) + " needs " +
                                                 std::to_string(p * q) + " ranks, running on " + std::to_string(size));
    if (args.grid3d.c > 0 && args.variant != "auto" && args.variant != "2.5D")
        throw CLI::ValidationError("--grid", args.grid + " is a layered grid: --variant " + args.variant + " takes PxQ");
    args.threads_from = threads_from(args.threads > 0);
    if (args.threads <= 0) args.threads = omp_get_max_threads();
    if (args.type == "d") run_getrf<double>(args, p, q);
    else if (args.type == "s") run_getrf<float>(args, p, q);
    else if (args.type == "z") run_getrf<std::complex<double>>(args, p, q);
    else run_getrf<std::complex<float>>(args, p, q);
}

}  // namespace

void add_getrf_command(CLI::App& app) {
    auto args = std::make_shared<GetrfArgs>();
    auto* cmd = app.add_subcommand("getrf", "LU: cala::getrf (CALU) vs ScaLAPACK's p?getrf");
    cmd->add_option("--n", args->n, "order of A")->check(CLI::NonNegativeNumber)->capture_default_str();
    cmd->add_option("--nb", args->nb, "block size of A")->check(CLI::PositiveNumber)->capture_default_str();
    cmd->add_option("--grid", args->grid, "process grid PxQ of A (default: the squarest), or PxQxH: the 2.5D variant on that grid");
    cmd->add_option("--runs", args->runs, "reported runs (after one warm-up)")->check(CLI::PositiveNumber)->capture_default_str();
    cmd->add_option("--threads", args->threads, "OpenMP threads per rank (default: OpenMP's max)")->check(CLI::NonNegativeNumber);
    cmd->add_option("--lookahead", args->lookahead, "0 or 1")->capture_default_str();
    cmd->add_option("--variant", args->variant, "auto, 2D (the user's grid), 1xP (a p x 1 grid's matrix on the 1 x p grid of its ranks) or 2.5D (layers: the planner's grid unless --grid PxQxH)")
        ->check(CLI::IsMember({"auto", "2D", "1xP", "2.5D"}))
        ->capture_default_str();
    cmd->add_option("--compare", args->compare, "reference to run on the same data")
        ->check(CLI::IsMember({"none", "scalapack"}))->capture_default_str();
    cmd->add_option("--type", args->type, "element type: d, s, z, c")->check(CLI::IsMember({"d", "s", "z", "c"}))->capture_default_str();
    cmd->add_option("--matrix", args->matrix,
                    "random (entries in [-1, 1): rows move at every step) or dominant (n added to the diagonal: "
                    "partial pivoting moves none, as in tests/scalapack/abi_solve)")
        ->check(CLI::IsMember({"random", "dominant"}))
        ->capture_default_str();
    cmd->add_option("--trace", args->trace,
                    "one more run after the timed ones, traced: a Chrome/Perfetto trace of every rank to FILE");
    cmd->add_flag("--no-node-shared", args->no_node_shared,
                  "1 x q on one node: row broadcasts instead of node-shared slots (LuOptions::node_shared_memory)");
    cmd->add_flag("--count-only", args->count_only, "one untimed run: measured and modeled words and messages");
    cmd->callback([args] { run(*args); });
}

}  // namespace cala::bench

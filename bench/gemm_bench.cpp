// cala-bench gemm: cala::gemm against the concurrent reference and ScaLAPACK's p?gemm, same run.
//
// cala-bench gemm -> cala::gemm (summa_c | summa_a | summa_b) | scalapack_ref (p?gemm_)
//
// Reference (concurrent_ref.hpp): every rank runs the BLAS product of its own local shape of C,
// m_loc x n_loc x k, on the run's threads, all ranks at once; the machine's rate is the sum over
// ranks, median of 10 (5 before the timed runs, 5 after). efficiency = cala's median rate / that;
// above 1 is reported as an error.
//
// Measurement (STYLE.md section 7): one warm-up run, not reported; then each run is
// barrier, time, barrier, and a run's time is the maximum over ranks. Best and median are
// reported. C is reset to the same initial values before every run (not timed), so every run,
// cala's and ScaLAPACK's, computes the same product, and the last one is checked.
//
// Correctness is a random-probe check (as SLATE's testers do): for a random x,
//   r = C·x - (alpha·op(A)·(op(B)·x) + beta·C0·x),
//   check_error = max|r| / (eps·(k + n)·max(|alpha|·|op(A)|·|op(B)|·|x| + |beta|·|C0|·|x|)),
// computed on the distributed data in double precision; a correct product gives well under 1.

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <random>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "cala/cala.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "kernels/blas.hpp"
#include "concurrent_ref.hpp"
#include "device_ref.hpp"
#include "gemm_probe.hpp"
#include "resident_bench.hpp"
#include "scalapack_ref.hpp"

namespace cala::bench {

namespace {

struct GemmArgs {
    index_t m = 1024, n = 1024, k = 1024, nb = 256, panel_width = 0;
    std::string grid, variant = "auto", compare = "none", type = "d", opa = "N", opb = "N";
    bool plan = false;
    index_t block_size = 0;
    std::string devices;
    std::string resident, transport;  // --resident DEV (resident_bench.cpp), --transport
    double max_device_mb = 0;
    int runs = 5, threads = 0, lookahead = 1;
    std::string threads_from;  // what set the threads (JSON "threads_from")
    double alpha = 1.0, beta = 1.0;
};

void progress(const std::string& s) { cala::bench::progress("gemm", s); }

// The first entry of a --devices list when every entry is a CUDA ordinal; "" otherwise (cpu or
// host units are measured against the cores' concurrent reference).
std::string first_cuda_entry(const std::string& spec) {
    if (spec.empty()) return {};
    std::stringstream ss(spec);
    std::string item, first;
    while (std::getline(ss, item, ',')) {
        if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos) return {};
        if (first.empty()) first = item;
    }
    return first;
}

Op parse_op(const std::string& s) { return s == "N" ? Op::N : s == "T" ? Op::T : Op::C; }

Variant parse_variant(const std::string& s) {
    return s == "C" ? Variant::StationaryC : s == "A" ? Variant::StationaryA
                                           : s == "B" ? Variant::StationaryB : Variant::Auto;
}

template <class T>
void run_gemm(const GemmArgs& args, int p, int q, Shape3D g3) {
    const Op op_a = parse_op(args.opa), op_b = parse_op(args.opb);
    const T alpha = T(args.alpha), beta = T(args.beta);
    const index_t m = args.m, n = args.n, k = args.k, nb = args.nb;
    omp_set_num_threads(args.threads);
    touch_blas<T>();

    Grid2D grid(Comm::borrow(MPI_COMM_WORLD), p, q);
    MPI_Comm comm = grid.comm().get();
    const std::uint64_t seed = fresh_seed(comm);

    const bool ta = op_a != Op::N, tb = op_b != Op::N;
    DistMatrix<T> a(grid, ta ? k : m, ta ? m : k, nb, nb), b(grid, tb ? n : k, tb ? k : n, nb, nb);
    DistMatrix<T> c(grid, m, n, nb, nb), c0(grid, m, n, nb, nb);
    fill_random<T>(a, seed ^ 1);
    fill_random<T>(b, seed ^ 2);
    fill_random<T>(c0, seed ^ 3);

    GemmOptions gopts{parse_variant(args.variant), args.lookahead, args.panel_width, g3, args.block_size};
    gopts.devices = args.devices;
    gopts.max_device_bytes = static_cast<std::int64_t>(args.max_device_mb * 1048576.0);
    // What cala::gemm runs and the model below predicts: the node-shared gather only where the
    // ranks share a node (GemmOptions::node_shared_memory).
    gopts.node_shared_memory = grid.comm().shares_node();
    const GemmPlanInfo plan =
        plan_gemm(op_a, op_b, a.layout(), b.layout(), c.layout(), grid.order(), gopts, sizeof(T), is_complex_v<T>);
    const Variant chosen = plan.variant;
    if (args.plan && world_rank() == 0) {  // every candidate, the choice and why
        std::cerr << "cala-bench gemm: plan " << plan.describe() << "\n";
        const GemmPlanReport rep = explain_gemm_plan(op_a, op_b, a.layout(), b.layout(), c.layout(), grid.order(), gopts,
                                                     sizeof(T), is_complex_v<T>);
        for (const std::string& l : rep.lines()) std::cerr << "cala-bench gemm: " << l << "\n";
    }
    const double fma = is_complex_v<T> ? 8.0 : 2.0;
    const double flops = fma * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);

    progress("the concurrent reference: every rank's local product " + std::to_string(c.m_loc()) + "x" +
             std::to_string(c.n_loc()) + "x" + std::to_string(k) + " at once");
    // The local product as one call, and as cala's loop runs it: the whole local C at depth nb,
    // 4nb or 256 (cala's panels, cut along k in pieces of 256 while messages are in flight:
    // summa_common.hpp). BLIS runs some of these faster than the one deep call (measured: 2 ranks,
    // 4096^3, 96-100 GF/s as one call, 101-103 for cala), so the reference is the best of them,
    // each measured concurrently before and after the timed runs, every call through
    // kernels::gemm (its row blocks included). Until stop 26 the reference also ran each depth on
    // a quarter of C (the loop then cut along m): a C of 16 MB instead of 64 stays in the cache
    // from one repeat to the next, which no call of cala's sees, and those shapes won the
    // reference by up to 10% (docs/performance.md).
    struct Shape {
        index_t m, n, k;
    };
    std::vector<Shape> shapes;
    for (index_t d : {k, nb, 4 * nb, index_t{256}}) {
        if (d <= 0 || d > k) continue;
        if (std::any_of(shapes.begin(), shapes.end(), [&](const Shape& x) { return x.k == d; })) continue;
        shapes.push_back(Shape{c.m_loc(), c.n_loc(), d});
    }
    auto measure_reference = [&] {
        std::vector<Reference> r;
        for (const Shape& x : shapes)
            r.push_back(gemm_reference<T>(x.m, x.n, x.k, Op::N, Threading::Blas, args.threads, comm));
        return r;
    };
    // On CUDA devices alone the reference is the in-core product on the first listed GPU (issue 29,
    // item 5), measured before and after cala's runs, never beside them; cores are not the yardstick.
    const std::string gpu = first_cuda_entry(args.devices);
    std::optional<ResidentDevice> rdev;
    std::vector<double> dref;
    std::vector<Reference> refs;
    if (!gpu.empty()) {
        progress("the in-core reference on device " + gpu);
        rdev = ResidentDevice::open(gpu, 0);
        dref = measure_device_reference<T>(*rdev, m, n, k, args.runs, seed, grid.comm(), "gemm --devices");
    } else {
        refs = measure_reference();
    }

    Traffic tr;
    std::int64_t extra = 0;
    const Times tc = time_runs(
        "gemm", std::string("cala::gemm variant ") + to_string(chosen), args.runs, comm, [&] { copy_local<T>(c0, c); },
        [&] {
            reset_traffic();
            reset_peak_memory();
            const std::int64_t before = memory_stats().current_bytes;
            gemm<T>(op_a, op_b, alpha, a, b, beta, c, gopts);
            tr = traffic();
            extra = std::max(extra, memory_stats().peak_bytes - before);
        });
    const double err = probe_error<T>(op_a, op_b, alpha, a, b, beta, c0, c, seed ^ 4);

    Cost model{};
    // The model's seconds for the plan that ran, from the exact per-rank costs the counters are
    // checked against (redistributions included), on the planner's machine constants: the
    // busiest rank's. The planner's own figure (plan_predicted_time_s) is a closed form for
    // regridded plans.
    const MachineModel machine = MachineModel::from_env();
    double model_time = 0;
    for (int rank = 0; rank < p * q; ++rank) {
        const Cost x = gemm_cost(op_a, op_b, a.layout(), b.layout(), c.layout(), gopts, grid.order(), rank, sizeof(T),
                                 is_complex_v<T>);
        model_time = std::max(model_time, predicted_seconds(x, machine, sizeof(T)));
        model.words = std::max(model.words, x.words);
        model.msgs = std::max(model.msgs, x.msgs);
        model.extra_bytes = std::max(model.extra_bytes, x.extra_bytes);
    }
    // Lower bounds on the words a rank must receive (Irony-Toledo-Tiskin, as COSMA states them):
    // with S words of memory, 2mnk/(P·sqrt(S)) + S; independently of memory, 3·(mnk/P)^(2/3)
    // minus what the rank already holds, (mk + kn + mn)/P. S = the data a rank holds plus the
    // largest workspace any rank used here.
    const double P = double(p) * q, held = (double(m) * k + double(k) * n + double(m) * n) / P;
    const double S = held + double(max_over_ranks(extra, comm)) / sizeof(T);
    const double bound_mem = 2.0 * double(m) * n * k / (P * std::sqrt(S)) - S;
    const double bound_free = 3.0 * std::pow(double(m) * n * k / P, 2.0 / 3.0) - held;
    const int ranks = grid.comm().size();
    const double rate = flops / tc.best() / 1e9;
    nlohmann::ordered_json j = {
        {"bench", "gemm"}, {"type", args.type}, {"opa", args.opa}, {"opb", args.opb},
        {"variant", to_string(chosen)}, {"variant_requested", args.variant},
        {"m", m}, {"n", n}, {"k", k}, {"grid", std::to_string(p) + "x" + std::to_string(q)},
        {"plan", plan.describe()}, {"plan_grid", std::to_string(plan.grid.p) + "x" + std::to_string(plan.grid.q) + "x" +
                                                    std::to_string(plan.grid.c)},
        {"plan_user_grid", plan.user_grid}, {"c", plan.grid.c}, {"plan_block", plan.block_size},
        {"plan_idle_ranks", plan.idle_ranks}, {"plan_predicted_time_s", plan.predicted_time_s},
        {"model_time_s", model_time}, {"time_over_model", tc.best() / model_time},
        {"model_latency_us", machine.latency_s * 1e6}, {"model_bandwidth_gbs", 1e-9 / machine.seconds_per_byte},
        {"model_gflops", 1e-9 / machine.seconds_per_flop},
        {"nb", nb}, {"lookahead", args.lookahead}, {"panel_width", args.panel_width},
        {"ranks", ranks}, {"threads", args.threads}, {"threads_from", args.threads_from}, {"runs", args.runs}, {"alpha", args.alpha}, {"beta", args.beta},
        {"time_s", tc.best()}, {"time_median_s", tc.median()}, {"times_s", tc.runs},
        {"gflops", rate}, {"gflops_median", flops / tc.median() / 1e9},
        {"words_max", max_over_ranks(tr.words(), comm)}, {"words_model", model.words},
        {"words_recv_max", max_over_ranks(tr.words_recv, comm)},
        {"lower_bound_words_recv", std::max({bound_mem, bound_free, 0.0})},
        {"msgs_max", max_over_ranks(tr.msgs(), comm)}, {"msgs_model", model.msgs},
        {"extra_bytes_max", max_over_ranks(extra, comm)}, {"extra_bytes_model", model.extra_bytes},
        {"check_error", err},
    };

    if (args.compare == "scalapack") {
        BlacsGrid blacs(p, q);
        DistMatrix<T> cs(grid, m, n, nb, nb);
        const Times ts = time_runs(
            "gemm", "ScaLAPACK p?gemm", args.runs, comm, [&] { copy_local<T>(c0, cs); },
            [&] { pgemm<T>(blacs, op_a, op_b, alpha, a, b, beta, cs); });
        j["scalapack_time_s"] = ts.best();
        j["scalapack_time_median_s"] = ts.median();
        j["scalapack_times_s"] = ts.runs;
        j["scalapack_gflops"] = flops / ts.best() / 1e9;
        j["scalapack_gflops_median"] = flops / ts.median() / 1e9;
        j["speedup_vs_scalapack"] = ts.best() / tc.best();
        j["scalapack_check_error"] = probe_error<T>(op_a, op_b, alpha, a, b, beta, c0, cs, seed ^ 4);
    }
    if (!gpu.empty()) {
        progress("the in-core reference again");
        const std::vector<double> again = measure_device_reference<T>(*rdev, m, n, k, args.runs, seed, grid.comm(),
                                                                      "gemm --devices");
        dref.insert(dref.end(), again.begin(), again.end());
        add_device_efficiency(j, flops, tc, dref, device_name(*rdev), "cuda:" + gpu, true, ranks, 0.85);
        emit(j);
        return;
    }
    progress("the concurrent reference again");
    const std::vector<Reference> later = measure_reference();
    for (std::size_t i = 0; i < refs.size(); ++i) refs[i].add(later[i]);
    // The sums are over all ranks, so every rank picks the same depth.
    const Reference& ref = *std::max_element(refs.begin(), refs.end(),
                                             [](const Reference& x, const Reference& y) { return x.gflops < y.gflops; });
    add_efficiency(j, "gemm", flops / tc.median() / 1e9, ref, ranks * args.threads);
    emit(j);
}

// --resident DEV: the options that do not apply to a resident gemm are refused, then
// resident_bench.cpp runs it.
void run_resident(const GemmArgs& args, int p, int q, Shape3D g3) {
    auto refuse = [](const std::string& opt, const std::string& why) {
        throw CLI::ValidationError(opt, why + " (cala-bench gemm --resident runs cala::gemm on device-resident operands: "
                                              "--variant, --grid PxQ or PxQxC, --plan and --block-size as for host operands)");
    };
    if (!args.devices.empty()) refuse("--devices", "streams host operands through devices: not with --resident");
    if (args.compare != "none") refuse("--compare", "is " + args.compare + ": the reference of --resident is the in-core product on one device");
    if (args.block_size > 0 && g3.c == 0 && !args.plan)
        refuse("--block-size", "sets the 2.5D/3D layouts: it needs --grid PxQxC or --plan");
    if (args.m == 0 || args.n == 0 || args.k == 0)
        refuse("--m/--n/--k", "are " + std::to_string(args.m) + "x" + std::to_string(args.n) + "x" + std::to_string(args.k) +
                                  ": the resident bench needs a product with flops (m, n, k > 0)");
    if (args.lookahead < 1) refuse("--lookahead", "is " + std::to_string(args.lookahead) + ", must be >= 1");
    if (args.panel_width < 0) refuse("--panel-width", "is " + std::to_string(args.panel_width) + ", must be >= 0");
    if (args.transport == "nccl" && args.resident.find("host") != std::string::npos)
        refuse("--transport", "is nccl: NCCL moves CUDA device memory, not a HostDevice's (--resident " + args.resident + ")");
    ResidentGemmArgs r;
    r.spec = args.resident;
    r.transport = args.transport.empty() ? "auto" : args.transport;
    r.type = args.type, r.opa = args.opa, r.opb = args.opb;
    r.m = args.m, r.n = args.n, r.k = args.k, r.nb = args.nb, r.panel_width = args.panel_width;
    r.lookahead = args.lookahead, r.runs = args.runs, r.threads = args.threads, r.threads_from = args.threads_from;
    r.alpha = args.alpha, r.beta = args.beta, r.max_device_mb = args.max_device_mb;
    r.variant = parse_variant(args.variant), r.grid3d = g3, r.block_size = args.block_size, r.plan_grid = args.plan;
    run_resident_gemm(r, p, q);
}

void run(const GemmArgs& in) {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    GemmArgs args = in;
    int p = 0, q = 0;
    Shape3D g3;
    if (args.grid.empty()) {
        std::tie(p, q) = Grid2D::squarest(size);
    } else {
        char x = 0, y = 0, extra = 0;
        int c3 = 0;
        const int got = std::sscanf(args.grid.c_str(), "%d%c%d%c%d%c", &p, &x, &q, &y, &c3, &extra);
        if (got == 5 && (x == 'x' || x == 'X') && (y == 'x' || y == 'X') && p > 0 && q > 0 && c3 > 0) {
            g3 = {p, q, c3};  // a forced 3D grid; the operands live on the squarest 2D grid
            if (p * q * c3 > size)
                throw CLI::ValidationError("--grid", args.grid + " needs " + std::to_string(p * q * c3) +
                                                         " ranks, running on " + std::to_string(size));
            std::tie(p, q) = Grid2D::squarest(size);
        } else if (got != 3 || (x != 'x' && x != 'X') || p < 1 || q < 1) {
            throw CLI::ValidationError("--grid", "is '" + args.grid + "', expected PxQ such as 1x2 or PxQxC such as 2x2x2");
        }
    }
    if (p * q != size)
        throw CLI::ValidationError("--grid", std::to_string(p) + "x" + std::to_string(q) + " needs " +
                                                 std::to_string(p * q) + " ranks, running on " + std::to_string(size));
    args.threads_from = threads_from(args.threads > 0);
    if (args.threads <= 0) args.threads = omp_get_max_threads();
    if (!args.transport.empty() && args.resident.empty())
        throw CLI::ValidationError("--transport", "moves the panels of a resident gemm: it needs --resident DEV");
    if (!args.resident.empty()) {
        run_resident(args, p, q, g3);
        return;
    }
    if (args.type == "d") run_gemm<double>(args, p, q, g3);
    else if (args.type == "s") run_gemm<float>(args, p, q, g3);
    else if (args.type == "z") run_gemm<std::complex<double>>(args, p, q, g3);
    else run_gemm<std::complex<float>>(args, p, q, g3);
}

}  // namespace

void add_gemm_command(CLI::App& app) {
    auto args = std::make_shared<GemmArgs>();
    auto* cmd = app.add_subcommand("gemm", "C := alpha·op(A)·op(B) + beta·C: cala::gemm vs the concurrent BLAS reference and ScaLAPACK");
    cmd->add_option("--m", args->m, "rows of C")->check(CLI::NonNegativeNumber)->capture_default_str();
    cmd->add_option("--n", args->n, "columns of C")->check(CLI::NonNegativeNumber)->capture_default_str();
    cmd->add_option("--k", args->k, "inner dimension")->check(CLI::NonNegativeNumber)->capture_default_str();
    cmd->add_option("--grid", args->grid,
                    "process grid PxQ of the operands (default: the squarest), or PxQxC to force 2.5D/3D SUMMA");
    cmd->add_flag("--plan", args->plan, "print the planner's choice (stderr) beside the measurement; with --resident, "
                                        "let the planner pick the grid (ResidentGemmOptions::plan_grid)");
    cmd->add_option("--devices", args->devices,
                    "run each rank's local updates on these devices with the chunked engine (host,host | 0,1)");
    cmd->add_option("--resident", args->resident,
                    "operands resident on one device per rank: host (a HostDevice standing for device memory) or "
                    "CUDA ordinals (0 | 0,1: rank r takes entry r mod count); reference: the in-core product on "
                    "rank 0's device, same run");
    cmd->add_option("--transport", args->transport, "panels of the resident gemm (with --resident; default auto)")
        ->check(CLI::IsMember({"auto", "staged", "nccl"}));
    cmd->add_option("--max-device-mb", args->max_device_mb, "memory cap per device, MiB (0: the device's own)");
    cmd->add_option("--block-size", args->block_size, "block size of the 2.5D/3D layouts (0: the planner's)");
    cmd->add_option("--nb", args->nb, "block size (rows and columns) of A, B and C")
        ->check(CLI::PositiveNumber)->capture_default_str();
    cmd->add_option("--variant", args->variant, "stationary matrix")
        ->check(CLI::IsMember({"auto", "C", "A", "B"}))->capture_default_str();
    cmd->add_option("--runs", args->runs, "reported runs (after one warm-up)")
        ->check(CLI::PositiveNumber)->capture_default_str();
    cmd->add_option("--threads", args->threads, "OpenMP threads per rank (default: OpenMP's max)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--lookahead", args->lookahead, "panels in flight")->capture_default_str();
    cmd->add_option("--panel-width", args->panel_width, "panel width (0: cala's default)")->capture_default_str();
    cmd->add_option("--compare", args->compare, "reference to run on the same data")
        ->check(CLI::IsMember({"none", "scalapack"}))->capture_default_str();
    cmd->add_option("--type", args->type, "element type: d, s, z, c")
        ->check(CLI::IsMember({"d", "s", "z", "c"}))->capture_default_str();
    cmd->add_option("--opa", args->opa, "op(A)")->check(CLI::IsMember({"N", "T", "C"}))->capture_default_str();
    cmd->add_option("--opb", args->opb, "op(B)")->check(CLI::IsMember({"N", "T", "C"}))->capture_default_str();
    cmd->add_option("--alpha", args->alpha, "alpha (real)")->capture_default_str();
    cmd->add_option("--beta", args->beta, "beta (real)")->capture_default_str();
    cmd->callback([args] { run(*args); });
}

}  // namespace cala::bench

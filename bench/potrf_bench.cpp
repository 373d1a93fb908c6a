// cala-bench potrf: cala::potrf against the concurrent reference and ScaLAPACK's p?potrf, same run.
//
// cala-bench potrf -> cala::potrf (2D | Repl | ReplPart; panel Single | Aggregated) | scalapack_ref (p?potrf_)
//
// Measurement (STYLE.md section 7): one warm-up run, not reported; then each run is barrier,
// time, barrier, and a run's time is the maximum over ranks. A is reset to the same Hermitian
// positive definite matrix before every run (not timed). The last factor is checked with a
// random probe: ‖A·x − L·(Lᴴ·x)‖∞ / (n·‖A‖∞·‖x‖∞·eps), computed with cala::gemm.
// Reference (concurrent_ref.hpp): the product potrf's trailing update is made of, at this run's local
// shape: every thread of every rank, at once, C (rows x b) -= A (rows x b)·B (b x b)ᴴ on one thread,
// A the rank's panel that all its threads read, B a tile of it, C each thread's own column,
// rows = the local rows of A on the working grid, a half or a quarter of them (the fastest), b = the working
// block size (times the delay); the machine's rate is the sum over ranks, the median of 5 repeats
// before the runs and 5 after each configuration's runs. efficiency = cala's median rate / that;
// above 1 is an error.
//
// --trace FILE: one more run after the timed ones (not among them; its time is trace_time_s),
// traced (lib/core/trace.hpp): a Chrome/Perfetto trace of every rank's threads, by rank 0.
//
// --count-only: one run, no timing references: words and messages per rank, measured and
// modeled (the counting runs of oversubscribed grids).
//
// Several ranks and one device: cala::potrf moves the local arrays to it and factors them there
// (engine "resident", words and messages against resident_potrf_cost). One rank and one device
// (--devices or CALA_DEVICES naming one device, not cpu): cala::potrf
// streams the matrix through that device (lib/device/potrf_streamed.hpp). The reference is then
// the same device in core, in the same run: cusolverDnXpotrf of the whole matrix already in device
// memory ("cusolver_incore"), or on a host device the host's potrf (kernels::potrf: BLIS, LAPACK)
// of the whole matrix ("host_potrf"); efficiency = cala's median rate / the reference's median
// rate, target_efficiency 0.75 (issue 29). The host matrix stays pageable (CudaDevice copies it
// through its staging slots), as a user's is; --pin-host pins it before the runs instead
// (cudaHostRegister, pin_s, not timed) for direct copies.

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cala/cala.hpp"
#include "cala/device.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "resident_bench.hpp"
#include "concurrent_ref.hpp"
#include "kernels/blas.hpp"
#include "scalapack_ref.hpp"

#ifdef CALA_HAVE_CUDA
#include "pinned.hpp"
#include "potrf_reference.hpp"
#endif

namespace cala::bench {

namespace {

struct PotrfArgs {
    index_t n = 4096, nb = 256, block_size = 0;
    std::string grid, variant = "auto", compare = "none", type = "d", panel = "shared", uplo = "L", trace, devices;
    int runs = 5, threads = 0, lookahead = 1, panel_threads = 0, delay = 0;
    bool plan = false, count_only = false, pin_host = false, no_node_shared = false;
    std::string threads_from;  // what set the threads (JSON "threads_from")
    std::string resident, transport = "auto";  // --resident DEV: bench/resident_potrf.cpp
    double max_device_mb = 0;
};

void progress(const std::string& s) { cala::bench::progress("potrf", s); }

// A(i, j) = u(min, max) off the diagonal (conjugated above it), n + |u| on it: Hermitian,
// diagonally dominant, the same on every grid.
template <class T>
void fill_spd(const MatrixRef<T>& a, std::uint64_t seed) {
    const Grid2D& g = a.grid();
    const index_t n = a.n();
#pragma omp parallel for schedule(static)
    for (index_t jl = 0; jl < a.n_loc(); ++jl) {
        const index_t j = a.layout().cols.to_global(jl, g.col());
        for (index_t il = 0; il < a.m_loc(); ++il) {
            const index_t i = a.layout().rows.to_global(il, g.row());
            if (i == j) a.local(il, jl) = T(real_t<T>(n) + std::abs(std::real(element<T>(seed, i, i))));
            else a.local(il, jl) = conj_if(element<T>(seed, std::max(i, j), std::min(i, j)), i < j);
        }
    }
}

// The probe error of the factor in the `uplo` triangle of f against a0.
template <class T>
double probe_error(Uplo uplo, const DistMatrix<T>& a0, const DistMatrix<T>& f, std::uint64_t seed) {
    const Grid2D& g = f.grid();
    const index_t n = f.n(), nb = f.layout().rows.nb;
    DistMatrix<T> l(g, f.layout()), x(g, n, 1, nb, nb), y(g, n, 1, nb, nb), z(g, n, 1, nb, nb);
    for (index_t jl = 0; jl < f.n_loc(); ++jl) {
        const index_t j = f.layout().cols.to_global(jl, g.col());
        for (index_t il = 0; il < f.m_loc(); ++il) {
            const index_t i = f.layout().rows.to_global(il, g.row());
            const bool keep = uplo == Uplo::Lower ? i >= j : i <= j;
            l.local(il, jl) = keep ? f.local(il, jl) : T(0);
        }
    }
    fill_random<T>(x, seed);
    // y = A0·x; z = op1(F)·x; y -= op2(F)·z, with A = L·Lᴴ or Uᴴ·U.
    gemm<T>(Op::N, Op::N, T(1), a0, x, T(0), y);
    gemm<T>(uplo == Uplo::Lower ? Op::C : Op::N, Op::N, T(1), l, x, T(0), z);
    gemm<T>(uplo == Uplo::Lower ? Op::N : Op::C, Op::N, T(-1), l, z, T(1), y);
    double rmax = 0, amax = 0, xmax = 0;
    for (index_t i = 0; i < y.m_loc() * y.n_loc(); ++i) rmax = std::max(rmax, double(std::abs(y.data()[i])));
    for (index_t i = 0; i < x.m_loc() * x.n_loc(); ++i) xmax = std::max(xmax, double(std::abs(x.data()[i])));
    for (index_t jl = 0; jl < a0.n_loc(); ++jl)  // ‖A‖∞ bound: n·max|a_ij| is enough for a scale
        for (index_t il = 0; il < a0.m_loc(); ++il) amax = std::max(amax, double(std::abs(a0.local(il, jl))));
    double v[3] = {rmax, amax, xmax};
    MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_DOUBLE, MPI_MAX, g.comm().get());
    if (v[0] == 0) return 0;
    return v[0] / (double(n) * v[1] * v[2] * double(eps<T>()) * double(n));
}

// The one device a run on one rank streams through ("host", "0"), else "" (CALA_DEVICES when
// --devices is not given, as cala::potrf reads it).
std::string streamed_device(const std::string& devices, int ranks) {
    std::string spec = devices;
    if (spec.empty())
        if (const char* e = std::getenv("CALA_DEVICES")) spec = e;
    if (ranks != 1 || spec.empty() || spec.find(',') != std::string::npos || spec == "cpu") return {};
    return spec;
}

// The in-core reference of a streamed run on `device`: seconds of the timed runs, and what it is.
struct DeviceReference {
    std::string device_name, reference;
    double best_s = 0, median_s = 0, pin_s = 0;
    index_t info = 0;
};

template <class T>
DeviceReference device_reference(const std::string& device, Uplo uplo, const DistMatrix<T>& a0, DistMatrix<T>& a,
                                 int runs, bool pin, MPI_Comm comm) {
    DeviceReference r;
    const index_t n = a0.n();
    const bool lower = uplo == Uplo::Lower;
    if (device == "host") {
        r.device_name = "host";
        r.reference = "host_potrf";
        const Times t = time_runs("potrf", "in-core reference: the host's potrf of the whole matrix", runs, comm,
                                  [&] { copy_local<T>(a0, a); },
                                  [&] { r.info = kernels::potrf<T>(lower, n, a.data(), a.ld()); });
        r.best_s = t.best();
        r.median_s = t.median();
        return r;
    }
#ifdef CALA_HAVE_CUDA
    const int ordinal = std::stoi(device);
    r.device_name = cuda::device_name(ordinal);
    r.reference = "cusolver_incore";
    if (pin) {  // unpinned by the caller's guard
        const double t0 = MPI_Wtime();
        const std::int64_t bytes = std::int64_t(a0.ld()) * a0.n_loc() * std::int64_t(sizeof(T));
        cuda::pin_range(a0.data(), bytes);
        cuda::pin_range(a.data(), bytes);
        r.pin_s = MPI_Wtime() - t0;
    }
    progress("in-core reference: cusolverDnXpotrf of the whole matrix in device memory");
    const cuda::RefTime t = cuda::incore_potrf<T>(ordinal, lower, n, a0.data(), a0.ld(), runs, &r.info);
    r.best_s = t.best_s;
    r.median_s = t.median_s;
    return r;
#else
    throw Error("cala-bench potrf: device '" + device + "' needs cala-bench built with CUDA");
#endif
}

// The efficiency of a streamed run against its device's in-core reference; above 1 by more than
// the reference's own spread is an error, as add_efficiency says of the CPU reference.
void add_device_efficiency(nlohmann::ordered_json& j, double flops, double cala_median_s, const DeviceReference& r) {
    const double ref = flops / r.median_s / 1e9;
    const double eff = (flops / cala_median_s / 1e9) / ref;
    const double noise = r.median_s / r.best_s - 1.0;
    j["device_name"] = r.device_name;
    j["reference"] = r.reference;
    j["reference_gflops"] = ref;
    j["reference_gflops_best"] = flops / r.best_s / 1e9;
    j["reference_time_s"] = r.best_s;
    j["reference_time_median_s"] = r.median_s;
    j["reference_info"] = r.info;
    j["reference_noise"] = noise;
    j["host_pinned"] = r.pin_s > 0;
    if (r.pin_s > 0) j["pin_s"] = r.pin_s;
    j["efficiency"] = eff;
    j["target_efficiency"] = 0.75;
    if (eff > 1.0 && eff <= 1.0 + noise) j["note"] = "efficiency above 1 within the reference's spread (reference_noise)";
    if (eff > 1.0 + noise) {
        const std::string msg = "efficiency " + std::to_string(eff) + " > 1: cala's median rate exceeds the in-core " +
                                r.reference + " reference by more than its spread";
        j["error"] = msg;
        report_error("potrf", msg);
    }
}

CholeskyVariant parse_variant(const std::string& s) {
    return s == "2D" ? CholeskyVariant::TwoD : s == "Repl" ? CholeskyVariant::Repl
                                             : s == "ReplPart" ? CholeskyVariant::ReplPart : CholeskyVariant::Auto;
}

template <class T>
void run_potrf(const PotrfArgs& args, int p, int q, Shape3D g3) {
    const index_t n = args.n, nb = args.nb;
    const Uplo uplo = args.uplo == "U" ? Uplo::Upper : Uplo::Lower;
    omp_set_num_threads(args.threads);
    touch_blas<T>();
    Grid2D grid(Comm::borrow(MPI_COMM_WORLD), p, q);
    MPI_Comm comm = grid.comm().get();
    const std::uint64_t seed = fresh_seed(comm);
    DistMatrix<T> a0(grid, n, n, nb, nb), a(grid, n, n, nb, nb);
    fill_spd<T>(a0, seed);
    if (!args.resident.empty()) {  // the matrix in device memory (bench/resident_potrf.cpp)
        const ResidentPotrfArgs r{.spec = args.resident, .transport = args.transport, .type = args.type, .uplo = args.uplo,
                                  .threads_from = args.threads_from, .lookahead = args.lookahead, .runs = args.runs,
                                  .threads = args.threads, .max_device_mb = args.max_device_mb,
                                  .variant = args.variant == "auto" && g3.c > 0 ? CholeskyVariant::ReplPart
                                             : args.variant == "auto"           ? CholeskyVariant::TwoD
                                                                                : parse_variant(args.variant),
                                  .grid3d = g3, .block_size = args.block_size};
        run_resident_potrf<T>(r, a0, [&](const DistMatrix<T>& f) { return probe_error<T>(uplo, a0, f, seed ^ 5); });
        return;
    }

    CholeskyOptions base{.variant = parse_variant(args.variant), .lookahead = args.lookahead, .grid3d = g3,
                         .block_size = args.block_size, .panel_threads = args.panel_threads, .devices = args.devices,
                         .delay = args.delay, .node_shared_memory = !args.no_node_shared};
    const std::string streamed = streamed_device(args.devices, grid.comm().size());
    if (g3.c > 0 && base.variant == CholeskyVariant::Auto) base.variant = CholeskyVariant::ReplPart;
    const CholeskyPlanInfo plan = plan_potrf(uplo, a0.layout(), grid.order(), base, sizeof(T), is_complex_v<T>);
    if (args.plan && world_rank() == 0) std::fprintf(stderr, "cala-bench potrf: plan %s\n", plan.describe().c_str());
    const double fma = is_complex_v<T> ? 8.0 : 2.0;
    const double flops = fma / 6.0 * double(n) * double(n) * double(n);  // n³/3 multiply-adds
    const int ranks = grid.comm().size();

    const index_t rb = plan.block_size > 0 ? plan.block_size : nb;
    const index_t rows = std::min(n, ceil_div(ceil_div(n, rb), index_t(std::max(plan.grid.p, 1))) * rb);
    // The update kernel: rb columns deep rb, or with delayed updates (plan.delay panels a group)
    // rb·delay deep and at least as wide, so that the efficiency stays a fraction of a kernel
    // cala itself runs.
    const index_t rd = std::min(n, rb * std::max<index_t>(plan.delay, 1));
    // The update's height falls from the local rows to one tile over the factorization: the
    // reference is the fastest of the full height, a half and a quarter of it (tiles of rb), as
    // gemm's is the fastest of the depths cala runs; all ranks pick the same (sums over ranks).
    std::vector<index_t> heights{rows};
    for (const index_t parts : {index_t{2}, index_t{4}})
        if (const index_t h = ceil_div(ceil_div(rows, rb), parts) * rb; h < heights.back()) heights.push_back(h);
    auto measure_reference = [&] {
        std::vector<Reference> r;
        for (const index_t h : heights) {
            progress("the concurrent reference: " + std::to_string(h) + "x" + std::to_string(rd) + "x" +
                     std::to_string(rd) + " on every thread of every rank at once");
            r.push_back(gemm_reference<T>(h, rd, rd, Op::C, Threading::PerThread, args.threads, comm));
        }
        return r;
    };
    std::vector<Reference> refs;
    if (!args.count_only && streamed.empty()) refs = measure_reference();
    // A streamed run: the device's in-core reference, before cala's runs (the device's memory pool
    // keeps what cala's runs release).
    struct Unpin {
        std::vector<const void*> p;
        ~Unpin() {
#ifdef CALA_HAVE_CUDA
            for (const void* x : p) cuda::unpin_range(x);
#endif
        }
    } unpin;
    DeviceReference dref;
    if (!args.count_only && !streamed.empty()) {
        dref = device_reference<T>(streamed, uplo, a0, a, args.runs, args.pin_host, comm);
        if (dref.pin_s > 0) unpin.p = {a0.data(), a.data()};
    }
    std::vector<PanelMode> modes;
    if (args.panel == "shared" || args.panel == "all") modes.push_back(PanelMode::Shared);
    if (args.panel == "single" || args.panel == "all") modes.push_back(PanelMode::Single);
    if (args.panel == "aggregated" || args.panel == "all") modes.push_back(PanelMode::Aggregated);

    double scalapack_best = 0;
    nlohmann::ordered_json sref;
    if (args.compare == "scalapack" && !args.count_only) {
        BlacsGrid blacs(p, q);
        index_t info = 0;
        const Times ts = time_runs("potrf", "ScaLAPACK p?potrf", args.runs, comm, [&] { copy_local<T>(a0, a); },
                                   [&] { info = ppotrf<T>(blacs, uplo, a); });
        scalapack_best = ts.best();
        sref = {{"scalapack_time_s", ts.best()}, {"scalapack_time_median_s", ts.median()}, {"scalapack_times_s", ts.runs},
                {"scalapack_gflops", flops / ts.best() / 1e9}, {"scalapack_gflops_median", flops / ts.median() / 1e9},
                {"scalapack_info", info},
                {"scalapack_check_error", probe_error<T>(uplo, a0, a, seed ^ 5)}};
    }

    for (PanelMode mode : modes) {
        CholeskyOptions opts = base;
        opts.panel = mode;
        const char* mname = mode == PanelMode::Single ? "single" : mode == PanelMode::Shared ? "shared" : "aggregated";
        Traffic tr;
        std::int64_t extra = 0;
        index_t info = 0;
        const Times tc = time_runs("potrf", std::string("cala::potrf panel ") + mname, args.count_only ? 1 : args.runs, comm, [&] { copy_local<T>(a0, a); },
                                   [&] {
                                       reset_traffic();
                                       reset_device_traffic();
                                       reset_peak_memory();
                                       const std::int64_t before = memory_stats().current_bytes;
                                       info = potrf<T>(uplo, a, opts);
                                       tr = traffic();
                                       extra = std::max(extra, memory_stats().peak_bytes - before);
                                   });
        // Several ranks and one device: cala::potrf runs the resident Cholesky where the local
        // arrays fit the device (no tile moved by device_gemm), else the 2D engine.
        const bool resident = ranks > 1 && !streamed_device(args.devices, 1).empty() &&
                              max_over_ranks(device_traffic_total().h2d, comm) == 0;
        const Cost model =
            resident ? resident_potrf_cost(uplo, a.layout(), resident_potrf_options(opts), grid.row(), grid.col(),
                                           sizeof(T), is_complex_v<T>, grid.order())
                     : potrf_cost(uplo, a.layout(), grid.order(), opts, grid.comm().rank(), sizeof(T), is_complex_v<T>);
        const std::int64_t words = tr.words(), recv = tr.words_recv;
        // The same rank's measured and modeled counts must agree; report the busiest rank.
        std::int64_t mismatch = (words != model.words || recv != model.words_recv || tr.msgs() != model.msgs) ? 1 : 0;
        const double rate = flops / tc.best() / 1e9;
        nlohmann::ordered_json j = {
            {"bench", "potrf"}, {"type", args.type}, {"uplo", args.uplo}, {"n", n}, {"nb", nb},
            {"grid", std::to_string(p) + "x" + std::to_string(q)}, {"plan", plan.describe()},
            {"variant", to_string(plan.variant)},
            {"plan_grid", std::to_string(plan.grid.p) + "x" + std::to_string(plan.grid.q) + "x" + std::to_string(plan.grid.c)},
            {"panel", mname}, {"panel_threads", args.panel_threads}, {"lookahead", args.lookahead},
            {"delay", plan.delay}, {"node_shared", !args.no_node_shared}, {"devices", streamed.empty() ? args.devices : streamed},
            {"engine", !streamed.empty() ? "streamed" : resident ? "resident" : "distributed"},
            {"ranks", ranks}, {"threads", args.threads}, {"threads_from", args.threads_from}, {"runs", args.count_only ? 1 : args.runs}, {"info", info},
            {"words_max", max_over_ranks(words, comm)}, {"words_model_max", max_over_ranks(model.words, comm)},
            {"words_recv_max", max_over_ranks(recv, comm)},
            {"words_recv_model_max", max_over_ranks(model.words_recv, comm)},
            {"msgs_max", max_over_ranks(tr.msgs(), comm)}, {"msgs_model_max", max_over_ranks(model.msgs, comm)},
            {"ranks_model_mismatch", max_over_ranks(mismatch, comm) > 0 ? "yes" : "none"},
            {"extra_bytes_max", max_over_ranks(extra, comm)}, {"extra_bytes_model_max", max_over_ranks(model.extra_bytes, comm)},
        };
        if (!args.count_only) {
            j["time_s"] = tc.best();
            j["time_median_s"] = tc.median();
            j["times_s"] = tc.runs;
            j["gflops"] = rate;
            j["gflops_median"] = flops / tc.median() / 1e9;
            j["check_error"] = probe_error<T>(uplo, a0, a, seed ^ 5);
            if (scalapack_best > 0) {
                for (auto& [k, v] : sref.items()) j[k] = v;
                j["speedup_vs_scalapack"] = scalapack_best / tc.best();
            }
            if (!args.trace.empty()) {
                progress("one traced run, written to " + args.trace);
                copy_local<T>(a0, a);
                j["trace_file"] = args.trace;
                j["trace_time_s"] = traced_run(comm, args.trace, [&] { potrf<T>(uplo, a, opts); });
            }
            if (!streamed.empty()) {
                add_device_efficiency(j, flops, tc.median(), dref);
            } else {
                const std::vector<Reference> later = measure_reference();  // after each configuration's runs too
                for (std::size_t i = 0; i < refs.size(); ++i) refs[i].add(later[i]);
                const Reference& ref = *std::max_element(refs.begin(), refs.end(), [](const Reference& x, const Reference& y) {
                    return x.gflops < y.gflops;
                });
                add_efficiency(j, "potrf", flops / tc.median() / 1e9, ref, ranks * args.threads);
            }
        }
        emit(j);
    }
}

void run(const PotrfArgs& in) {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    PotrfArgs args = in;
    int p = 0, q = 0, h = 0;
    Shape3D g3;
    if (args.grid.empty()) {
        std::tie(p, q) = Grid2D::squarest(size);
    } else {
        char x = 0, y = 0, extra = 0;
        const int got = std::sscanf(args.grid.c_str(), "%d%c%d%c%d%c", &p, &x, &q, &y, &h, &extra);
        if (got == 5 && p > 0 && q > 0 && h > 0) {
            g3 = {p, q, h};
            if (p * q * h > size)
                throw CLI::ValidationError("--grid", args.grid + " needs " + std::to_string(p * q * h) + " ranks");
            std::tie(p, q) = Grid2D::squarest(size);
        } else if (got != 3 || p < 1 || q < 1) {
            throw CLI::ValidationError("--grid", "is '" + args.grid + "', expected PxQ or PxQxH");
        }
    }
    if (p * q != size)
        throw CLI::ValidationError("--grid", std::to_string(p) + "x" + std::to_string(q) + " needs " +
                                                 std::to_string(p * q) + " ranks, running on " + std::to_string(size));
    args.threads_from = threads_from(args.threads > 0);
    if (args.threads <= 0) args.threads = omp_get_max_threads();
    if (!args.resident.empty()) {  // what a resident potrf does not take (bench/resident_potrf.cpp)
        auto refuse = [](const std::string& opt, const std::string& why) {
            throw CLI::ValidationError(opt, why + " (cala-bench potrf --resident runs the resident Cholesky: one "
                                                  "device potrf on one rank, 2D on device tiles otherwise)");
        };
        if (g3.c > 0 && args.variant == "2D") refuse("--grid", "is " + args.grid + ": a 2.5D grid is for Repl / ReplPart");
        if (!args.devices.empty()) refuse("--devices", "streams a host matrix through devices: not with --resident");
        if (args.compare != "none") refuse("--compare", "is " + args.compare + ": the reference of --resident is the in-core potrf on one device");
        if (args.block_size > 0 && (args.variant == "2D" || (args.variant == "auto" && g3.c == 0)))
            refuse("--block-size", "converts layouts: the resident 2D potrf works on A's own nb (the layered one takes it)");
        if (args.plan || args.count_only || !args.trace.empty() || args.delay > 0 || args.panel != "shared")
            refuse(args.plan ? "--plan" : args.count_only ? "--count-only" : !args.trace.empty() ? "--trace"
                   : args.delay > 0 ? "--delay" : "--panel", "belongs to the host potrf: not with --resident");
        if (args.lookahead < 0 || args.lookahead > 1) refuse("--lookahead", "is " + std::to_string(args.lookahead) + ", must be 0 or 1");
        if (args.n <= 0) refuse("--n", "is 0: the resident bench needs a matrix with flops");
        if (args.transport == "nccl" && args.resident.find("host") != std::string::npos)
            refuse("--transport", "is nccl: NCCL moves CUDA device memory, not a HostDevice's (--resident " + args.resident + ")");
    } else if (args.transport != "auto" || args.max_device_mb > 0) {
        throw CLI::ValidationError(args.transport != "auto" ? "--transport" : "--max-device-mb", "needs --resident");
    }
    if (!args.trace.empty() && (args.panel == "all" || args.count_only))
        throw CLI::ValidationError("--trace", "traces one timed configuration: not with --panel all or --count-only");
    if (args.type == "d") run_potrf<double>(args, p, q, g3);
    else if (args.type == "s") run_potrf<float>(args, p, q, g3);
    else if (args.type == "z") run_potrf<std::complex<double>>(args, p, q, g3);
    else run_potrf<std::complex<float>>(args, p, q, g3);
}

}  // namespace

void add_potrf_command(CLI::App& app) {
    auto args = std::make_shared<PotrfArgs>();
    auto* cmd = app.add_subcommand("potrf", "Cholesky: cala::potrf vs the BLAS dgemm rate and ScaLAPACK's p?potrf");
    cmd->add_option("--n", args->n, "order of A")->check(CLI::NonNegativeNumber)->capture_default_str();
    cmd->add_option("--nb", args->nb, "block size of A")->check(CLI::PositiveNumber)->capture_default_str();
    cmd->add_option("--grid", args->grid, "process grid PxQ of A (default: the squarest), or PxQxH to force 2.5D");
    cmd->add_option("--variant", args->variant, "algorithm")
        ->check(CLI::IsMember({"auto", "2D", "Repl", "ReplPart"}))->capture_default_str();
    cmd->add_option("--block-size", args->block_size, "tile size of the working layout (0: A's)");
    cmd->add_option("--panel", args->panel, "panel worker: row blocks shared with free threads, one thread, an aggregated team, or all three in turn")
        ->check(CLI::IsMember({"shared", "single", "aggregated", "all"}))->capture_default_str();
    cmd->add_option("--panel-threads", args->panel_threads, "aggregated team size (0: all threads)");
    cmd->add_option("--uplo", args->uplo, "triangle")->check(CLI::IsMember({"L", "U"}))->capture_default_str();
    cmd->add_option("--runs", args->runs, "reported runs (after one warm-up)")->check(CLI::PositiveNumber)->capture_default_str();
    cmd->add_option("--threads", args->threads, "OpenMP threads per rank (default: OpenMP's max)")->check(CLI::NonNegativeNumber);
    cmd->add_option("--lookahead", args->lookahead, "0 or 1")->capture_default_str();
    cmd->add_option("--delay", args->delay, "2D: panels per delayed trailing update (0: the planner's)")
        ->check(CLI::NonNegativeNumber)->capture_default_str();
    cmd->add_option("--compare", args->compare, "reference to run on the same data")
        ->check(CLI::IsMember({"none", "scalapack"}))->capture_default_str();
    cmd->add_option("--type", args->type, "element type: d, s, z, c")->check(CLI::IsMember({"d", "s", "z", "c"}))->capture_default_str();
    cmd->add_flag("--no-node-shared", args->no_node_shared,
                  "1 x q on one node: row broadcasts instead of node-shared panels (CholeskyOptions::node_shared_memory)");
    cmd->add_flag("--plan", args->plan, "print the planner's choice (stderr)");
    cmd->add_option("--devices", args->devices,
                    "units of the local updates (CholeskyOptions::devices; empty: CALA_DEVICES); one device on one "
                    "rank ('host', '0') streams the matrix through it, against that device's in-core potrf");
    cmd->add_option("--resident", args->resident,
                    "the matrix in device memory ('host': a HostDevice; CUDA ordinals '0' | '0,1': rank r takes entry r "
                    "mod count): resident cala::potrf against the in-core potrf on rank 0's device");
    cmd->add_option("--transport", args->transport, "--resident: how panels travel")
        ->check(CLI::IsMember({"auto", "staged", "nccl"}))->capture_default_str();
    cmd->add_option("--max-device-mb", args->max_device_mb, "--resident: cap per rank's device, MiB (0: fit / free memory)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_flag("--pin-host", args->pin_host, "with a CUDA device: page-lock the host matrices before the runs (not timed)");
    cmd->add_option("--trace", args->trace,
                    "after the timed runs, one traced run: a Chrome/Perfetto trace of all ranks and threads to this file");
    cmd->add_flag("--count-only", args->count_only, "one untimed run: measured and modeled words and messages");
    cmd->callback([args] { run(*args); });
}

}  // namespace cala::bench

// cala-bench gemm --resident: cala::gemm on device-resident operands (issue 30, item 5) against
// the in-core product of the same global size on one device, measured in the same run.
//
// cala-bench gemm --resident DEV -> cala::gemm(ResidentMatrix...) (lib/resident: 2D SUMMA of the
//     --variant asked, or 2.5D / 3D on --grid PxQxC or the planner's grid with --plan; panels over
//     NCCL | MPI staged) -> Device::gemm (CudaDevice: cuBLAS; HostDevice: BLIS)
//   reference: rank 0's device alone, Device::gemm of the whole m x n x k (N, N, beta = 0) on
//     operands already in its memory (CudaDevice: one cublas?gemm; HostDevice: kernels::gemm)
//
//   cala-bench gemm --resident 0 --m 32768 --n 32768 --k 32768 --nb 1024 --runs 3   (one GPU)
//   mpiexec.mpich -n 2 cala-bench gemm --resident host --grid 1x2                   (CI: HostDevice)
//
// Each rank opens its device (DEV "host": a HostDevice standing for device memory; CUDA ordinals
// "0" or "0,1": rank r takes entry r mod count, so "0" on two ranks puts both on one GPU, the
// staged path). A, B, C0 are the host DistMatrix data of the plain gemm bench (grid-independent
// random values), copied to ResidentMatrix operands once; C is reset from C0 before every run
// (not timed). Timing as the other benches: one warm-up, then --runs runs of barrier, time,
// barrier, max over ranks; best and median. The resident C is copied back and checked with the
// random probe (gemm_probe.hpp). Words and messages are compared per rank with
// resident_gemm_cost; ranks_model_mismatch says whether any rank differs.
//
// The reference runs on rank 0 while the others wait, before cala's operands are allocated and
// again after they are freed (never both on the device at once), one warm-up and --runs timed
// calls each time, host clock around gemm + synchronize. efficiency = cala's median rate / the
// reference's median rate; efficiency_best = the best rates' ratio. With P ranks on P distinct
// devices the ideal efficiency is P; the target (>= 0.95) is for one rank on one GPU
// ("target_efficiency", "met_target" on a CUDA device with one rank). An efficiency above 1 is
// not an error here (the reference is one device, not the run's concurrent BLAS).

#include "resident_bench.hpp"

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cala/cala.hpp"
#include "cala/resident.hpp"
#include "common.hpp"
#include "concurrent_ref.hpp"
#include "device/device.hpp"
#include "device_ref.hpp"
#include "gemm_probe.hpp"


namespace cala::bench {

namespace {

void progress(const std::string& s) { cala::bench::progress("gemm", s); }

Op parse_op(const std::string& s) { return s == "N" ? Op::N : s == "T" ? Op::T : Op::C; }

PanelTransport parse_transport(const std::string& s) {
    return s == "staged" ? PanelTransport::Staged : s == "nccl" ? PanelTransport::Nccl : PanelTransport::Auto;
}

// The HostDevice's cap when none is given: the reference's whole operands, or the rank's operands
// plus moved operands (at most A and B again) and the panel slots, whichever is more; 1 GiB at
// least (ResidentDevice's default).
std::int64_t host_cap(const ResidentGemmArgs& a, std::size_t elem) {
    const double mk = double(a.m) * double(a.k), kn = double(a.k) * double(a.n), mn = double(a.m) * double(a.n);
    const double w = double(std::max<index_t>(a.panel_width, 512) + a.nb);
    const double elems = 2 * (mk + kn) + mn + double(a.lookahead + 1) * double(a.m + a.n) * w;
    return std::max<std::int64_t>(std::int64_t{1} << 30, static_cast<std::int64_t>(elems * double(elem)) + (64 << 20));
}

template <class T>
void run(const ResidentGemmArgs& args, int p, int q) {
    const Op op_a = parse_op(args.opa), op_b = parse_op(args.opb);
    const T alpha = T(args.alpha), beta = T(args.beta);
    const index_t m = args.m, n = args.n, k = args.k, nb = args.nb;
    omp_set_num_threads(args.threads);
    touch_blas<T>();

    Grid2D grid(Comm::borrow(MPI_COMM_WORLD), p, q);
    const Comm& comm = grid.comm();
    const std::uint64_t seed = fresh_seed(comm.get());

    // Every rank's device; one that cannot be opened is an error on every rank.
    const std::string mine = entry_of(args.spec, comm.rank());
    const std::int64_t cap = args.max_device_mb > 0 ? static_cast<std::int64_t>(args.max_device_mb * 1048576.0)
                             : mine == "host"       ? host_cap(args, sizeof(T))
                                                    : 0;
    ResidentDevice dev;
    std::string err;
    try {
        dev = ResidentDevice::open(mine, cap);
    } catch (const Error& e) {
        err = std::string("cala-bench gemm --resident ") + args.spec + ": rank " + std::to_string(comm.rank()) +
              " cannot open device '" + mine + "': " + e.what();
    }
    comm.agree(err, 0, "gemm --resident");
    // Every rank's device name, for the line.
    char name[64] = {};
    std::snprintf(name, sizeof name, "%s", dev.name().c_str());
    std::vector<char> names(static_cast<std::size_t>(64 * comm.size()));
    MPI_Gather(name, 64, MPI_CHAR, names.data(), 64, MPI_CHAR, 0, comm.get());

    const bool ta = op_a != Op::N, tb = op_b != Op::N;
    DistMatrix<T> a(grid, ta ? k : m, ta ? m : k, nb, nb), b(grid, tb ? n : k, tb ? k : n, nb, nb);
    DistMatrix<T> c(grid, m, n, nb, nb), c0(grid, m, n, nb, nb);
    fill_random<T>(a, seed ^ 1);
    fill_random<T>(b, seed ^ 2);
    fill_random<T>(c0, seed ^ 3);
    const double fma = is_complex_v<T> ? 8.0 : 2.0;
    const double flops = fma * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);

    progress("in-core reference on rank 0's device " + dev.name());
    std::vector<double> ref_t = measure_device_reference<T>(dev, args.m, args.n, args.k, args.runs, seed, comm, "gemm --resident");

    ResidentGemmReport report;
    ResidentGemmOptions ropts;
    ropts.lookahead = args.lookahead;
    ropts.panel_width = args.panel_width;
    ropts.transport = parse_transport(args.transport);
    ropts.variant = args.variant;
    ropts.grid3d = args.grid3d;
    ropts.block_size = args.block_size;
    ropts.plan_grid = args.plan_grid;
    Traffic tr;
    std::int64_t extra = 0;
    Times tc;
    {
        progress("resident operands on " + dev.name());
        ResidentMatrix<T> ra(grid, a.layout(), dev), rb(grid, b.layout(), dev), rc(grid, c.layout(), dev);
        ra.from_host(a.data(), a.ld());
        rb.from_host(b.data(), b.ld());
        device::Device& d = *dev.get();
        ropts.report = &report;
        tc = time_runs(
            "gemm", std::string("cala::gemm resident on ") + dev.name(), args.runs, comm.get(),
            [&] { rc.from_host(c0.data(), c0.ld()); },
            [&] {
                reset_traffic();
                d.reset_peak();
                const std::int64_t before = d.used_bytes();
                gemm<T>(op_a, op_b, alpha, ra, rb, beta, rc, ropts);
                d.synchronize();
                tr = traffic();
                extra = std::max(extra, d.peak_bytes() - before);
            });
        rc.to_host(c.data(), c.ld());
    }
    const double err_probe = probe_error<T>(op_a, op_b, alpha, a, b, beta, c0, c, seed ^ 4);

    progress("in-core reference again");
    const std::vector<double> later = measure_device_reference<T>(dev, args.m, args.n, args.k, args.runs, seed, comm, "gemm --resident");
    ref_t.insert(ref_t.end(), later.begin(), later.end());

    ropts.report = nullptr;
    const Cost model = resident_gemm_cost(op_a, op_b, a.layout(), b.layout(), c.layout(), ropts, grid.row(),
                                          grid.col(), sizeof(T), is_complex_v<T>);
    // The same rank's measured and modeled counts must agree; report the busiest rank.
    const std::int64_t mismatch =
        (tr.words() != model.words || tr.words_recv != model.words_recv || tr.msgs() != model.msgs) ? 1 : 0;

    const double rate = flops / tc.best() / 1e9, rate_median = flops / tc.median() / 1e9;
    std::vector<std::string> rank_devices;
    for (int r = 0; r < comm.size(); ++r) rank_devices.emplace_back(names.data() + 64 * r);
    const int ranks = comm.size();
    nlohmann::ordered_json j = {
        {"bench", "gemm"}, {"type", args.type}, {"opa", args.opa}, {"opb", args.opb},
        {"variant", to_string(report.variant)}, {"variant_requested", to_string(args.variant)},
        {"grid3d", report.grid3d.c > 0 ? std::to_string(report.grid3d.p) + "x" + std::to_string(report.grid3d.q) + "x" +
                                             std::to_string(report.grid3d.c)
                                       : std::string("none")},
        {"plan_grid", args.plan_grid}, {"block_size", args.block_size},
        {"m", m}, {"n", n}, {"k", k}, {"grid", std::to_string(p) + "x" + std::to_string(q)},
        {"resident", args.spec}, {"device", dev.name()},
        {"rank_devices", rank_devices}, {"device_cap_bytes", dev.budget_bytes()},
        {"transport", to_string(report.transport)}, {"transport_requested", args.transport},
        {"transport_reason", report.reason},
        {"nb", nb}, {"lookahead", args.lookahead}, {"panel_width", args.panel_width},
        {"ranks", ranks}, {"threads", args.threads}, {"threads_from", args.threads_from}, {"runs", args.runs},
        {"alpha", args.alpha}, {"beta", args.beta},
        {"time_s", tc.best()}, {"time_median_s", tc.median()}, {"times_s", tc.runs},
        {"gflops", rate}, {"gflops_median", rate_median},
        {"words_max", max_over_ranks(tr.words(), comm.get())},
        {"words_model", max_over_ranks(model.words, comm.get())},
        {"words_recv_max", max_over_ranks(tr.words_recv, comm.get())},
        {"words_recv_model", max_over_ranks(model.words_recv, comm.get())},
        {"msgs_max", max_over_ranks(tr.msgs(), comm.get())}, {"msgs_model", max_over_ranks(model.msgs, comm.get())},
        {"ranks_model_mismatch", max_over_ranks(mismatch, comm.get()) > 0 ? "yes" : "none"},
        {"extra_bytes_max", max_over_ranks(extra, comm.get())},
        {"extra_bytes_model", max_over_ranks(model.extra_bytes, comm.get())},
        {"check_error", err_probe},
        {"reference_shape", std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " N N beta 0"},
    };
    add_device_efficiency(j, flops, tc, ref_t, device_name(dev), rank_devices.front(), dev.is_cuda(), ranks, 0.95);
    if (!dev.is_cuda()) j["blas_kernel"] = blas_library_name();
    emit(j);
}

}  // namespace

std::string entry_of(const std::string& spec, int rank) {
    std::vector<std::string> e;
    std::size_t s = 0;
    for (std::size_t c; (c = spec.find(',', s)) != std::string::npos; s = c + 1) e.push_back(spec.substr(s, c - s));
    e.push_back(spec.substr(s));
    return e[static_cast<std::size_t>(rank) % e.size()];
}

void run_resident_gemm(const ResidentGemmArgs& args, int p, int q) {
    if (args.type == "d") run<double>(args, p, q);
    else if (args.type == "s") run<float>(args, p, q);
    else if (args.type == "z") run<std::complex<double>>(args, p, q);
    else run<std::complex<float>>(args, p, q);
}

}  // namespace cala::bench

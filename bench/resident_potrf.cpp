// cala-bench potrf --resident: cala::potrf on a device-resident matrix (issue 30, items 3 and 5)
// against the in-core Cholesky of the same matrix on one device, measured in the same run.
//
// cala-bench potrf --resident DEV -> cala::potrf(Uplo, ResidentMatrix&) (lib/resident: one
//     Device::potrf on one rank, else the 2D right-looking algorithm on device tiles, or with
//     --variant Repl | ReplPart [--grid PxQxH] the replicated-diagonal 2.5D one) ->
//     Device::potrf / trsm / herk / gemm (CudaDevice: cuSOLVER, cuBLAS; HostDevice: LAPACK, BLIS)
//   reference: rank 0's device alone on the whole matrix: cusolverDnXpotrf (cuda/potrf_reference,
//     as `potrf --devices 0`) on a GPU; on a HostDevice its potrf (LAPACK) on device memory
//
//   cala-bench potrf --resident 0 --n 32768 --nb 1024 --runs 3                   (one GPU)
//   mpiexec.mpich -n 2 cala-bench potrf --resident host --grid 1x2 --n 2048      (CI: HostDevice)
//   mpiexec.mpich -n 4 cala-bench potrf --resident host --variant Repl --grid 1x2x2 --n 2048
//
// The reference runs on rank 0 while the others wait, before the resident matrix is allocated,
// one warm-up and --runs timed runs (the matrix copied in before each, not timed). cala's runs:
// the resident matrix reset from the host copy (not timed), then barrier, potrf + synchronize,
// barrier, max over ranks. efficiency = cala's median rate / the reference's median rate; the
// issue's target (>= 0.85, double, n = 32768) is for one rank on one GPU. Words and messages are
// compared per rank with resident_potrf_cost.

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <complex>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cala/cala.hpp"
#include "cala/resident.hpp"
#include "common.hpp"
#include "device/device.hpp"
#include "device_ref.hpp"
#include "output.hpp"
#include "resident_bench.hpp"

#ifdef CALA_HAVE_CUDA
#include "potrf_reference.hpp"
#endif

namespace cala::bench {

namespace {

void progress(const std::string& s) { cala::bench::progress("potrf", s); }

// Rank 0's in-core Cholesky of the whole matrix full (n x n): seconds of the timed runs (every
// rank gets them) and its info; an error on rank 0 is a cala::Error on every rank.
template <class T>
std::vector<double> incore_reference(const ResidentDevice& dev, bool lower, index_t n, const std::vector<T>& full,
                                     int runs, const Comm& comm, index_t* info, std::string* what) {
    std::vector<double> t(static_cast<std::size_t>(runs));
    std::string err;
    if (comm.rank() == 0) {
        try {
#ifdef CALA_HAVE_CUDA
            if (dev.is_cuda()) {
                *what = "cusolver_incore";
                const cuda::RefTime r = cuda::incore_potrf<T>(dev.ordinal(), lower, n, full.data(), n, runs, info);
                std::fill(t.begin(), t.end(), r.median_s);
                t.front() = r.best_s;
            }
#endif
            if (!dev.is_cuda()) {
                *what = "host_device_incore";
                device::Device& d = *dev.get();
                const std::int64_t bytes = n * n * std::int64_t(sizeof(T));
                T* p = static_cast<T*>(d.allocate(bytes));
                for (int r = -1; r < runs; ++r) {
                    d.copy_to_device({p, n, full.data(), n, n, n, sizeof(T)});
                    d.synchronize();
                    const double t0 = MPI_Wtime();
                    d.potrf(device::scalar_of<T>(), lower, n, p, n, 0);
                    *info = d.take_info();
                    d.synchronize();
                    if (r >= 0) t[r] = MPI_Wtime() - t0;
                }
                d.release(p, bytes);
            }
        } catch (const Error& e) {
            err = "cala-bench potrf --resident: the in-core reference on rank 0's device (" + dev.name() + "): " + e.what();
        }
    }
    comm.agree(err, 0, "potrf --resident");
    MPI_Bcast(t.data(), runs, MPI_DOUBLE, 0, comm.get());
    std::int64_t i = *info;
    MPI_Bcast(&i, 1, MPI_INT64_T, 0, comm.get());
    *info = i;
    return t;
}

}  // namespace

template <class T>
void run_resident_potrf(const ResidentPotrfArgs& args, const DistMatrix<T>& a0,
                        const std::function<double(const DistMatrix<T>&)>& check) {
    const Grid2D& grid = a0.grid();
    const Comm& comm = grid.comm();
    const index_t n = a0.n(), nb = a0.layout().rows.nb;
    const Uplo uplo = args.uplo == "U" ? Uplo::Upper : Uplo::Lower;
    ResidentPotrfOptions opts;
    opts.lookahead = args.lookahead;
    opts.transport = args.transport == "staged" ? PanelTransport::Staged
                     : args.transport == "nccl" ? PanelTransport::Nccl
                                                : PanelTransport::Auto;
    opts.variant = args.variant;
    opts.grid3d = args.grid3d;
    opts.block_size = args.block_size;
    const Cost model =
        resident_potrf_cost(uplo, a0.layout(), opts, grid.row(), grid.col(), sizeof(T), is_complex_v<T>, grid.order());

    // Every rank's device (HostDevice: the reference's matrix on rank 0, the local array, the slots).
    const std::string mine = entry_of(args.spec, comm.rank());
    const std::int64_t local = std::int64_t(a0.ld()) * a0.n_loc() * std::int64_t(sizeof(T));
    const std::int64_t cap = args.max_device_mb > 0 ? static_cast<std::int64_t>(args.max_device_mb * 1048576.0)
                             : mine == "host" ? std::max<std::int64_t>(std::int64_t{1} << 30,
                                                                       n * n * std::int64_t(sizeof(T)) + local +
                                                                           model.extra_bytes + (64 << 20))
                                              : 0;
    ResidentDevice dev;
    std::string err;
    try {
        dev = ResidentDevice::open(mine, cap);
    } catch (const Error& e) {
        err = "cala-bench potrf --resident " + args.spec + ": rank " + std::to_string(comm.rank()) +
              " cannot open device '" + mine + "': " + e.what();
    }
    comm.agree(err, 0, "potrf --resident");
    char name[64] = {};
    std::snprintf(name, sizeof name, "%s", dev.name().c_str());
    std::vector<char> names(static_cast<std::size_t>(64 * comm.size()));
    MPI_Gather(name, 64, MPI_CHAR, names.data(), 64, MPI_CHAR, 0, comm.get());

    const double fma = is_complex_v<T> ? 8.0 : 2.0;
    const double flops = fma / 6.0 * double(n) * double(n) * double(n);
    index_t ref_info = 0;
    std::string ref_what;
    std::vector<double> ref_t;
    {
        const std::vector<T> full = gather(MatrixRef<T>(a0.view()));
        progress("in-core reference on rank 0's device " + dev.name());
        ref_t = incore_reference<T>(dev, uplo == Uplo::Lower, n, full, args.runs, comm, &ref_info, &ref_what);
    }

    ResidentGemmReport report;
    opts.report = &report;
    Traffic tr;
    std::int64_t extra = 0;
    index_t info = 0;
    DistMatrix<T> f(grid, a0.layout());
    Times tc;
    {
        ResidentMatrix<T> ra(grid, a0.layout(), dev);
        device::Device& d = *dev.get();
        tc = time_runs(
            "potrf", "cala::potrf resident on " + dev.name(), args.runs, comm.get(),
            [&] { ra.from_host(a0.data(), a0.ld()); },
            [&] {
                reset_traffic();
                d.reset_peak();
                const std::int64_t before = d.used_bytes();
                info = potrf<T>(uplo, ra, opts);
                d.synchronize();
                tr = traffic();
                extra = std::max(extra, d.peak_bytes() - before);
            });
        ra.to_host(f.data(), f.ld());
    }
    const double err_probe = check(f);
    const std::int64_t mismatch =
        (tr.words() != model.words || tr.words_recv != model.words_recv || tr.msgs() != model.msgs) ? 1 : 0;
    std::vector<std::string> rank_devices;
    for (int r = 0; r < comm.size(); ++r) rank_devices.emplace_back(names.data() + 64 * r);
    const double ref_median = median_of(ref_t), ref_best = *std::min_element(ref_t.begin(), ref_t.end());
    const double eff = (flops / tc.median()) / (flops / ref_median);
    const int p = grid.p(), q = grid.q();
    nlohmann::ordered_json j = {
        {"bench", "potrf"}, {"type", args.type}, {"uplo", args.uplo}, {"variant", p * q == 1 ? "one device potrf" : report.grid3d.c > 1 ? to_string(args.variant) : "2D"},
        {"grid3d", std::to_string(report.grid3d.p) + "x" + std::to_string(report.grid3d.q) + "x" + std::to_string(report.grid3d.c)},
        {"variant_requested", "resident"}, {"n", n}, {"nb", nb}, {"grid", std::to_string(p) + "x" + std::to_string(q)},
        {"resident", args.spec}, {"device", dev.name()}, {"device_name", device_name(dev)},
        {"rank_devices", rank_devices}, {"device_cap_bytes", dev.budget_bytes()},
        {"transport", comm.size() == 1 ? "none" : to_string(report.transport)},
        {"transport_requested", args.transport}, {"transport_reason", report.reason},
        {"lookahead", args.lookahead}, {"ranks", comm.size()}, {"threads", args.threads},
        {"threads_from", args.threads_from}, {"runs", args.runs},
        {"time_s", tc.best()}, {"time_median_s", tc.median()}, {"times_s", tc.runs},
        {"gflops", flops / tc.best() / 1e9}, {"gflops_median", flops / tc.median() / 1e9}, {"info", info},
        {"reference", ref_what}, {"reference_device", rank_devices.front()}, {"reference_info", ref_info},
        {"reference_time_s", ref_best}, {"reference_time_median_s", ref_median},
        {"reference_gflops", flops / ref_median / 1e9}, {"reference_gflops_best", flops / ref_best / 1e9},
        {"efficiency", eff}, {"efficiency_best", ref_best / tc.best()},
        {"words_max", max_over_ranks(tr.words(), comm.get())},
        {"words_model", max_over_ranks(model.words, comm.get())},
        {"words_recv_max", max_over_ranks(tr.words_recv, comm.get())},
        {"words_recv_model", max_over_ranks(model.words_recv, comm.get())},
        {"msgs_max", max_over_ranks(tr.msgs(), comm.get())}, {"msgs_model", max_over_ranks(model.msgs, comm.get())},
        {"ranks_model_mismatch", max_over_ranks(mismatch, comm.get()) > 0 ? "yes" : "none"},
        {"extra_bytes_max", max_over_ranks(extra, comm.get())},
        {"extra_bytes_model", max_over_ranks(model.extra_bytes, comm.get())},
        {"check_error", err_probe},
    };
    if (dev.is_cuda() && comm.size() == 1) {
        j["target_efficiency"] = 0.85;
        j["met_target"] = eff >= 0.85;
    }
    if (!dev.is_cuda()) j["blas_kernel"] = blas_library_name();
    emit(j);
}

#define CALA_INST(T)                                                                                      \
    template void run_resident_potrf<T>(const ResidentPotrfArgs&, const DistMatrix<T>&, \
                                        const std::function<double(const DistMatrix<T>&)>&);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::bench

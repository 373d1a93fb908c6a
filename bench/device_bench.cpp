// cala-bench device: the chunked out-of-core GEMM (issue 8) against in-core cuBLAS dgemm and
// cublasXtDgemm, all measured in the same run on the same GPU, double precision, C := A·B.
//
// cala-bench device -> cala::device_gemm (chunked engine on CudaDevice | HostDevice)
//                   -> cuda/reference.hpp (incore_dgemm, cublasxt_dgemm; libcala_cuda)
//
//   cala-bench device --n 32768 --tile 2048 --c-over-mem 4    (the GPU figures of issue 8)
//   cala-bench device --devices host --n 2048 --tile 256      (the same path on a HostDevice)
//
// The cap per device is |C| / (c_over_mem · G) bytes: --c-over-mem 4 makes C four times larger
// than the allowed device memory (case c2 of the seed). A, B, C live in pinned host memory
// (cudaHostAlloc) for cala and cublasXt alike; the in-core reference copies them to the GPU once
// and times cublasDgemm alone. One warm-up run each, then --runs timed runs (best and median).
// Ratios use best times: vs_incore = incore / cala (target >= 0.90), vs_cublasxt = cublasxt / cala
// (target >= 1.2). check_error = max|C - C_ref| / (eps·k·k) (|a|, |b| < 1), well under 1 when
// right. Without CUDA in the build, or without a GPU, one JSON line says so (exit status 0).

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cala/device.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "device/chunked.hpp"
#include "kernels/blas.hpp"

#ifdef CALA_HAVE_CUDA
#include "cuda_device.hpp"
#include "pinned.hpp"
#include "reference.hpp"
#endif

namespace cala::bench {

namespace {

struct DeviceArgs {
    index_t m = 0, n = 0, k = 0, tile = 0;
    std::string devices = "0";
    double c_over_mem = 4, max_device_mb = 0;
    int runs = 3;
    bool no_incore = false, no_cublasxt = false;
};

void say(const std::string& s) { std::fprintf(stderr, "cala-bench device: %s\n", s.c_str()); }
void emit_line(const nlohmann::json& j) { emit(nlohmann::ordered_json::parse(j.dump())); }

/// Host memory for an operand: pinned when the devices are GPUs.
class HostBuffer {
public:
    HostBuffer(std::size_t n, bool pinned) : n_(n), pinned_(pinned) {
#ifdef CALA_HAVE_CUDA
        if (pinned_) {
            p_ = static_cast<double*>(cuda::pinned_alloc(n * sizeof(double)));
            return;
        }
#endif
        own_.resize(n);
        p_ = own_.data();
    }
    ~HostBuffer() {
#ifdef CALA_HAVE_CUDA
        if (pinned_) cuda::pinned_free(p_);
#endif
    }
    HostBuffer(const HostBuffer&) = delete;
    HostBuffer& operator=(const HostBuffer&) = delete;
    double* data() { return p_; }
    std::size_t size() const { return n_; }

private:
    std::size_t n_;
    bool pinned_;
    double* p_ = nullptr;
    std::vector<double> own_;
};

void fill(double* x, std::size_t n, std::uint64_t seed) {
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull ^ seed;
        h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
        h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
        x[i] = static_cast<double>((h ^ (h >> 31)) >> 11) * 0x1.0p-52 - 1.0;
    }
}

template <class F>
std::pair<double, double> timed(int runs, F&& f) {  // best, median, after one warm-up
    std::vector<double> t;
    for (int r = 0; r <= runs; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (r > 0) t.push_back(s);
    }
    std::sort(t.begin(), t.end());
    return {t.front(), t[t.size() / 2]};
}

double check_error(const double* c, const double* ref, std::size_t n, index_t k) {
    double e = 0;
#pragma omp parallel for reduction(max : e)
    for (std::size_t i = 0; i < n; ++i) e = std::max(e, std::isnan(c[i]) ? INFINITY : std::abs(c[i] - ref[i]));
    return e / (std::numeric_limits<double>::epsilon() * static_cast<double>(k) * static_cast<double>(k));
}

nlohmann::json line(const char* impl, const DeviceArgs& a, std::pair<double, double> t) {
    const double flops = 2.0 * static_cast<double>(a.m) * static_cast<double>(a.n) * static_cast<double>(a.k);
    return {{"bench", "device"}, {"impl", impl}, {"type", "d"}, {"m", a.m}, {"n", a.n}, {"k", a.k},
            {"tile", a.tile}, {"devices", a.devices}, {"runs", a.runs}, {"best_s", t.first},
            {"median_s", t.second}, {"gflops", flops / t.first * 1e-9}};
}

void run(DeviceArgs a) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) return;  // a single-process benchmark: the other ranks wait
    const bool on_gpu = a.devices.find("host") == std::string::npos;
    nlohmann::json skip = {{"bench", "device"}, {"status", "skipped"}, {"devices", a.devices}};
#ifndef CALA_HAVE_CUDA
    if (on_gpu) {
        say("cala was built without CUDA (-Dcuda=disabled): no GPU figures; --devices host runs the "
            "chunked engine on a HostDevice");
        skip["reason"] = "built without CUDA";
        emit_line(skip);
        return;
    }
#else
    if (on_gpu && cuda::device_count() == 0) {
        say("no CUDA device is visible: the GPU figures (case c2 vs in-core cuBLAS and cublasXt) are owed; "
            "run this command where a GPU is present");
        skip["reason"] = "no CUDA device";
        emit_line(skip);
        return;
    }
#endif
    if (a.n <= 0) a.n = on_gpu ? 32768 : 2048;
    if (a.m <= 0) a.m = a.n;
    if (a.k <= 0) a.k = a.n;
    if (a.tile <= 0) a.tile = on_gpu ? 2048 : 256;
    const auto g = static_cast<std::int64_t>(std::count(a.devices.begin(), a.devices.end(), ',') + 1);
    const std::size_t sa = a.m * a.k, sb = a.k * a.n, sc = a.m * a.n;
    const std::int64_t c_bytes = static_cast<std::int64_t>(sc * sizeof(double));
    const std::int64_t cap = a.max_device_mb > 0 ? static_cast<std::int64_t>(a.max_device_mb * 1048576.0)
                                                 : static_cast<std::int64_t>(c_bytes / (a.c_over_mem * g));
    say("A, B, C of " + std::to_string(a.m) + "x" + std::to_string(a.k) + ", " + std::to_string(a.k) + "x" +
        std::to_string(a.n) + ", " + std::to_string(a.m) + "x" + std::to_string(a.n) + " doubles" +
        (on_gpu ? " in pinned host memory" : "") + "; cap " + std::to_string(cap >> 20) + " MiB per device");
    HostBuffer A(sa, on_gpu), B(sb, on_gpu), C(sc, on_gpu);
    std::vector<double> ref(sc);
    fill(A.data(), sa, 1), fill(B.data(), sb, 2);
    int ordinal = 0;
    if (on_gpu) ordinal = std::stoi(a.devices.substr(0, a.devices.find(',')));

    // 1. The in-core reference: cuBLAS with everything resident (GPU), BLIS in host memory (host).
    double ref_s = 0;
    bool have_ref = false;
    if (!a.no_incore) {
        nlohmann::json j;
#ifdef CALA_HAVE_CUDA
        if (on_gpu) {
            if (static_cast<std::int64_t>((sa + sb + sc) * sizeof(double)) > cuda::device_memory_bytes(ordinal)) {
                say("in-core reference skipped: A, B, C do not fit on the GPU");
            } else {
                say("in-core cublasDgemm ...");
                const auto t = cuda::incore_dgemm(ordinal, a.m, a.n, a.k, A.data(), B.data(), ref.data(), a.runs);
                j = line("cublas_incore", a, {t.best_s, t.median_s});
                j["device_name"] = cuda::device_name(ordinal);
                ref_s = t.best_s, have_ref = true;
            }
        }
#endif
        if (!on_gpu) {
            say("in-core host BLAS ...");
            const auto t = timed(a.runs, [&] {
                kernels::gemm<double>(Op::N, Op::N, a.m, a.n, a.k, 1.0, A.data(), a.m, B.data(), a.k, 0.0,
                                      ref.data(), a.m);
            });
            j = line("host_blas_incore", a, t);
            j["threads"] = omp_get_max_threads();
            ref_s = t.first, have_ref = true;
        }
        if (have_ref) emit_line(j);
    }

    // 2. cala's chunked engine with the cap (case c2 for --c-over-mem > 1).
    say("cala chunked, devices " + a.devices + " ...");
    DeviceGemmReport rep;
    const DeviceGemmOptions opts{.devices = a.devices, .max_device_bytes = cap, .tile = a.tile, .report = &rep};
    const auto t = timed(a.runs, [&] {
        device_gemm<double>(Op::N, Op::N, a.m, a.n, a.k, 1.0, A.data(), a.m, B.data(), a.k, 0.0, C.data(), a.m, opts);
    });
    nlohmann::json j = line("cala_chunked", a, t);
    const index_t tt = rep.tile;
    const device::ChunkedShape shape{(a.m + tt - 1) / tt, (a.n + tt - 1) / tt, (a.k + tt - 1) / tt, static_cast<int>(g)};
    const device::ChunkedPlan plan{tt, rep.b, rep.c, rep.d, static_cast<int>(rep.lookahead), rep.regime};
    const auto model = device::model_traffic(shape, plan, false);
    j["cap_bytes"] = cap;
    j["c_bytes"] = c_bytes;
    j["c_over_device_memory"] = static_cast<double>(c_bytes) / (static_cast<double>(cap) * static_cast<double>(g));
    j["plan"] = {{"b", rep.b}, {"c", rep.c}, {"d", rep.d}, {"lookahead", rep.lookahead},
                 {"regime", std::string(1, rep.regime)}};
    j["case"] = rep.regime == 'c' ? (rep.b * rep.c < shape.mt * shape.nt ? "c2" : "c1") : std::string(1, rep.regime);
    for (std::size_t d = 0; d < rep.devices.size(); ++d) {
        const auto& x = rep.devices[d];
        j["per_device"].push_back({{"h2d", x.h2d}, {"reused", x.reused}, {"d2d", x.d2d}, {"d2h", x.d2h},
                                   {"model_h2d", model[d].h2d}, {"model_d2d", model[d].d2d},
                                   {"model_d2h", model[d].d2h}, {"peak_bytes", x.peak_bytes},
                                   {"budget_bytes", x.budget_bytes}});
    }
    if (have_ref) {
        j["check_error"] = check_error(C.data(), ref.data(), sc, a.k);
        j["vs_incore"] = ref_s / t.first;
        if (on_gpu) j["target_vs_incore"] = 0.90, j["met_vs_incore"] = ref_s / t.first >= 0.90;
    }

    // 3. cublasXt, same sizes and tile, on the same pinned host memory.
#ifdef CALA_HAVE_CUDA
    if (on_gpu && !a.no_cublasxt) {
        say("cublasXtDgemm, block dim " + std::to_string(a.tile) + " ...");
        const auto x = cuda::cublasxt_dgemm(ordinal, a.m, a.n, a.k, a.tile, A.data(), B.data(), C.data(), a.runs);
        nlohmann::json jx = line("cublasxt", a, {x.best_s, x.median_s});
        if (have_ref) jx["check_error"] = check_error(C.data(), ref.data(), sc, a.k);
        emit_line(jx);
        j["vs_cublasxt"] = x.best_s / t.first;
        j["target_vs_cublasxt"] = 1.2;
        j["met_vs_cublasxt"] = x.best_s / t.first >= 1.2;
    }
#endif
    emit_line(j);
}

}  // namespace

void add_device_command(CLI::App& app) {
    auto a = std::make_shared<DeviceArgs>();
    CLI::App* sub = app.add_subcommand(
        "device", "chunked out-of-core GEMM (issue 8) vs in-core cuBLAS and cublasXt, same run (one process)");
    sub->add_option("--m", a->m, "rows of C (0: n)")->check(CLI::NonNegativeNumber);
    sub->add_option("--n", a->n, "columns of C (0: 32768 on GPUs, 2048 on host devices)")->check(CLI::NonNegativeNumber);
    sub->add_option("--k", a->k, "inner dimension (0: n)")->check(CLI::NonNegativeNumber);
    sub->add_option("--tile", a->tile, "tile size, also cublasXt's block dim (0: 2048 GPU, 256 host)")
        ->check(CLI::NonNegativeNumber);
    sub->add_option("--devices", a->devices, "device list: CUDA ordinals (0 | 0,1) or host,host")->capture_default_str();
    sub->add_option("--c-over-mem", a->c_over_mem, "C bytes / all allowed device memory (4: case c2 of issue 8)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    sub->add_option("--max-device-mb", a->max_device_mb, "cap per device in MiB (overrides --c-over-mem)");
    sub->add_option("--runs", a->runs, "timed runs after one warm-up")->capture_default_str()->check(CLI::PositiveNumber);
    sub->add_flag("--no-incore", a->no_incore, "skip the in-core reference");
    sub->add_flag("--no-cublasxt", a->no_cublasxt, "skip cublasXt");
    sub->callback([a] { run(*a); });
}

}  // namespace cala::bench

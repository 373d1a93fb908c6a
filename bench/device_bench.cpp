// cala-bench device: the chunked out-of-core GEMM (issue 8) against in-core cuBLAS dgemm and
// cublasXtDgemm, all measured in the same run on the same GPU, double or single precision, C := A·B.
//
// cala-bench device -> cala::device_gemm (chunked engine on CudaDevice | HostDevice)
//                   -> cuda/reference.hpp (incore_gemm, cublasxt_gemm, link_rate, tile_gemm_gflops;
//                      libcala_cuda)
//
//   cala-bench device --n 32768 --tile 2048 --c-over-mem 4    (the GPU figures of issue 8)
//   cala-bench device --devices host --n 2048 --tile 256      (the same path on a HostDevice)
//
// The cap per device is |C| / (c_over_mem · G) bytes: --c-over-mem 4 makes C four times larger
// than the allowed device memory (case c2 of the seed). A, B, C live in pinned host memory
// (cudaHostAlloc) for cala and cublasXt alike; the in-core reference copies them to the GPU once
// and times cublas?gemm alone. One warm-up run each, then --runs timed runs (best and median).
// Ratios use best times: vs_incore = incore / cala (target >= 0.90), vs_cublasxt = cublasxt / cala
// (target >= 1.2). check_error = max|C - C_ref| / (eps·k·k) (|a|, |b| < 1), well under 1 when
// right. --type d (default) or s. On a GPU a "link" line gives the host link's rates (pinned,
// tile-sized copies, each direction alone and both at once) and cuBLAS's rate on the engine's
// tile products; the cala line then carries the roofline of its plan: bound_s = max(flops at the
// tile rate, its h2d bytes at the h2d rate, its d2h bytes at the d2h rate, both-at-once rates),
// and vs_bound = bound_s / best_s. Without CUDA in the build, or without a GPU, one JSON line
// says so (exit status 0).

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
    index_t m = 0, n = 0, k = 0, tile = 0, b = 0, c = 0, d = 0;
    int lookahead = -1, k_split = 0;
    std::string devices = "0", type = "d";
    double c_over_mem = 4, max_device_mb = 0;
    int runs = 3;
    bool no_incore = false, no_cublasxt = false;
};

void say(const std::string& s) { std::fprintf(stderr, "cala-bench device: %s\n", s.c_str()); }
void emit_line(const nlohmann::json& j) { emit(nlohmann::ordered_json::parse(j.dump())); }

/// Host memory for an operand: pinned when the devices are GPUs.
template <class T>
class HostBuffer {
public:
    HostBuffer(std::size_t n, bool pinned) : n_(n), pinned_(pinned) {
#ifdef CALA_HAVE_CUDA
        if (pinned_) {
            p_ = static_cast<T*>(cuda::pinned_alloc(n * sizeof(T)));
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
    T* data() { return p_; }
    std::size_t size() const { return n_; }

private:
    std::size_t n_;
    bool pinned_;
    T* p_ = nullptr;
    std::vector<T> own_;
};

template <class T>
void fill(T* x, std::size_t n, std::uint64_t seed) {
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull ^ seed;
        h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
        h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
        x[i] = static_cast<T>(static_cast<double>((h ^ (h >> 31)) >> 11) * 0x1.0p-52 - 1.0);
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

template <class T>
double check_error(const T* c, const T* ref, std::size_t n, index_t k) {
    double e = 0;
#pragma omp parallel for reduction(max : e)
    for (std::size_t i = 0; i < n; ++i)
        e = std::max(e, std::isnan(c[i]) ? INFINITY : static_cast<double>(std::abs(c[i] - ref[i])));
    return e / (static_cast<double>(std::numeric_limits<T>::epsilon()) * static_cast<double>(k) * static_cast<double>(k));
}

nlohmann::json line(const char* impl, const DeviceArgs& a, std::pair<double, double> t) {
    const double flops = 2.0 * static_cast<double>(a.m) * static_cast<double>(a.n) * static_cast<double>(a.k);
    return {{"bench", "device"}, {"impl", impl}, {"type", a.type}, {"m", a.m}, {"n", a.n}, {"k", a.k},
            {"tile", a.tile}, {"devices", a.devices}, {"runs", a.runs}, {"best_s", t.first},
            {"median_s", t.second}, {"gflops", flops / t.first * 1e-9}};
}

template <class T>
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
    const std::int64_t c_bytes = static_cast<std::int64_t>(sc * sizeof(T));
    const std::int64_t cap = a.max_device_mb > 0 ? static_cast<std::int64_t>(a.max_device_mb * 1048576.0)
                                                 : static_cast<std::int64_t>(c_bytes / (a.c_over_mem * g));
    say("A, B, C of " + std::to_string(a.m) + "x" + std::to_string(a.k) + ", " + std::to_string(a.k) + "x" +
        std::to_string(a.n) + ", " + std::to_string(a.m) + "x" + std::to_string(a.n) + (a.type == "s" ? " floats" : " doubles") +
        (on_gpu ? " in pinned host memory" : "") + "; cap " + std::to_string(cap >> 20) + " MiB per device");
    HostBuffer<T> A(sa, on_gpu), B(sb, on_gpu), C(sc, on_gpu);
    std::vector<T> ref(sc);
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
            if (static_cast<std::int64_t>((sa + sb + sc) * sizeof(T)) > cuda::device_memory_bytes(ordinal)) {
                say("in-core reference skipped: A, B, C do not fit on the GPU");
            } else {
                say("in-core cublas" + a.type + "gemm ...");
                const auto t = cuda::incore_gemm<T>(ordinal, a.m, a.n, a.k, A.data(), B.data(), ref.data(), a.runs);
                j = line("cublas_incore", a, {t.best_s, t.median_s});
                j["device_name"] = cuda::device_name(ordinal);
                ref_s = t.best_s, have_ref = true;
            }
        }
#endif
        if (!on_gpu) {
            say("in-core host BLAS ...");
            const auto t = timed(a.runs, [&] {
                kernels::gemm<T>(Op::N, Op::N, a.m, a.n, a.k, T{1}, A.data(), a.m, B.data(), a.k, T{0},
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
    const DeviceGemmOptions opts{.devices = a.devices, .max_device_bytes = cap, .tile = a.tile, .b = a.b, .c = a.c,
                                 .d = a.d, .lookahead = a.lookahead, .report = &rep, .k_split = a.k_split};
    const auto t = timed(a.runs, [&] {
        device_gemm<T>(Op::N, Op::N, a.m, a.n, a.k, T{1}, A.data(), a.m, B.data(), a.k, T{0}, C.data(), a.m, opts);
    });
    nlohmann::json j = line("cala_chunked", a, t);
    const index_t tt = rep.tile;
    const auto shape = device::chunked_shape(a.m, a.n, a.k, tt, rep.k_split, static_cast<int>(g));
    const device::ChunkedPlan plan{tt,         rep.b,        rep.c,      rep.d, static_cast<int>(rep.lookahead),
                                   rep.regime, rep.stream_c, rep.k_split};
    const auto model = device::model_traffic(shape, plan, false);
    j["cap_bytes"] = cap;
    j["c_bytes"] = c_bytes;
    j["c_over_device_memory"] = static_cast<double>(c_bytes) / (static_cast<double>(cap) * static_cast<double>(g));
    j["plan"] = {{"b", rep.b}, {"c", rep.c}, {"d", rep.d}, {"lookahead", rep.lookahead},
                 {"regime", std::string(1, rep.regime)}, {"k_split", rep.k_split}};
    j["model_bytes_moved"] = device::model_bytes(shape, plan, false, sizeof(T));
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
        say("cublasXt" + a.type + "gemm, block dim " + std::to_string(a.tile) + " ...");
        const auto x = cuda::cublasxt_gemm<T>(ordinal, a.m, a.n, a.k, a.tile, A.data(), B.data(), C.data(), a.runs);
        nlohmann::json jx = line("cublasxt", a, {x.best_s, x.median_s});
        if (have_ref) jx["check_error"] = check_error(C.data(), ref.data(), sc, a.k);
        emit_line(jx);
        j["vs_cublasxt"] = x.best_s / t.first;
        j["target_vs_cublasxt"] = 1.2;
        j["met_vs_cublasxt"] = x.best_s / t.first >= 1.2;
    }
    // 4. The roofline of the plan: the host link and cuBLAS's tile rate, measured now.
    if (on_gpu) {
        say("host link and tile products ...");
        const std::size_t tile_bytes = static_cast<std::size_t>(tt * tt) * sizeof(T);
        // The engine copies a t x t tile out of an m-row host matrix: t·sizeof(T) bytes per column,
        // columns m·sizeof(T) apart.
        const auto link = cuda::link_rate(ordinal, static_cast<std::size_t>(tt) * sizeof(T), static_cast<std::size_t>(tt),
                                          static_cast<std::size_t>(a.m) * sizeof(T), 10);
        const double tile_gf = cuda::tile_gemm_gflops<T>(ordinal, tt, static_cast<int>(std::min<index_t>(rep.b * rep.c, 64)), 3);
        nlohmann::json jl = line("link", a, {0.0, 0.0});
        jl.erase("best_s"), jl.erase("median_s"), jl.erase("gflops");
        jl["copy_bytes"] = tile_bytes;
        jl["h2d_gbs"] = link.h2d, jl["d2h_gbs"] = link.d2h;
        jl["both_h2d_gbs"] = link.both_h2d, jl["both_d2h_gbs"] = link.both_d2h;
        jl["h2d_2d_gbs"] = link.h2d_2d, jl["d2h_2d_gbs"] = link.d2h_2d, jl["ld_bytes"] = a.m * static_cast<index_t>(sizeof(T));
        jl["tile_gemm_gflops"] = tile_gf;
        // Every tile of A as the engine copies it (a pass over the whole matrix), idle and
        // beside a stream of tile products.
        jl["h2d_sweep_gbs"] = cuda::tile_sweep_gbs(ordinal, A.data(), a.m, a.k, a.m, tt, sizeof(T), false);
        jl["h2d_sweep_busy_gbs"] = cuda::tile_sweep_gbs(ordinal, A.data(), a.m, a.k, a.m, tt, sizeof(T), true);
        emit_line(jl);
        // The plan's traffic per device (all devices share one link here: G = 1, or G logical
        // devices on one GPU, so the bound sums them).
        std::int64_t h2d = 0, d2h = 0;
        for (const auto& x : rep.devices) h2d += x.h2d, d2h += x.d2h;
        const double flops = 2.0 * static_cast<double>(a.m) * static_cast<double>(a.n) * static_cast<double>(a.k);
        const double gb = static_cast<double>(tile_bytes) * 1e-9;
        const double compute_s = flops / (tile_gf * 1e9);
        // Each direction at the rate of the engine's 2D copies; both at once at the contiguous
        // pair's rates scaled by the 2D/contiguous ratio of each direction.
        const double h2d_s = static_cast<double>(h2d) * gb / link.h2d_2d, d2h_s = static_cast<double>(d2h) * gb / link.d2h_2d;
        const double both_s = std::max(static_cast<double>(h2d) * gb / (link.both_h2d * link.h2d_2d / link.h2d),
                                       static_cast<double>(d2h) * gb / (link.both_d2h * link.d2h_2d / link.d2h));
        const double bound_s = std::max({compute_s, h2d_s, d2h_s, both_s});
        j["roofline"] = {{"compute_s", compute_s}, {"h2d_s", h2d_s}, {"d2h_s", d2h_s}, {"both_s", both_s},
                         {"bound_s", bound_s}, {"vs_bound", bound_s / t.first},
                         {"incore_vs_bound", have_ref ? bound_s / ref_s : 0.0}};
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
    sub->add_option("--b", a->b, "force the C block's rows, in tiles (0: the planner's)")->check(CLI::NonNegativeNumber);
    sub->add_option("--c", a->c, "force the C block's columns, in tiles (0: the planner's)")->check(CLI::NonNegativeNumber);
    sub->add_option("--d", a->d, "force the chunk depth, in tiles (0: the planner's)")->check(CLI::NonNegativeNumber);
    sub->add_option("--k-split", a->k_split, "input slabs of tile/k-split in k: 1 whole tiles, 2 half depth (0: the planner's)")
        ->check(CLI::NonNegativeNumber);
    sub->add_option("--lookahead", a->lookahead, "force the lookahead l (-1: the planner's)")->check(CLI::Range(-1, 8));
    sub->add_option("--type", a->type, "element type: d or s")->check(CLI::IsMember({"d", "s"}))->capture_default_str();
    sub->add_flag("--no-incore", a->no_incore, "skip the in-core reference");
    sub->add_flag("--no-cublasxt", a->no_cublasxt, "skip cublasXt");
    sub->callback([a] { a->type == "s" ? run<float>(*a) : run<double>(*a); });
}

}  // namespace cala::bench

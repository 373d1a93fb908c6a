// cala-bench's GPU references: in-core cuBLAS and cublasXt (same sizes and tile), the host link's
// rates and cuBLAS's rate on the engine's tile products.

#include <cublasXt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "cuda_check.hpp"
#include "pinned.hpp"
#include "reference.hpp"

namespace cala::cuda {

namespace {
RefTime summarize(std::vector<double> t) {
    std::sort(t.begin(), t.end());
    return {t.front(), t[t.size() / 2]};
}

cublasStatus_t gemm(cublasHandle_t h, int m, int n, int k, const float* alpha, const float* a, int lda,
                    const float* b, int ldb, const float* beta, float* c, int ldc) {
    return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
cublasStatus_t gemm(cublasHandle_t h, int m, int n, int k, const double* alpha, const double* a, int lda,
                    const double* b, int ldb, const double* beta, double* c, int ldc) {
    return cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
cublasStatus_t xt_gemm(cublasXtHandle_t h, std::size_t m, std::size_t n, std::size_t k, const float* alpha,
                       const float* a, const float* b, const float* beta, float* c) {
    return cublasXtSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, alpha, a, m, b, k, beta, c, m);
}
cublasStatus_t xt_gemm(cublasXtHandle_t h, std::size_t m, std::size_t n, std::size_t k, const double* alpha,
                       const double* a, const double* b, const double* beta, double* c) {
    return cublasXtDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, alpha, a, m, b, k, beta, c, m);
}

/// Device buffers, a cuBLAS handle, two events and two non-blocking streams, released on scope
/// exit.
struct Scratch {
    std::vector<void*> mem;
    cublasHandle_t h = nullptr;
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    cudaStream_t st[2]{};
    Scratch() {
        CALA_CHECK_CUDA(cudaEventCreate(&e0));
        CALA_CHECK_CUDA(cudaEventCreate(&e1));
        CALA_CHECK_CUDA(cudaStreamCreateWithFlags(&st[0], cudaStreamNonBlocking));
        CALA_CHECK_CUDA(cudaStreamCreateWithFlags(&st[1], cudaStreamNonBlocking));
    }
    ~Scratch() {
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
        if (h) cublasDestroy(h);
        for (auto x : st)
            if (x) cudaStreamDestroy(x);
        for (void* p : mem) cudaFree(p);
    }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    template <class T>
    T* alloc(std::size_t count) {
        void* p = nullptr;
        CALA_CHECK_CUDA(cudaMalloc(&p, count * sizeof(T)));
        mem.push_back(p);
        return static_cast<T*>(p);
    }
    cublasHandle_t blas() {
        if (!h) CALA_CHECK_CUBLAS(cublasCreate(&h));
        return h;
    }
    /// Seconds between the two events around f() on stream s.
    template <class F>
    double time(cudaStream_t s, F&& f) {
        CALA_CHECK_CUDA(cudaEventRecord(e0, s));
        f();
        CALA_CHECK_CUDA(cudaEventRecord(e1, s));
        CALA_CHECK_CUDA(cudaEventSynchronize(e1));
        float ms = 0;
        CALA_CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
        return ms * 1e-3;
    }
};
}  // namespace

std::string device_name(int ordinal) {
    cudaDeviceProp prop{};
    CALA_CHECK_CUDA(cudaGetDeviceProperties(&prop, ordinal));
    return prop.name;
}

std::int64_t device_memory_bytes(int ordinal) {
    cudaDeviceProp prop{};
    CALA_CHECK_CUDA(cudaGetDeviceProperties(&prop, ordinal));
    return static_cast<std::int64_t>(prop.totalGlobalMem);
}

template <class T>
RefTime incore_gemm(int ordinal, index_t m, index_t n, index_t k, const T* a, const T* b, T* c, int runs) {
    runs = std::max(runs, 1);
    CALA_CHECK_CUDA(cudaSetDevice(ordinal));
    const auto sz = [](index_t r, index_t cc) { return static_cast<std::size_t>(r * cc); };
    Scratch s;
    T* da = s.alloc<T>(sz(m, k));
    T* db = s.alloc<T>(sz(k, n));
    T* dc = s.alloc<T>(sz(m, n));
    CALA_CHECK_CUDA(cudaMemcpy(da, a, sz(m, k) * sizeof(T), cudaMemcpyHostToDevice));
    CALA_CHECK_CUDA(cudaMemcpy(db, b, sz(k, n) * sizeof(T), cudaMemcpyHostToDevice));
    const T one = 1, zero = 0;
    const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
    std::vector<double> times;
    for (int r = 0; r <= runs; ++r) {  // run 0 warms up
        const double t = s.time(nullptr, [&] { CALA_CHECK_CUBLAS(gemm(s.blas(), mi, ni, ki, &one, da, mi, db, ki, &zero, dc, mi)); });
        if (r > 0) times.push_back(t);
    }
    CALA_CHECK_CUDA(cudaMemcpy(c, dc, sz(m, n) * sizeof(T), cudaMemcpyDeviceToHost));
    return summarize(std::move(times));
}

template <class T>
RefTime cublasxt_gemm(int ordinal, index_t m, index_t n, index_t k, index_t tile, const T* a, const T* b, T* c,
                      int runs) {
    runs = std::max(runs, 1);
    cublasXtHandle_t h = nullptr;
    CALA_CHECK_CUBLAS(cublasXtCreate(&h));
    std::vector<double> times;
    try {
        int devs[1] = {ordinal};
        CALA_CHECK_CUBLAS(cublasXtDeviceSelect(h, 1, devs));
        CALA_CHECK_CUBLAS(cublasXtSetBlockDim(h, static_cast<int>(tile)));
        const T one = 1, zero = 0;
        for (int r = 0; r <= runs; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            CALA_CHECK_CUBLAS(xt_gemm(h, static_cast<std::size_t>(m), static_cast<std::size_t>(n),
                                      static_cast<std::size_t>(k), &one, a, b, &zero, c));
            CALA_CHECK_CUDA(cudaDeviceSynchronize());
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (r > 0) times.push_back(s);
        }
    } catch (...) {
        cublasXtDestroy(h);
        throw;
    }
    cublasXtDestroy(h);
    return summarize(std::move(times));
}

LinkRate link_rate(int ordinal, std::size_t row_bytes, std::size_t cols, std::size_t ld_bytes, int reps) {
    CALA_CHECK_CUDA(cudaSetDevice(ordinal));
    reps = std::max(reps, 1);
    ld_bytes = std::max(ld_bytes, row_bytes);
    const std::size_t bytes = row_bytes * cols, host_bytes = ld_bytes * cols;
    Scratch s;
    char* d_in = s.alloc<char>(bytes);
    char* d_out = s.alloc<char>(bytes);
    struct Host {
        void* p;
        explicit Host(std::size_t n) : p(pinned_alloc(n)) {}
        ~Host() { pinned_free(p); }
    } h_in(host_bytes), h_out(host_bytes);
    CALA_CHECK_CUDA(cudaMemset(d_out, 1, bytes));
    cudaStream_t* st = s.st;
    LinkRate r;
    const double gb = static_cast<double>(bytes) * 1e-9;
    auto best = [&](double& rate, double sec) { rate = std::max(rate, gb / sec); };
    {
        for (int i = 0; i <= reps; ++i) {
            const double t1 = s.time(st[0], [&] { CALA_CHECK_CUDA(cudaMemcpyAsync(d_in, h_in.p, bytes, cudaMemcpyHostToDevice, st[0])); });
            const double t2 = s.time(st[1], [&] { CALA_CHECK_CUDA(cudaMemcpyAsync(h_out.p, d_out, bytes, cudaMemcpyDeviceToHost, st[1])); });
            const double t3 = s.time(st[0], [&] {
                CALA_CHECK_CUDA(cudaMemcpy2DAsync(d_in, row_bytes, h_in.p, ld_bytes, row_bytes, cols, cudaMemcpyHostToDevice, st[0]));
            });
            const double t4 = s.time(st[1], [&] {
                CALA_CHECK_CUDA(cudaMemcpy2DAsync(h_out.p, ld_bytes, d_out, row_bytes, row_bytes, cols, cudaMemcpyDeviceToHost, st[1]));
            });
            // Both at once: each direction timed on the host clock from the common start.
            const auto t0 = std::chrono::steady_clock::now();
            CALA_CHECK_CUDA(cudaMemcpyAsync(d_in, h_in.p, bytes, cudaMemcpyHostToDevice, st[0]));
            CALA_CHECK_CUDA(cudaMemcpyAsync(h_out.p, d_out, bytes, cudaMemcpyDeviceToHost, st[1]));
            CALA_CHECK_CUDA(cudaStreamSynchronize(st[0]));
            const double ta = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            CALA_CHECK_CUDA(cudaStreamSynchronize(st[1]));
            const double tb = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (i == 0) continue;
            best(r.h2d, t1), best(r.d2h, t2), best(r.h2d_2d, t3), best(r.d2h_2d, t4), best(r.both_h2d, ta), best(r.both_d2h, tb);
        }
    }
    return r;
}

double tile_sweep_gbs(int ordinal, const void* host, index_t m, index_t n, index_t ld, index_t tile, std::size_t elem,
                      bool busy) {
    CALA_CHECK_CUDA(cudaSetDevice(ordinal));
    const auto tb = static_cast<std::size_t>(tile * tile) * elem;
    Scratch s;
    char* ring = s.alloc<char>(4 * tb);
    cudaStream_t* st = s.st;
    double gbs = 0;
    {
        const index_t mt = (m + tile - 1) / tile, nt = (n + tile - 1) / tile;
        if (busy) {  // enough products to outlast the sweep at 25 GB/s
            double* g = s.alloc<double>(3 * static_cast<std::size_t>(tile * tile));
            CALA_CHECK_CUDA(cudaMemset(g, 0, 3 * static_cast<std::size_t>(tile * tile) * sizeof(double)));
            CALA_CHECK_CUBLAS(cublasSetStream(s.blas(), st[1]));
            const double one = 1, sweep_s = static_cast<double>(mt * nt) * static_cast<double>(tb) / 25e9;
            const double gemm_s = 2.0 * static_cast<double>(tile) * static_cast<double>(tile) * static_cast<double>(tile) / 40e12;
            const int ti = static_cast<int>(tile);
            const double* a = g;
            const double* b = g + tile * tile;
            for (int i = 0; i < static_cast<int>(sweep_s / gemm_s) + 1; ++i)
                CALA_CHECK_CUBLAS(gemm(s.blas(), ti, ti, ti, &one, a, ti, b, ti, &one, g + 2 * tile * tile, ti));
        }
        std::size_t bytes = 0;
        const double sec = s.time(st[0], [&] {
            int k = 0;
            for (index_t j = 0; j < nt; ++j)
                for (index_t i = 0; i < mt; ++i, ++k) {
                    const index_t rows = std::min(tile, m - i * tile), cols = std::min(tile, n - j * tile);
                    const char* src = static_cast<const char*>(host) + (static_cast<std::size_t>(i * tile) +
                                                                        static_cast<std::size_t>(j * tile) * static_cast<std::size_t>(ld)) * elem;
                    CALA_CHECK_CUDA(cudaMemcpy2DAsync(ring + (k % 4) * tb, static_cast<std::size_t>(tile) * elem, src,
                                                      static_cast<std::size_t>(ld) * elem, static_cast<std::size_t>(rows) * elem,
                                                      static_cast<std::size_t>(cols), cudaMemcpyHostToDevice, st[0]));
                    bytes += static_cast<std::size_t>(rows * cols) * elem;
                }
        });
        CALA_CHECK_CUDA(cudaStreamSynchronize(st[1]));
        gbs = static_cast<double>(bytes) * 1e-9 / sec;
    }
    return gbs;
}

template <class T>
double tile_gemm_gflops(int ordinal, index_t t, int count, int reps) {
    CALA_CHECK_CUDA(cudaSetDevice(ordinal));
    count = std::max(count, 1), reps = std::max(reps, 1);
    const auto tt = static_cast<std::size_t>(t * t);
    Scratch s;
    T* a = s.alloc<T>(tt);
    T* b = s.alloc<T>(tt);
    T* c = s.alloc<T>(tt * static_cast<std::size_t>(count));
    {  // random operands: on zeros the GPU runs cooler and faster than on the engine's data
        std::vector<T> h(tt);
        std::uint64_t x = 0x9e3779b97f4a7c15ull;
        for (auto& v : h) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            v = static_cast<T>(static_cast<double>(x >> 11) * 0x1.0p-52 - 1.0);
        }
        CALA_CHECK_CUDA(cudaMemcpy(a, h.data(), tt * sizeof(T), cudaMemcpyHostToDevice));
        CALA_CHECK_CUDA(cudaMemcpy(b, h.data(), tt * sizeof(T), cudaMemcpyHostToDevice));
        CALA_CHECK_CUDA(cudaMemset(c, 0, tt * sizeof(T) * static_cast<std::size_t>(count)));
    }
    const T one = 1;
    const int ti = static_cast<int>(t);
    double best = 0;
    for (int r = 0; r <= reps; ++r) {
        const double sec = s.time(nullptr, [&] {
            for (int i = 0; i < count; ++i)
                CALA_CHECK_CUBLAS(gemm(s.blas(), ti, ti, ti, &one, a, ti, b, ti, &one, c + tt * static_cast<std::size_t>(i), ti));
        });
        if (r > 0) best = std::max(best, 2.0 * static_cast<double>(t) * static_cast<double>(t) * static_cast<double>(t) * count / sec * 1e-9);
    }
    return best;
}

#define CALA_REF_INST(T)                                                                                        \
    template RefTime incore_gemm<T>(int, index_t, index_t, index_t, const T*, const T*, T*, int);              \
    template RefTime cublasxt_gemm<T>(int, index_t, index_t, index_t, index_t, const T*, const T*, T*, int);   \
    template double tile_gemm_gflops<T>(int, index_t, int, int);
CALA_REF_INST(float)
CALA_REF_INST(double)
#undef CALA_REF_INST

}  // namespace cala::cuda

// cala-bench's GPU references: in-core cublasDgemm and cublasXtDgemm (same sizes and tile).

#include <cublasXt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "cuda_check.hpp"
#include "reference.hpp"

namespace cala::cuda {

namespace {
RefTime summarize(std::vector<double> t) {
    std::sort(t.begin(), t.end());
    return {t.front(), t[t.size() / 2]};
}
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

RefTime incore_dgemm(int ordinal, index_t m, index_t n, index_t k, const double* a, const double* b, double* c,
                     int runs) {
    runs = std::max(runs, 1);
    CALA_CHECK_CUDA(cudaSetDevice(ordinal));
    const auto sz = [](index_t r, index_t cc) { return static_cast<std::size_t>(r * cc) * sizeof(double); };
    double *da = nullptr, *db = nullptr, *dc = nullptr;
    cublasHandle_t h = nullptr;
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    std::vector<double> times;
    auto cleanup = [&] {
        if (e0) cudaEventDestroy(e0);
        if (e1) cudaEventDestroy(e1);
        if (h) cublasDestroy(h);
        cudaFree(da);
        cudaFree(db);
        cudaFree(dc);
    };
    try {
        CALA_CHECK_CUDA(cudaMalloc(&da, sz(m, k)));
        CALA_CHECK_CUDA(cudaMalloc(&db, sz(k, n)));
        CALA_CHECK_CUDA(cudaMalloc(&dc, sz(m, n)));
        CALA_CHECK_CUDA(cudaMemcpy(da, a, sz(m, k), cudaMemcpyHostToDevice));
        CALA_CHECK_CUDA(cudaMemcpy(db, b, sz(k, n), cudaMemcpyHostToDevice));
        CALA_CHECK_CUBLAS(cublasCreate(&h));
        CALA_CHECK_CUDA(cudaEventCreate(&e0));
        CALA_CHECK_CUDA(cudaEventCreate(&e1));
        const double one = 1, zero = 0;
        const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
        for (int r = 0; r <= runs; ++r) {  // run 0 warms up
            CALA_CHECK_CUDA(cudaEventRecord(e0));
            CALA_CHECK_CUBLAS(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, mi, ni, ki, &one, da, mi, db, ki, &zero, dc, mi));
            CALA_CHECK_CUDA(cudaEventRecord(e1));
            CALA_CHECK_CUDA(cudaEventSynchronize(e1));
            float ms = 0;
            CALA_CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
            if (r > 0) times.push_back(ms * 1e-3);
        }
        CALA_CHECK_CUDA(cudaMemcpy(c, dc, sz(m, n), cudaMemcpyDeviceToHost));
    } catch (...) {
        cleanup();
        throw;
    }
    cleanup();
    return summarize(std::move(times));
}

RefTime cublasxt_dgemm(int ordinal, index_t m, index_t n, index_t k, index_t tile, const double* a,
                       const double* b, double* c, int runs) {
    runs = std::max(runs, 1);
    cublasXtHandle_t h = nullptr;
    CALA_CHECK_CUBLAS(cublasXtCreate(&h));
    std::vector<double> times;
    try {
        int devs[1] = {ordinal};
        CALA_CHECK_CUBLAS(cublasXtDeviceSelect(h, 1, devs));
        CALA_CHECK_CUBLAS(cublasXtSetBlockDim(h, static_cast<int>(tile)));
        const double one = 1, zero = 0;
        for (int r = 0; r <= runs; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            CALA_CHECK_CUBLAS(cublasXtDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<std::size_t>(m),
                                            static_cast<std::size_t>(n), static_cast<std::size_t>(k), &one, a,
                                            static_cast<std::size_t>(m), b, static_cast<std::size_t>(k), &zero, c,
                                            static_cast<std::size_t>(m)));
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

}  // namespace cala::cuda

// cala-bench potrf's GPU reference: cusolverDnXpotrf of the whole matrix in device memory.

#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <complex>
#include <vector>

#include "cuda_check.hpp"
#include "cusolver_check.hpp"
#include "potrf_reference.hpp"

namespace cala::cuda {

namespace {
template <class T> cudaDataType data_type();
template <> cudaDataType data_type<float>() { return CUDA_R_32F; }
template <> cudaDataType data_type<double>() { return CUDA_R_64F; }
template <> cudaDataType data_type<std::complex<float>>() { return CUDA_C_32F; }
template <> cudaDataType data_type<std::complex<double>>() { return CUDA_C_64F; }

/// The handles and memory of one reference, released on every exit.
struct Solver {
    cusolverDnHandle_t h = nullptr;
    cusolverDnParams_t params = nullptr;
    cudaStream_t s = nullptr;
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    void* a = nullptr;
    void* work = nullptr;
    int* info = nullptr;
    ~Solver() {
        if (s) cudaStreamSynchronize(s);
        for (void* p : {a, work, static_cast<void*>(info)})
            if (p) cudaFree(p);
        if (e0) cudaEventDestroy(e0);
        if (e1) cudaEventDestroy(e1);
        if (params) cusolverDnDestroyParams(params);
        if (h) cusolverDnDestroy(h);
        if (s) cudaStreamDestroy(s);
    }
};
}  // namespace

template <class T>
RefTime incore_potrf(int ordinal, bool lower, index_t n, const T* a, index_t lda, int runs, index_t* info) {
    runs = std::max(runs, 1);
    CALA_CHECK_CUDA(cudaSetDevice(ordinal));
    Solver sv;
    CALA_CHECK_CUDA(cudaStreamCreateWithFlags(&sv.s, cudaStreamNonBlocking));
    CALA_CHECK_CUDA(cudaEventCreate(&sv.e0));
    CALA_CHECK_CUDA(cudaEventCreate(&sv.e1));
    CALA_CHECK_CUSOLVER(cusolverDnCreate(&sv.h));
    CALA_CHECK_CUSOLVER(cusolverDnSetStream(sv.h, sv.s));
    CALA_CHECK_CUSOLVER(cusolverDnCreateParams(&sv.params));
    const std::size_t bytes = static_cast<std::size_t>(n) * static_cast<std::size_t>(n) * sizeof(T);
    if (cudaMalloc(&sv.a, std::max<std::size_t>(bytes, 1)) != cudaSuccess) {
        (void)cudaGetLastError();
        throw Error("incore_potrf: " + std::to_string(bytes) + " bytes for the matrix do not fit on device " +
                    std::to_string(ordinal));
    }
    CALA_CHECK_CUDA(cudaMalloc(&sv.info, sizeof(int)));
    const cublasFillMode_t uplo = lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
    const cudaDataType t = data_type<T>();
    std::size_t dev_bytes = 0, host_bytes = 0;
    CALA_CHECK_CUSOLVER(cusolverDnXpotrf_bufferSize(sv.h, sv.params, uplo, n, t, sv.a, n, t, &dev_bytes, &host_bytes));
    CALA_CHECK_CUDA(cudaMalloc(&sv.work, std::max<std::size_t>(dev_bytes, 1)));
    std::vector<char> host_work(host_bytes);
    std::vector<double> times;
    int last = 0;
    for (int r = 0; r <= runs; ++r) {  // run 0 warms up
        CALA_CHECK_CUDA(cudaMemcpy2DAsync(sv.a, sizeof(T) * n, a, sizeof(T) * lda, sizeof(T) * n, n,
                                          cudaMemcpyHostToDevice, sv.s));
        CALA_CHECK_CUDA(cudaEventRecord(sv.e0, sv.s));
        CALA_CHECK_CUSOLVER(cusolverDnXpotrf(sv.h, sv.params, uplo, n, t, sv.a, n, t, sv.work, dev_bytes,
                                             host_bytes ? host_work.data() : nullptr, host_bytes, sv.info));
        CALA_CHECK_CUDA(cudaEventRecord(sv.e1, sv.s));
        CALA_CHECK_CUDA(cudaEventSynchronize(sv.e1));
        float ms = 0;
        CALA_CHECK_CUDA(cudaEventElapsedTime(&ms, sv.e0, sv.e1));
        CALA_CHECK_CUDA(cudaMemcpy(&last, sv.info, sizeof last, cudaMemcpyDeviceToHost));
        if (r > 0) times.push_back(ms * 1e-3);
    }
    if (info) *info = last;
    std::sort(times.begin(), times.end());
    return {times.front(), times[times.size() / 2]};
}

#define CALA_POTRF_REF_INST(T) template RefTime incore_potrf<T>(int, bool, index_t, const T*, index_t, int, index_t*);
CALA_FOR_EACH_TYPE(CALA_POTRF_REF_INST)
#undef CALA_POTRF_REF_INST

}  // namespace cala::cuda

// CudaDevice: copies and cuBLAS gemm on one stream per device (issue order = completion order);
// freed tiles return to a pool (cudaMalloc once per tile size class).

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <complex>
#include <string>

#include "cuda_device.hpp"

#define CALA_CHECK_CUDA(call)                                                                          \
    do {                                                                                               \
        if (const cudaError_t cala_err_ = (call); cala_err_ != cudaSuccess)                            \
            throw ::cala::Error(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " + #call + \
                                ": " + cudaGetErrorString(cala_err_));                                 \
    } while (false)
#define CALA_CHECK_CUBLAS(call)                                                                        \
    do {                                                                                               \
        if (const cublasStatus_t cala_st_ = (call); cala_st_ != CUBLAS_STATUS_SUCCESS)                 \
            throw ::cala::Error(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " + #call + \
                                ": cuBLAS status " + std::to_string(static_cast<int>(cala_st_)));     \
    } while (false)

namespace cala::cuda {

struct CudaDevice::Impl {
    cudaStream_t stream = nullptr;
    cublasHandle_t blas = nullptr;
};

int device_count() noexcept {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
    return n;
}

CudaDevice::CudaDevice(int ordinal, std::int64_t cap) : impl_(std::make_unique<Impl>()), ordinal_(ordinal) {
    CALA_CHECK_CUDA(cudaSetDevice(ordinal));
    std::size_t free_b = 0, total_b = 0;
    CALA_CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
    budget_ = cap > 0 ? cap : static_cast<std::int64_t>(free_b) / 20 * 19;
    CALA_CHECK_CUDA(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking));
    CALA_CHECK_CUBLAS(cublasCreate(&impl_->blas));
    CALA_CHECK_CUBLAS(cublasSetStream(impl_->blas, impl_->stream));
    const int n = device_count();
    for (int peer = 0; peer < n; ++peer) {
        int ok = 0;
        if (peer != ordinal && cudaDeviceCanAccessPeer(&ok, ordinal, peer) == cudaSuccess && ok)
            (void)cudaDeviceEnablePeerAccess(peer, 0);  // already enabled is fine
    }
    (void)cudaGetLastError();
}

CudaDevice::~CudaDevice() {
    cudaSetDevice(ordinal_);
    cudaStreamSynchronize(impl_->stream);
    for (auto& [bytes, ptrs] : pool_)
        for (void* p : ptrs) cudaFree(p);
    cublasDestroy(impl_->blas);
    cudaStreamDestroy(impl_->stream);
}

std::string CudaDevice::name() const { return "cuda:" + std::to_string(ordinal_); }

void* CudaDevice::allocate(std::int64_t bytes) {
    if (used_ + bytes > budget_)
        throw device::DeviceMemoryError(name() + ": allocating " + std::to_string(bytes) + " bytes with " +
                                        std::to_string(used_) + " in use exceeds the budget of " +
                                        std::to_string(budget_));
    void* p = nullptr;
    auto& free_list = pool_[bytes];
    if (!free_list.empty()) {
        p = free_list.back();
        free_list.pop_back();
    } else {
        CALA_CHECK_CUDA(cudaSetDevice(ordinal_));
        CALA_CHECK_CUDA(cudaMalloc(&p, static_cast<std::size_t>(bytes)));
    }
    used_ += bytes;
    peak_ = std::max(peak_, used_);
    return p;
}

void CudaDevice::release(void* p, std::int64_t bytes) noexcept {
    if (!p) return;
    pool_[bytes].push_back(p);  // reused after the stream has moved on: same-stream order
    used_ -= bytes;
}

namespace {
void copy2d(const device::Copy2D& c, cudaMemcpyKind kind, cudaStream_t s) {
    CALA_CHECK_CUDA(cudaMemcpy2DAsync(c.dst, c.elem * c.ld_dst, c.src, c.elem * c.ld_src, c.elem * c.rows,
                                      static_cast<std::size_t>(c.cols), kind, s));
}
cublasOperation_t op_of(Op op) { return op == Op::N ? CUBLAS_OP_N : op == Op::T ? CUBLAS_OP_T : CUBLAS_OP_C; }
}  // namespace

void CudaDevice::copy_to_device(const device::Copy2D& c) {
    CALA_CHECK_CUDA(cudaSetDevice(ordinal_));
    copy2d(c, cudaMemcpyHostToDevice, impl_->stream);
}
void CudaDevice::copy_to_host(const device::Copy2D& c) {
    CALA_CHECK_CUDA(cudaSetDevice(ordinal_));
    copy2d(c, cudaMemcpyDeviceToHost, impl_->stream);
}
void CudaDevice::copy_from_peer(const device::Copy2D& c, device::Device&) {
    CALA_CHECK_CUDA(cudaSetDevice(ordinal_));
    copy2d(c, cudaMemcpyDefault, impl_->stream);  // unified addressing: peer or same device
}

void CudaDevice::gemm(device::Scalar s, Op op_a, Op op_b, index_t m, index_t n, index_t k, const void* alpha,
                      const void* a, index_t lda, const void* b, index_t ldb, const void* beta, void* c, index_t ldc) {
    CALA_CHECK_CUDA(cudaSetDevice(ordinal_));
    const auto ta = op_of(op_a), tb = op_of(op_b);
    const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
    const int la = static_cast<int>(lda), lb = static_cast<int>(ldb), lc = static_cast<int>(ldc);
    auto h = impl_->blas;
    switch (s) {
    case device::Scalar::S:
        CALA_CHECK_CUBLAS(cublasSgemm(h, ta, tb, mi, ni, ki, static_cast<const float*>(alpha),
                                      static_cast<const float*>(a), la, static_cast<const float*>(b), lb,
                                      static_cast<const float*>(beta), static_cast<float*>(c), lc));
        break;
    case device::Scalar::D:
        CALA_CHECK_CUBLAS(cublasDgemm(h, ta, tb, mi, ni, ki, static_cast<const double*>(alpha),
                                      static_cast<const double*>(a), la, static_cast<const double*>(b), lb,
                                      static_cast<const double*>(beta), static_cast<double*>(c), lc));
        break;
    case device::Scalar::C:
        CALA_CHECK_CUBLAS(cublasCgemm(h, ta, tb, mi, ni, ki, static_cast<const cuComplex*>(alpha),
                                      static_cast<const cuComplex*>(a), la, static_cast<const cuComplex*>(b), lb,
                                      static_cast<const cuComplex*>(beta), static_cast<cuComplex*>(c), lc));
        break;
    case device::Scalar::Z:
        CALA_CHECK_CUBLAS(cublasZgemm(h, ta, tb, mi, ni, ki, static_cast<const cuDoubleComplex*>(alpha),
                                      static_cast<const cuDoubleComplex*>(a), la,
                                      static_cast<const cuDoubleComplex*>(b), lb,
                                      static_cast<const cuDoubleComplex*>(beta), static_cast<cuDoubleComplex*>(c), lc));
        break;
    }
}

void CudaDevice::synchronize() {
    CALA_CHECK_CUDA(cudaSetDevice(ordinal_));
    CALA_CHECK_CUDA(cudaStreamSynchronize(impl_->stream));
}

namespace {
// device_gemm's "0,1" entries reach CudaDevice through this registration (libcala_cuda loaded).
const bool registered = [] {
    device::register_cuda_factory(
        [](int ordinal, std::int64_t cap) { return std::make_unique<CudaDevice>(ordinal, cap); });
    return true;
}();
}  // namespace

}  // namespace cala::cuda

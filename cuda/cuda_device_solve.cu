// CudaDevice's factorization and solve operations: potrf (cuSOLVER, on the panel stream, its info
// kept on the device until take_info), trsm, syrk/herk and add (cuBLAS), ordered like the others.

#include <complex>
#include <string>

#include "cuda_device_impl.hpp"

namespace cala::cuda {

namespace {
/// Keeps the first nonzero potrf info (offset + info; a negative info as it is) in *first.
__global__ void keep_first_info(const int* info, long long* first, long long offset) {
    if (*info != 0 && *first == 0) *first = *info > 0 ? offset + *info : *info;
}

cudaDataType data_type(device::Scalar s) {
    switch (s) {
    case device::Scalar::S: return CUDA_R_32F;
    case device::Scalar::D: return CUDA_R_64F;
    case device::Scalar::C: return CUDA_C_32F;
    default: return CUDA_C_64F;
    }
}
cublasFillMode_t fill_of(bool lower) { return lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER; }
int to_int(index_t v, const char* what) {
    if (v > index_t{0x7fffffff}) throw DeviceError(std::string("CudaDevice: ") + what + " exceeds cuBLAS's int range");
    return static_cast<int>(v);
}
}  // namespace

void CudaDevice::potrf(device::Scalar s, bool lower, index_t n, void* a, index_t lda, index_t offset) {
    std::lock_guard<std::recursive_mutex> guard(impl_->mu);
    auto& im = *impl_;
    CALA_CHECK_CUDA(cudaSetDevice(ordinal_));
    if (n == 0) return;
    im.make_solver();
    BlockSync* blk = im.sync_of(a);
    im.order(im.panel, blk);
    im.pool->invalidate(a);
    const cudaDataType t = data_type(s);
    std::size_t dev_bytes = 0, host_bytes = 0;
    Solver& sv = *im.solver;
    CALA_CHECK_CUSOLVER(cusolverDnXpotrf_bufferSize(sv.h, sv.params, fill_of(lower), n, t, a, lda, t,
                                                    &dev_bytes, &host_bytes));
    im.reserve_work(dev_bytes, host_bytes);
    CALA_CHECK_CUSOLVER(cusolverDnXpotrf(sv.h, sv.params, fill_of(lower), n, t, a, lda, t, sv.work, sv.work_bytes,
                                         host_bytes ? sv.host_work.data() : nullptr, host_bytes, sv.info));
    // The launch's own error only: a not-ready status left by an earlier query (cudaEventQuery in the
    // staging slots' poll) is not sticky, and must not fail this rank alone.
    (void)cudaGetLastError();
    keep_first_info<<<1, 1, 0, im.stream[im.panel]>>>(sv.info, sv.first_info, static_cast<long long>(offset));
    CALA_CHECK_CUDA(cudaGetLastError());
    im.mark(im.panel, blk);
    ++im.gemms_since_barrier;
}

index_t CudaDevice::take_info() {
    std::lock_guard<std::recursive_mutex> guard(impl_->mu);
    auto& im = *impl_;
    if (!im.solver) return 0;
    CALA_CHECK_CUDA(cudaSetDevice(ordinal_));
    long long first = 0;
    CALA_CHECK_CUDA(
        cudaMemcpyAsync(&first, im.solver->first_info, sizeof first, cudaMemcpyDeviceToHost, im.stream[im.panel]));
    CALA_CHECK_CUDA(cudaStreamSynchronize(im.stream[im.panel]));
    CALA_CHECK_CUDA(cudaMemsetAsync(im.solver->first_info, 0, sizeof(long long), im.stream[im.panel]));
    return static_cast<index_t>(first);
}

void CudaDevice::trsm(device::Scalar s, bool left, bool lower, Op op_a, bool unit, index_t m, index_t n,
                      const void* alpha, const void* a, index_t lda, void* b, index_t ldb) {
    std::lock_guard<std::recursive_mutex> guard(impl_->mu);
    auto& im = *impl_;
    CALA_CHECK_CUDA(cudaSetDevice(ordinal_));
    if (m == 0 || n == 0) return;
    BlockSync* ba = im.sync_of(a);
    BlockSync* bb = im.sync_of(b);
    im.order(im.panel, ba, false);
    im.order(im.panel, bb);
    im.pool->invalidate(b);
    const cublasSideMode_t sd = left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT;
    const cublasFillMode_t ul = fill_of(lower);
    const bool real = s == device::Scalar::S || s == device::Scalar::D;
    const cublasOperation_t tr = op_of(real && op_a == Op::C ? Op::T : op_a);
    const cublasDiagType_t dg = unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
    const int mi = to_int(m, "trsm m"), ni = to_int(n, "trsm n"), la = to_int(lda, "lda"), lb = to_int(ldb, "ldb");
    auto h = im.panel_blas();
    switch (s) {
    case device::Scalar::S:
        CALA_CHECK_CUBLAS(cublasStrsm(h, sd, ul, tr, dg, mi, ni, static_cast<const float*>(alpha),
                                      static_cast<const float*>(a), la, static_cast<float*>(b), lb));
        break;
    case device::Scalar::D:
        CALA_CHECK_CUBLAS(cublasDtrsm(h, sd, ul, tr, dg, mi, ni, static_cast<const double*>(alpha),
                                      static_cast<const double*>(a), la, static_cast<double*>(b), lb));
        break;
    case device::Scalar::C:
        CALA_CHECK_CUBLAS(cublasCtrsm(h, sd, ul, tr, dg, mi, ni, static_cast<const cuComplex*>(alpha),
                                      static_cast<const cuComplex*>(a), la, static_cast<cuComplex*>(b), lb));
        break;
    case device::Scalar::Z:
        CALA_CHECK_CUBLAS(cublasZtrsm(h, sd, ul, tr, dg, mi, ni, static_cast<const cuDoubleComplex*>(alpha),
                                      static_cast<const cuDoubleComplex*>(a), la, static_cast<cuDoubleComplex*>(b), lb));
        break;
    }
    im.mark(im.panel, ba, false);
    im.mark(im.panel, bb);
    ++im.gemms_since_barrier;
}

void CudaDevice::rank_k(bool herm, device::Scalar s, bool lower, Op op_a, index_t n, index_t k, const void* alpha,
                        const void* a, index_t lda, const void* beta, void* c, index_t ldc) {
    std::lock_guard<std::recursive_mutex> guard(impl_->mu);
    auto& im = *impl_;
    CALA_CHECK_CUDA(cudaSetDevice(ordinal_));
    if (n == 0) return;
    BlockSync* ba = im.sync_of(a);
    BlockSync* bc = im.sync_of(c);
    im.order(Compute, ba, false);
    im.order(Compute, bc);
    im.pool->invalidate(c);
    const cublasFillMode_t ul = fill_of(lower);
    const bool real = s == device::Scalar::S || s == device::Scalar::D;
    const cublasOperation_t tr = op_a == Op::N ? CUBLAS_OP_N : real || !herm ? CUBLAS_OP_T : CUBLAS_OP_C;
    const int ni = to_int(n, herm ? "herk n" : "syrk n"), ki = to_int(k, herm ? "herk k" : "syrk k"), la = to_int(lda, "lda"), lc = to_int(ldc, "ldc");
    auto h = im.blas;
    switch (s) {
    case device::Scalar::S:
        CALA_CHECK_CUBLAS(cublasSsyrk(h, ul, tr, ni, ki, static_cast<const float*>(alpha), static_cast<const float*>(a),
                                      la, static_cast<const float*>(beta), static_cast<float*>(c), lc));
        break;
    case device::Scalar::D:
        CALA_CHECK_CUBLAS(cublasDsyrk(h, ul, tr, ni, ki, static_cast<const double*>(alpha),
                                      static_cast<const double*>(a), la, static_cast<const double*>(beta),
                                      static_cast<double*>(c), lc));
        break;
    case device::Scalar::C: {
        const auto* ac = static_cast<const cuComplex*>(a);
        auto* cc = static_cast<cuComplex*>(c);
        if (herm)
            CALA_CHECK_CUBLAS(cublasCherk(h, ul, tr, ni, ki, static_cast<const float*>(alpha), ac, la,
                                          static_cast<const float*>(beta), cc, lc));
        else
            CALA_CHECK_CUBLAS(cublasCsyrk(h, ul, tr, ni, ki, static_cast<const cuComplex*>(alpha), ac, la,
                                          static_cast<const cuComplex*>(beta), cc, lc));
        break;
    }
    case device::Scalar::Z: {
        const auto* az = static_cast<const cuDoubleComplex*>(a);
        auto* cz = static_cast<cuDoubleComplex*>(c);
        if (herm)
            CALA_CHECK_CUBLAS(cublasZherk(h, ul, tr, ni, ki, static_cast<const double*>(alpha), az, la,
                                          static_cast<const double*>(beta), cz, lc));
        else
            CALA_CHECK_CUBLAS(cublasZsyrk(h, ul, tr, ni, ki, static_cast<const cuDoubleComplex*>(alpha), az, la,
                                          static_cast<const cuDoubleComplex*>(beta), cz, lc));
        break;
    }
    }
    im.mark(Compute, ba, false);
    im.mark(Compute, bc);
    ++im.gemms_since_barrier;
}

void CudaDevice::add(device::Scalar s, Op op, index_t m, index_t n, const void* x, index_t ldx, const void* beta,
                     void* c, index_t ldc) {
    std::lock_guard<std::recursive_mutex> guard(impl_->mu);
    auto& im = *impl_;
    CALA_CHECK_CUDA(cudaSetDevice(ordinal_));
    if (m == 0 || n == 0) return;
    BlockSync* bx = im.sync_of(x);
    BlockSync* bc = im.sync_of(c);
    im.order(Compute, bx, false);
    im.order(Compute, bc);
    im.pool->invalidate(c);
    geam_in_place(im.blas, s, op, to_int(m, "add m"), to_int(n, "add n"), x, to_int(ldx, "ldx"), beta, c,
                  to_int(ldc, "ldc"));
    im.mark(Compute, bx, false);
    im.mark(Compute, bc);
}

}  // namespace cala::cuda

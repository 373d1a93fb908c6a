// CudaDevice: copies in, cuBLAS, copies out on three streams (potrf and trsm on a fourth), ordered per memory block by events;
// device memory from a TileCache (LRU eviction under the cap, resident host tiles reused).

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cuda_device_impl.hpp"

namespace cala::cuda {

int device_count() noexcept {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

CudaDevice::CudaDevice(int ordinal, std::int64_t cap) : impl_(std::make_unique<Impl>()), ordinal_(ordinal) {
    auto& im = *impl_;
    im.ordinal = ordinal;
    const int n = device_count();
    if (ordinal >= n)
        throw Error("CudaDevice: ordinal " + std::to_string(ordinal) + " but " + std::to_string(n) +
                    " CUDA device(s) visible");
    CALA_CHECK_CUDA(cudaSetDevice(ordinal));
    for (auto& s : im.stream) CALA_CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int pools = 0;
    if (cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, ordinal) == cudaSuccess && pools) {
        cudaMemPool_t mp = nullptr;
        std::uint64_t keep = ~std::uint64_t{0};  // freed memory stays in the pool for the next call
        im.async_pool = cudaDeviceGetDefaultMemPool(&mp, ordinal) == cudaSuccess &&
                        cudaMemPoolSetAttribute(mp, cudaMemPoolAttrReleaseThreshold, &keep) == cudaSuccess;
    }
    (void)cudaGetLastError();
    // cap 0: the free memory, counting what the pool keeps from earlier calls as free.
    std::size_t free_b = 0, total_b = 0;
    CALA_CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
    std::int64_t avail = static_cast<std::int64_t>(free_b);
    if (cudaMemPool_t mp = nullptr; im.async_pool && cudaDeviceGetDefaultMemPool(&mp, ordinal) == cudaSuccess) {
        std::uint64_t reserved = 0, used = 0;
        if (cudaMemPoolGetAttribute(mp, cudaMemPoolAttrReservedMemCurrent, &reserved) == cudaSuccess &&
            cudaMemPoolGetAttribute(mp, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess && reserved > used)
            avail += static_cast<std::int64_t>(reserved - used);
    }
    (void)cudaGetLastError();
    const std::int64_t budget = cap > 0 ? cap : avail / 20 * 19;
    for (auto& e : im.chunk) CALA_CHECK_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    CALA_CHECK_CUBLAS(cublasCreate(&im.blas));
    CALA_CHECK_CUBLAS(cublasSetStream(im.blas, im.stream[Compute]));
    im.pool = std::make_unique<device::TileCache>(
        budget, [p = impl_.get()](std::int64_t b) { return p->block_alloc(b); },
        [p = impl_.get()](void* q, std::int64_t b) { p->block_free(q, b); }, name());
    for (int peer = 0; peer < n; ++peer) {
        int ok = 0;
        if (peer != ordinal && cudaDeviceCanAccessPeer(&ok, ordinal, peer) == cudaSuccess && ok)
            (void)cudaDeviceEnablePeerAccess(peer, 0);  // already enabled is fine
    }
    (void)cudaGetLastError();
}

CudaDevice::~CudaDevice() {
    auto& im = *impl_;
    cudaSetDevice(ordinal_);
    for (auto s : im.stream)
        if (s) cudaStreamSynchronize(s);
    try {
        im.stage.drain();
    } catch (...) {
    }
    end_host_ranges();
    im.pool.reset();  // frees are ordered on the in-stream
    if (im.stream[In]) cudaStreamSynchronize(im.stream[In]);
    for (auto e : im.chunk)
        if (e) cudaEventDestroy(e);
    for (auto& [id, e] : im.marks) cudaEventDestroy(e);
    im.free_solver();
    if (im.blas) cublasDestroy(im.blas);
    if (im.blas_panel) cublasDestroy(im.blas_panel);
    for (auto s : im.stream)
        if (s) cudaStreamDestroy(s);
}

std::string CudaDevice::name() const { return "cuda:" + std::to_string(ordinal_); }
std::int64_t CudaDevice::budget_bytes() const { return impl_->pool->budget_bytes(); }
std::int64_t CudaDevice::used_bytes() const { return impl_->pool->live_bytes(); }
std::int64_t CudaDevice::peak_bytes() const { return impl_->pool->peak_bytes(); }
void CudaDevice::reset_peak() { impl_->pool->reset_peak(); }
std::int64_t CudaDevice::physical_bytes() const { return impl_->pool->physical_bytes(); }
std::int64_t CudaDevice::evictions() const { return impl_->pool->stats().evictions; }
std::int64_t CudaDevice::tiles_reused() const { return impl_->reused; }

void* CudaDevice::allocate(std::int64_t bytes) {
    std::lock_guard<std::recursive_mutex> guard(impl_->mu);
    return impl_->pool->acquire(bytes);
}

void CudaDevice::release(void* p, std::int64_t) noexcept {
    std::lock_guard<std::recursive_mutex> guard(impl_->mu);
    if (p) impl_->pool->release(p);  // reuse waits for this block's events
}

void* CudaDevice::load(const device::Copy2D& src, std::int64_t bytes, bool* moved) {
    std::lock_guard<std::recursive_mutex> guard(impl_->mu);
    auto& im = *impl_;
    bool hit = false;
    void* p = im.pool->acquire(bytes, device::TileId{src.src, src.ld_src, src.rows, src.cols, src.elem}, hit);
    if (hit) {
        ++im.reused;
        *moved = false;
        return p;
    }
    device::Copy2D c = src;
    c.dst = p;
    try {
        im.copy_in(c);
    } catch (...) {
        im.pool->invalidate(p);
        im.pool->release(p);
        throw;
    }
    *moved = true;
    return p;
}

void CudaDevice::copy_to_device(const device::Copy2D& c) {
    std::lock_guard<std::recursive_mutex> guard(impl_->mu);
    impl_->pool->invalidate(c.dst);
    impl_->copy_in(c);
}

void CudaDevice::copy_to_host(const device::Copy2D& c) {
    std::lock_guard<std::recursive_mutex> guard(impl_->mu);
    auto& im = *impl_;
    CALA_CHECK_CUDA(cudaSetDevice(ordinal_));
    BlockSync* b = im.sync_of(c.src);
    im.order(Out, b, false);
    if (im.direct(c.dst)) copy2d(c, cudaMemcpyDeviceToHost, im.stream[Out]);
    else im.stage.to_host(c, im.stream[Out]);
    im.mark(Out, b, false);
}

void CudaDevice::copy_from_peer(const device::Copy2D& c, device::Device& from) {
    std::lock_guard<std::recursive_mutex> guard(impl_->mu);
    auto& im = *impl_;
    auto* peer = dynamic_cast<CudaDevice*>(&from);
    if (!peer) from.synchronize();  // not a CUDA device: complete its work first
    CALA_CHECK_CUDA(cudaSetDevice(ordinal_));
    im.pool->invalidate(c.dst);
    BlockSync* dst = im.sync_of(c.dst);
    BlockSync* src = peer ? peer->impl_->sync_of(c.src) : nullptr;
    im.order(In, dst);
    if (src)  // after the peer's writes of the source (cross-device event waits)
        for (int o = 0; o < NStreams; ++o)
            if (src->recorded[o]) CALA_CHECK_CUDA(cudaStreamWaitEvent(im.stream[In], src->ev[o], 0));
    copy2d(c, cudaMemcpyDefault, im.stream[In]);  // unified addressing: peer or same GPU
    im.mark(In, dst);
    if (src) {  // the peer's next use of the source waits for this copy
        cudaEvent_t e = nullptr;
        CALA_CHECK_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        if (const cudaError_t rc = cudaEventRecord(e, im.stream[In]); rc != cudaSuccess) {
            cudaEventDestroy(e);
            CALA_CHECK_CUDA(rc);
        }
        src->foreign.push_back(e);
    }
}

void CudaDevice::gemm(device::Scalar s, Op op_a, Op op_b, index_t m, index_t n, index_t k, const void* alpha,
                      const void* a, index_t lda, const void* b, index_t ldb, const void* beta, void* c, index_t ldc) {
    std::lock_guard<std::recursive_mutex> guard(impl_->mu);
    auto& im = *impl_;
    CALA_CHECK_CUDA(cudaSetDevice(ordinal_));
    BlockSync* blocks[3] = {im.sync_of(a), im.sync_of(b), im.sync_of(c)};
    for (int i = 0; i < 3; ++i) im.order(Compute, blocks[i], i == 2);  // a, b read; c written
    im.pool->invalidate(c);
    const auto ta = op_of(op_a), tb = op_of(op_b);
    const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
    const int la = static_cast<int>(lda), lb = static_cast<int>(ldb), lc = static_cast<int>(ldc);
    auto h = im.blas;
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
    for (int i = 0; i < 3; ++i) im.mark(Compute, blocks[i], i == 2);
    ++im.gemms_since_barrier;
}


std::uint64_t CudaDevice::mark() {
    std::lock_guard<std::recursive_mutex> guard(impl_->mu);
    auto& im = *impl_;
    CALA_CHECK_CUDA(cudaSetDevice(ordinal_));
    cudaEvent_t e = nullptr;
    CALA_CHECK_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    if (const cudaError_t rc = cudaEventRecord(e, im.stream[Compute]); rc != cudaSuccess) {
        cudaEventDestroy(e);
        CALA_CHECK_CUDA(rc);
    }
    im.marks.emplace(im.next_mark, e);
    return im.next_mark++;
}

void CudaDevice::wait_mark(std::uint64_t m) {
    cudaEvent_t e = nullptr;
    {
        std::lock_guard<std::recursive_mutex> guard(impl_->mu);
        auto it = impl_->marks.find(m);
        if (it == impl_->marks.end()) return;
        e = it->second;
        impl_->marks.erase(it);
    }
    const cudaError_t rc = cudaEventSynchronize(e);  // outside the lock: other threads keep issuing
    cudaEventDestroy(e);
    CALA_CHECK_CUDA(rc);
}

void CudaDevice::synchronize() {
    auto& im = *impl_;
    CALA_CHECK_CUDA(cudaSetDevice(ordinal_));
    for (auto s : im.stream) CALA_CHECK_CUDA(cudaStreamSynchronize(s));
    std::lock_guard<std::recursive_mutex> guard(im.mu);
    im.stage.drain();  // staged device->host copies into host memory
}

void CudaDevice::barrier() {
    std::lock_guard<std::recursive_mutex> guard(impl_->mu);
    // The host runs at most one chunk ahead: mark this chunk's end, wait for the previous one's.
    auto& im = *impl_;
    if (im.gemms_since_barrier == 0) return;  // nothing computed since the last one
    im.gemms_since_barrier = 0;
    CALA_CHECK_CUDA(cudaSetDevice(ordinal_));
    CALA_CHECK_CUDA(cudaEventRecord(im.chunk[im.chunk_cur], im.stream[Compute]));
    im.chunk_recorded[im.chunk_cur] = true;
    im.chunk_cur ^= 1;
    if (im.chunk_recorded[im.chunk_cur]) CALA_CHECK_CUDA(cudaEventSynchronize(im.chunk[im.chunk_cur]));
    im.stage.poll();
}

void CudaDevice::begin_host_ranges(const std::vector<std::pair<const void*, std::int64_t>>& ranges) {
    std::lock_guard<std::recursive_mutex> guard(impl_->mu);
    auto& im = *impl_;
    im.pool->forget();
    im.locked.clear();
    for (const auto& [p, bytes] : ranges) {
        if (im.mode == HostCopyMode::Stage) {  // page-locked already (cudaHostAlloc): direct copies
            cudaPointerAttributes attr{};
            if (p && cudaPointerGetAttributes(&attr, p) == cudaSuccess && attr.type == cudaMemoryTypeHost)
                im.locked.emplace_back(static_cast<const char*>(p), static_cast<const char*>(p) + bytes);
            (void)cudaGetLastError();
            continue;
        }
        if (pin_range(p, bytes))
            im.locked.emplace_back(static_cast<const char*>(p), static_cast<const char*>(p) + bytes);
        im.pinned.push_back(p);
    }
}

void CudaDevice::end_host_ranges() noexcept {
    std::lock_guard<std::recursive_mutex> guard(impl_->mu);
    for (const void* p : impl_->pinned) unpin_range(p);
    impl_->pinned.clear();
    impl_->locked.clear();
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

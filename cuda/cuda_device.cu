// CudaDevice: copies in, cuBLAS, copies out on three streams (potrf and trsm on a fourth), ordered per memory block by events;
// device memory from a TileCache (LRU eviction under the cap, resident host tiles reused).

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <complex>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cuda_check.hpp"
#include "cuda_device.hpp"
#include "cusolver_check.hpp"
#include "device/tile_cache.hpp"
#include "geam.hpp"
#include "pinned.hpp"
#include "solver_pool.hpp"
#include "staging.hpp"

namespace cala::cuda {

namespace {
// Panel: potrf and trsm (the factorization's critical path), so that a Cholesky's next updates,
// which do not read the block being factored, run beside them (CALA_CUDA_PANEL_STREAM=0: on Compute).
enum Stream { In = 0, Compute = 1, Out = 2, Panel = 3, NStreams = 4 };
bool panel_stream_enabled() {
    const char* e = std::getenv("CALA_CUDA_PANEL_STREAM");
    return !(e && std::string(e) == "0");
}

/// The last use and the last write of one memory block on each stream, and peer copies (other
/// devices) reading it. A write waits for the other streams' last uses, a read for their last
/// writes only (a copy out of a finished block does not hold back the kernels that read it).
struct BlockSync {
    cudaEvent_t ev[NStreams]{};
    bool recorded[NStreams]{};
    cudaEvent_t wev[NStreams]{};
    bool wrecorded[NStreams]{};
    std::vector<cudaEvent_t> foreign;  // recorded on another device's stream; consumed at next use
};

void copy2d(const device::Copy2D& c, cudaMemcpyKind kind, cudaStream_t s) {
    if (c.rows == 0 || c.cols == 0) return;
    CALA_CHECK_CUDA(cudaMemcpy2DAsync(c.dst, c.elem * c.ld_dst, c.src, c.elem * c.ld_src, c.elem * c.rows,
                                      static_cast<std::size_t>(c.cols), kind, s));
}
cublasOperation_t op_of(Op op) { return op == Op::N ? CUBLAS_OP_N : op == Op::T ? CUBLAS_OP_T : CUBLAS_OP_C; }

/// Keeps the first nonzero potrf info (offset + info; a negative info as it is) in *first.
__global__ void keep_first_info(const int* info, long long* first, long long offset) {
    if (*info != 0 && *first == 0) *first = *info > 0 ? offset + *info : *info;
}

}  // namespace

struct CudaDevice::Impl {
    int ordinal = 0;
    cudaStream_t stream[NStreams]{};
    cublasHandle_t blas = nullptr;
    // The panel stream's own handle (a handle's workspace must not be shared by concurrent
    // streams), made at the first potrf or trsm.
    cublasHandle_t blas_panel = nullptr;
    Stream panel = panel_stream_enabled() ? Panel : Compute;
    cublasHandle_t panel_blas() {
        if (panel == Compute) return blas;
        if (!blas_panel) {
            CALA_CHECK_CUBLAS(cublasCreate(&blas_panel));
            CALA_CHECK_CUBLAS(cublasSetStream(blas_panel, stream[Panel]));
        }
        return blas_panel;
    }
    cudaEvent_t chunk[2]{};  // compute-stream marks of the last two barriers
    bool chunk_recorded[2]{};
    int chunk_cur = 0;
    std::int64_t gemms_since_barrier = 0;
    std::unordered_map<void*, BlockSync> sync;  // by block base address
    std::unique_ptr<device::TileCache> pool;
    std::vector<const void*> pinned;
    std::int64_t reused = 0;
    // One thread at a time issues work (the node runtime drives a device from a compute and a
    // copy thread): the block events, the pool and the staging slots are not thread-safe.
    std::recursive_mutex mu;
    std::unordered_map<std::uint64_t, cudaEvent_t> marks;  // mark() ids not yet waited for
    std::uint64_t next_mark = 1;
    // Pageable host memory goes through the staging slots (staging.hpp) unless CALA_CUDA_PIN says
    // otherwise; page-locked ranges (cudaHostAlloc, or registered) are copied directly.
    HostCopyMode mode = host_copy_mode();
    Stager stage;
    std::vector<std::pair<const char*, const char*>> locked;  // this call's page-locked operands

    // potrf (at its first call): a pooled cuSOLVER handle on the compute stream, its workspace
    // grown as needed, the info words on the device.
    Solver* solver = nullptr;

    void make_solver() {
        if (solver) return;
        solver = take_solver(ordinal);
        CALA_CHECK_CUSOLVER(cusolverDnSetStream(solver->h, stream[panel]));
        CALA_CHECK_CUDA(cudaMemsetAsync(solver->first_info, 0, sizeof(long long), stream[panel]));
    }
    /// Device and host workspace of at least these sizes; growing waits for the kernels using
    /// the old one.
    void reserve_work(std::size_t dev_bytes, std::size_t host_bytes) {
        Solver& sv = *solver;
        if (dev_bytes > sv.work_bytes) {
            CALA_CHECK_CUDA(cudaStreamSynchronize(stream[panel]));
            if (sv.work) CALA_CHECK_CUDA(cudaFree(sv.work));
            sv.work = nullptr;
            sv.work_bytes = 0;
            CALA_CHECK_CUDA(cudaMalloc(&sv.work, dev_bytes));
            sv.work_bytes = dev_bytes;
        }
        if (host_bytes > sv.host_work.size()) {
            CALA_CHECK_CUDA(cudaStreamSynchronize(stream[panel]));
            sv.host_work.resize(host_bytes);
        }
    }
    void free_solver() noexcept {  // after the streams are synchronized
        if (solver) give_solver(solver);
        solver = nullptr;
    }

    // Blocks come from the device's stream-ordered memory pool where it has one (kept across
    // calls, so a new CudaDevice does not pay cudaMalloc again, and a free does not synchronize
    // the GPU): allocated on the in-stream, whose event orders the block's first use on the
    // others; freed on the in-stream after every use of the block.
    bool async_pool = false;

    void* block_alloc(std::int64_t bytes) {
        CALA_CHECK_CUDA(cudaSetDevice(ordinal));
        void* p = nullptr;
        if (async_pool)
            CALA_CHECK_CUDA(cudaMallocAsync(&p, static_cast<std::size_t>(bytes), stream[In]));
        else
            CALA_CHECK_CUDA(cudaMalloc(&p, static_cast<std::size_t>(bytes)));
        BlockSync b;
        cudaError_t rc = cudaSuccess;
        for (auto& e : b.ev)
            if (rc == cudaSuccess) rc = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
        for (auto& e : b.wev)
            if (rc == cudaSuccess) rc = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
        if (rc == cudaSuccess && async_pool) {
            rc = cudaEventRecord(b.ev[In], stream[In]);
            b.recorded[In] = true;
        }
        if (rc != cudaSuccess) {
            for (auto& made : b.ev)
                if (made) cudaEventDestroy(made);
            for (auto& made : b.wev)
                if (made) cudaEventDestroy(made);
            async_pool ? cudaFreeAsync(p, stream[In]) : cudaFree(p);
            CALA_CHECK_CUDA(rc);
        }
        sync.emplace(p, b);
        return p;
    }
    void block_free(void* p, std::int64_t) noexcept {  // after the block's pending work
        cudaSetDevice(ordinal);
        auto it = sync.find(p);
        if (async_pool) {
            if (it != sync.end()) {
                for (int s = 0; s < NStreams; ++s)
                    if (s != In && it->second.recorded[s]) cudaStreamWaitEvent(stream[In], it->second.ev[s], 0);
                for (auto e : it->second.foreign) cudaStreamWaitEvent(stream[In], e, 0);
            }
            cudaFreeAsync(p, stream[In]);
        }
        if (it != sync.end()) {
            for (int s = 0; s < NStreams; ++s) {
                if (!async_pool && it->second.recorded[s]) cudaEventSynchronize(it->second.ev[s]);
                cudaEventDestroy(it->second.ev[s]);
                cudaEventDestroy(it->second.wev[s]);
            }
            for (auto e : it->second.foreign) {
                if (!async_pool) cudaEventSynchronize(e);
                cudaEventDestroy(e);
            }
            sync.erase(it);
        }
        if (!async_pool) cudaFree(p);
    }
    BlockSync* sync_of(const void* p) {
        void* base = pool->block_of(p);
        return base ? &sync.at(base) : nullptr;
    }
    /// Stream s, about to write b (or only read it), waits for the other streams' last use (last
    /// write) of b, and for peer copies reading it.
    void order(Stream s, BlockSync* b, bool write = true) {
        if (!b) return;
        for (int o = 0; o < NStreams; ++o) {
            if (o == s) continue;
            if (write && b->recorded[o]) CALA_CHECK_CUDA(cudaStreamWaitEvent(stream[s], b->ev[o], 0));
            if (!write && b->wrecorded[o]) CALA_CHECK_CUDA(cudaStreamWaitEvent(stream[s], b->wev[o], 0));
        }
        for (auto e : b->foreign) {
            CALA_CHECK_CUDA(cudaStreamWaitEvent(stream[s], e, 0));
            cudaEventDestroy(e);  // released by the runtime once complete; the wait is enqueued
        }
        b->foreign.clear();
    }
    void mark(Stream s, BlockSync* b, bool write = true) {
        if (!b) return;
        CALA_CHECK_CUDA(cudaEventRecord(b->ev[s], stream[s]));
        b->recorded[s] = true;
        if (write) {
            CALA_CHECK_CUDA(cudaEventRecord(b->wev[s], stream[s]));
            b->wrecorded[s] = true;
        }
    }
    /// Whether host memory at p is copied without the slots: page-locked, or staging off.
    bool direct(const void* p) {
        if (mode != HostCopyMode::Stage) return true;
        const char* q = static_cast<const char*>(p);
        for (const auto& [lo, hi] : locked)
            if (lo <= q && q < hi) return true;
        cudaPointerAttributes attr{};
        const bool pinned = cudaPointerGetAttributes(&attr, p) == cudaSuccess && attr.type == cudaMemoryTypeHost;
        (void)cudaGetLastError();
        return pinned;
    }
    void copy_in(const device::Copy2D& c) {
        CALA_CHECK_CUDA(cudaSetDevice(ordinal));
        BlockSync* b = sync_of(c.dst);
        order(In, b);
        if (direct(c.src)) copy2d(c, cudaMemcpyHostToDevice, stream[In]);
        else stage.to_device(c, stream[In]);
        mark(In, b);
    }
};

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

namespace {
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

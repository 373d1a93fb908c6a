#pragma once
// CudaDevice::Impl: one GPU's streams, the per-block events that order them, its memory pool and
// staging slots. Shared by cuda_device.cu (memory, copies, gemm, ordering) and cuda_device_solve.cu
// (potrf, trsm, syrk/herk, add); nothing else includes it.

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

// Panel: potrf and trsm (the factorization's critical path), so that a Cholesky's next updates,
// which do not read the block being factored, run beside them (CALA_CUDA_PANEL_STREAM=0: on Compute).
enum Stream { In = 0, Compute = 1, Out = 2, Panel = 3, NStreams = 4 };
inline bool panel_stream_enabled() {
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

inline void copy2d(const device::Copy2D& c, cudaMemcpyKind kind, cudaStream_t s) {
    if (c.rows == 0 || c.cols == 0) return;
    CALA_CHECK_CUDA(cudaMemcpy2DAsync(c.dst, c.elem * c.ld_dst, c.src, c.elem * c.ld_src, c.elem * c.rows,
                                      static_cast<std::size_t>(c.cols), kind, s));
}
inline cublasOperation_t op_of(Op op) { return op == Op::N ? CUBLAS_OP_N : op == Op::T ? CUBLAS_OP_T : CUBLAS_OP_C; }

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

}  // namespace cala::cuda

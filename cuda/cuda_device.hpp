#pragma once
// CudaDevice: one GPU behind the Device interface. Three streams (host->device and peer copies
// in; cuBLAS compute; device->host out) ordered by one event per stream per memory block, so the
// engine's lookahead prefetch runs under the compute of the current chunk; a TileCache pool
// (LRU eviction under the cap, host-tile identity so a resident A/B tile is not copied again);
// the host operands pinned for the duration of a call. Internal to cuda/: includes no CUDA
// header itself, the .cu file holds the CUDA types.
//
// Chunk s on one device (l = 1), time flowing right:
//   in:      [load s+1 ............]        [load s+2 ......]
//   compute: [gemms s ...................]  [gemms s+1 ..........]
//   out:                          [C of the finished block]
// A gemm waits (stream wait on an event) for the loads of its tiles; a load into memory released
// by a gemm waits for that gemm; the host runs at most one chunk ahead of the compute stream.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "device/device.hpp"

namespace cala::cuda {

/// Number of CUDA devices visible (0 when there is no driver or no GPU).
int device_count() noexcept;

class CudaDevice final : public device::Device {
public:
    /// cap_bytes 0: the free memory of the GPU at construction, less 5%.
    CudaDevice(int ordinal, std::int64_t cap_bytes);
    ~CudaDevice() override;
    CudaDevice(const CudaDevice&) = delete;
    CudaDevice& operator=(const CudaDevice&) = delete;

    std::string name() const override;
    std::int64_t budget_bytes() const override;
    std::int64_t used_bytes() const override;
    std::int64_t peak_bytes() const override;
    void reset_peak() override;
    void* allocate(std::int64_t bytes) override;
    void release(void* p, std::int64_t bytes) noexcept override;
    void copy_to_device(const device::Copy2D& c) override;
    void copy_to_host(const device::Copy2D& c) override;
    void copy_from_peer(const device::Copy2D& c, device::Device& from) override;
    void gemm(device::Scalar s, Op op_a, Op op_b, index_t m, index_t n, index_t k, const void* alpha, const void* a,
              index_t lda, const void* b, index_t ldb, const void* beta, void* c, index_t ldc) override;
    void synchronize() override;
    /// cusolverDnXpotrf on the panel stream (workspace kept across calls); the info stays on
    /// the device until take_info().
    void potrf(device::Scalar s, bool lower, index_t n, void* a, index_t lda, index_t offset) override;
    index_t take_info() override;
    void trsm(device::Scalar s, bool left, bool lower, Op op_a, bool unit, index_t m, index_t n, const void* alpha,
              const void* a, index_t lda, void* b, index_t ldb) override;
    void herk(device::Scalar s, bool lower, Op op_a, index_t n, index_t k, const void* alpha, const void* a,
              index_t lda, const void* beta, void* c, index_t ldc) override {
        rank_k(true, s, lower, op_a, n, k, alpha, a, lda, beta, c, ldc);
    }
    void syrk(device::Scalar s, bool lower, Op op_a, index_t n, index_t k, const void* alpha, const void* a,
              index_t lda, const void* beta, void* c, index_t ldc) override {
        rank_k(false, s, lower, op_a, n, k, alpha, a, lda, beta, c, ldc);
    }
    /// cublas?geam in place on the compute stream.
    void add(device::Scalar s, Op op, index_t m, index_t n, const void* x, index_t ldx, const void* beta, void* c,
             index_t ldc) override;
    void* load(const device::Copy2D& src, std::int64_t bytes, bool* moved) override;
    void barrier() override;
    void begin_host_ranges(const std::vector<std::pair<const void*, std::int64_t>>& ranges) override;
    void end_host_ranges() noexcept override;
    std::int64_t tiles_reused() const override;
    /// 2048: a 2048^3 DGEMM runs at cuBLAS's full rate (58.7 TF/s on an H200), a 256^3 one at 2.2.
    index_t preferred_tile() const override { return 2048; }
    /// An event on the compute stream; wait_mark synchronizes on it and destroys it.
    std::uint64_t mark() override;
    void wait_mark(std::uint64_t m) override;

    /// Device memory this device holds, live or kept for reuse (never above budget_bytes()).
    std::int64_t physical_bytes() const;
    /// Blocks freed or reused while they still held a host tile (LRU evictions).
    std::int64_t evictions() const;
    int ordinal() const noexcept { return ordinal_; }

private:
    // herk (herm) or syrk: cublas?syrk for real types, ?herk / ?syrk for complex ones.
    void rank_k(bool herm, device::Scalar s, bool lower, Op op_a, index_t n, index_t k, const void* alpha,
                const void* a, index_t lda, const void* beta, void* c, index_t ldc);
    struct Impl;  // streams, events, cuBLAS handle, tile pool
    std::unique_ptr<Impl> impl_;
    int ordinal_;
};

}  // namespace cala::cuda

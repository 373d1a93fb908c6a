#pragma once
// CudaDevice: one GPU behind the Device interface (a stream, a cuBLAS handle, a tile pool).
// Internal to cuda/: includes no CUDA header itself, the .cu file holds the CUDA types.

#include <cstdint>
#include <map>
#include <algorithm>
#include <memory>
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
    std::int64_t budget_bytes() const override { return budget_; }
    std::int64_t used_bytes() const override { return used_; }
    std::int64_t peak_bytes() const override { return peak_; }
    void reset_peak() override { peak_ = used_; }
    void* allocate(std::int64_t bytes) override;
    void release(void* p, std::int64_t bytes) noexcept override;
    void copy_to_device(const device::Copy2D& c) override;
    void copy_to_host(const device::Copy2D& c) override;
    void copy_from_peer(const device::Copy2D& c, device::Device& from) override;
    void gemm(device::Scalar s, Op op_a, Op op_b, index_t m, index_t n, index_t k, const void* alpha, const void* a,
              index_t lda, const void* b, index_t ldb, const void* beta, void* c, index_t ldc) override;
    void synchronize() override;

private:
    struct Impl;  // stream, event, cuBLAS handle
    std::unique_ptr<Impl> impl_;
    int ordinal_;
    std::int64_t budget_ = 0, used_ = 0, peak_ = 0;
    std::map<std::int64_t, std::vector<void*>> pool_;  // freed tiles kept for reuse, by size
};

}  // namespace cala::cuda

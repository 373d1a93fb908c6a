#pragma once
// Copies between pageable host memory and a device through page-locked slots. cudaMemcpyAsync
// from pageable memory is staged and serialized by the driver (6-7 GB/s h2d on an H200 host),
// and pinning the caller's operands with cudaHostRegister costs about 1 s per 13 GiB on every
// call; packing tiles into a few pinned slots on the rank's cores runs at the link's speed
// (48-50 GB/s with 16 threads) and overlaps the GPU's work. No CUDA type appears here.
//
//   to_device:  host tile --(memcpy, OpenMP team)--> slot --(cudaMemcpy2DAsync, stream)--> device
//   to_host:    device --(cudaMemcpy2DAsync, stream)--> slot ... --(memcpy once the copy is done:
//               when the slot is reused, when drain() runs, or when a later host read overlaps)--> host
//
// The slots (32 MiB each, 8 for each direction) come from a process-wide pool, allocated once (cudaHostAlloc) and
// kept, so the per-call CudaDevice pays nothing after the first call.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "device/device.hpp"

namespace cala::cuda {

/// How CudaDevice copies pageable host memory: CALA_CUDA_PIN=0 pageable copies; =register
/// (or 1) cudaHostRegister the call's operands; unset or =stage, the staging slots.
enum class HostCopyMode { Pageable, Register, Stage };
HostCopyMode host_copy_mode();

class Stager {
public:
    Stager();
    ~Stager();  // drains
    Stager(const Stager&) = delete;
    Stager& operator=(const Stager&) = delete;

    /// c.src in pageable host memory, c.dst on the device; ordered on stream (a cudaStream_t).
    /// The host source is read before this returns.
    void to_device(const device::Copy2D& c, void* stream);
    /// c.src on the device, c.dst in pageable host memory; the host side is written by drain()
    /// at the latest.
    void to_host(const device::Copy2D& c, void* stream);
    /// Every pending device->host copy completed and unpacked into host memory.
    void drain();
    /// Unpacks the pending copies that have completed, without waiting.
    void poll();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace cala::cuda

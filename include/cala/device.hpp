#pragma once
// Local GEMM on a list of devices (issue 8): the chunked out-of-core algorithm of Herault et al.
// 2019, Algorithm 3. No CUDA type appears here; the devices themselves live in lib/device/ and
// cuda/.
//
// cala::device_gemm -> plan_chunked (lib/device/plan.cpp) -> chunked engine -> Device::gemm
//                      (HostDevice: kernels::gemm / BLIS; CudaDevice: cuBLAS)

#include <cstdint>
#include <string>
#include <vector>

#include "cala/types.hpp"

namespace cala {

/// Tiles one device received and sent during a device_gemm (tiles of tile x tile elements;
/// edge tiles count as one), and its memory.
struct DeviceTraffic {
    /// Counts are of copies: a tile of A, B or C, or with half-depth slabs (k_split = 2) an input
    /// slab of t x t/2 (A) or t/2 x t (B), each counts one.
    std::int64_t h2d = 0;           ///< tiles copied host -> this device (A, B, and C when beta != 0)
    std::int64_t d2d = 0;           ///< tiles copied into this device from another device
    std::int64_t d2h = 0;           ///< tiles copied this device -> host (C)
    /// tiles of A or B this device still held from an earlier load of the same host tile and
    /// used without a copy (CudaDevice's tile pool; always 0 on HostDevice). h2d + reused is
    /// what the equation-(1) model counts as host -> device.
    std::int64_t reused = 0;
    std::int64_t peak_bytes = 0;    ///< peak device memory this call held
    std::int64_t budget_bytes = 0;  ///< the cap it ran under
};

/// What device_gemm chose and did.
struct DeviceGemmReport {
    std::int64_t tile = 0, b = 0, c = 0, d = 0, lookahead = 0;
    char regime = 'c';  ///< seed equation (1): 'a', 'b' or 'c'
    bool stream_c = false;  ///< C copied in and out under the products (DeviceGemmOptions::stream_c)
    std::vector<DeviceTraffic> devices;
    /// The k dimension in slabs of tile / k_split (1: whole tiles; 2: A in t x t/2 slabs, B in
    /// t/2 x t, so that a larger C block fits: DeviceGemmOptions::k_split). d counts slabs.
    std::int64_t k_split = 1;
};

/// Options of device_gemm. Zero / empty / negative means "choose".
struct DeviceGemmOptions {
    /// Comma-separated device list: "host" (a HostDevice) or a CUDA ordinal ("0"); one entry
    /// may repeat ("host,host,host", "0,0"). Empty: the CALA_DEVICES environment variable, else
    /// "host".
    std::string devices;
    std::int64_t max_device_bytes = 0;  ///< cap per device; 0: the device's own memory (host: 1 GiB)
    index_t tile = 0;                   ///< tile size t (0: the device's, 256 host, 2048 CUDA)
    index_t b = 0, c = 0, d = 0;        ///< block rows, block columns, chunk depth, in tiles
    int lookahead = -1;                 ///< l; -1: 1 when C fits the devices, 2 otherwise
    char regime = 0;                    ///< force 'a', 'b' or 'c' (must fit); 0: best that fits
    /// C's copies under the products (regime 'a'): 1 forces it (must fit), 0 forbids it, -1: when
    /// b, c, d are not forced and all of C fits, C in 2 x 2 blocks, d = 1, l = 3, if that fits.
    int stream_c = -1;
    DeviceGemmReport* report = nullptr; ///< filled when not null
    /// A list naming more than one kind of unit ("cpu,0,1", "cpu,host,host": "cpu" is the host's
    /// cores reading host memory) runs on the node runtime (cala/node.hpp) instead, one static
    /// allocation per chunk of C: with these speeds (empty: CALA_UNIT_SPEEDS, else calibrated: node::calibrate) and
    /// this strategy (empty: CALA_NODE_STRATEGY, else "nrrp-rounded-effective").
    std::vector<double> speeds = {};
    std::string strategy = {};
    /// Input slabs of tile / k_split in k: 1 whole tiles, 2 half-depth slabs (the C block may
    /// then take the memory two tiles of inputs would need); 0: the planner's, which takes half
    /// depth where the transfer model says it moves > 5% fewer bytes (C larger than the devices).
    /// A forced d counts tiles of depth (d·k_split slabs).
    int k_split = 0;
};

/// True when the list (empty: CALA_DEVICES) names more than one kind of unit, or "cpu": such a
/// list runs on the node runtime.
bool uses_node(const std::string& devices);

/// Tiles moved by every device_gemm of this process since the last reset, summed over devices
/// (cala::gemm with devices runs one per local update).
DeviceTraffic device_traffic_total() noexcept;
void reset_device_traffic() noexcept;

/// C := alpha·op(A)·op(B) + beta·C on host matrices (column-major), computed on the devices of
/// opts. Local: no communication; A, B, C live in host memory and C is back there on return.
/// C may be larger than all device memory together.
/// @pre op(A) is m x k, op(B) is k x n, lda/ldb/ldc at least the stored row counts (cala::Error)
/// @note beta == 0: C is not read.
template <class T>
void device_gemm(Op op_a, Op op_b, index_t m, index_t n, index_t k, T alpha, const T* a, index_t lda,
                 const T* b, index_t ldb, T beta, T* c, index_t ldc, const DeviceGemmOptions& opts = {});

}  // namespace cala

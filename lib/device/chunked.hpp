#pragma once
// The chunked out-of-core GEMM of Herault et al. 2019 (Algorithm 3) over the G devices of one
// process (p = q = 1 in the seed's notation), its parameter choice and its transfer model.
//
// Worked example, G = 2, C of 4 x 4 tiles, b = 2, c = 4, d = 2, Kt = 4 (so X = 2, Y = 1, Z = 2):
//   columns 0, 2 of C -> device 0, columns 1, 3 -> device 1 (cyclic by column);
//   chunk (x=0, y=0, z=0): device 0 loads A(0:2, 0:2) host->device, device 1 copies them from
//   device 0 (device->device); each loads its own B(0:2, j) host->device; barrier;
//   chunk (0, 0, 1): the same for k tiles 2:4, then both write their C tiles back; ...

#include <cstdint>
#include <map>
#include <utility>
#include <span>
#include <vector>

#include "cala/device.hpp"
#include "device/device.hpp"

namespace cala::device {

struct ChunkedShape {
    index_t mt, nt, kt;  ///< tiles of C (mt x nt) and slabs of the k dimension (tiles when split 1)
    int g;               ///< devices
};

/// The shape of an m x n x k product in tiles of t, k in slabs of t / split, on g devices.
ChunkedShape chunked_shape(index_t m, index_t n, index_t k, index_t t, index_t split, int g);

struct ChunkedPlan {
    index_t tile, b, c, d;
    int lookahead;
    char regime;  ///< equation (1): 'a' A and B stay resident, 'b' B stays per block column, 'c' all cycle
    /// C streamed under the products (regime 'a' only): the next block's C tiles come in, and the
    /// finished block's go back, ceil(b·c / Z) per chunk (the first block's come in with its
    /// products), instead of all at once at the block's first and after its last chunk. Costs
    /// two C blocks more than the plain order, moves the same tiles.
    bool stream_c = false;
    /// A and B stream in slabs of tile / split in k (A t x t/split, B t/split x t); d counts
    /// slabs. Memory is counted in slabs: a C tile takes split of them.
    index_t split = 1;
};

/// Slabs (tiles when split 1) each device holds at most under plan (the engine's peak, exactly,
/// for full tiles): a C tile counts p.split.
std::int64_t tiles_needed(const ChunkedShape& s, const ChunkedPlan& p);
/// tiles_needed in bytes, for elements of elem_size bytes.
std::int64_t needed_bytes(const ChunkedShape& s, const ChunkedPlan& p, std::size_t elem_size);

/// Chooses b, c, d, l and the regime for mem_tiles slabs of tile / split per device (tiles when
/// split 1); forced values of opts win. Throws cala::Error when even b = c = d = 1 does not fit.
ChunkedPlan plan_chunked(const ChunkedShape& s, index_t tile, std::int64_t mem_tiles, const DeviceGemmOptions& opts,
                         index_t split = 1);

/// Half-depth slabs (split 2): every b x c block (and lookahead l <= 2) that fits in mem_slabs,
/// the one the transfer model says moves the fewest bytes (ties: the larger l, then d). opts'
/// forced b, c, d (in tiles), l and regime hold. Throws cala::Error when none fits.
ChunkedPlan plan_half_depth(const ChunkedShape& s, index_t tile, std::int64_t mem_slabs, const DeviceGemmOptions& opts);

/// Bytes a plan moves over the links of all devices together (the model's copies weighted by
/// their sizes, full tiles), for elements of elem_size bytes.
std::int64_t model_bytes(const ChunkedShape& s, const ChunkedPlan& p, bool beta_nonzero, std::size_t elem_size);

/// Copies per device (tiles, or slabs when p.split > 1), from the seed's equation (1) (cases
/// a, b, c), exact for sizes the tile or G does not divide. beta_nonzero: C is read (h2d) as well as written back.
/// c_out: C is written back (false for the updates of an accumulation but its last).
std::vector<DeviceTraffic> model_traffic(const ChunkedShape& s, const ChunkedPlan& p, bool beta_nonzero,
                                         bool c_out = true);

/// The shape and plan device_gemm uses for an m x n x k product of elements of elem_size bytes
/// on the devices of opts (their budgets: max_device_bytes or each device's own).
struct LocalPlan {
    ChunkedShape shape;
    ChunkedPlan plan;
};
LocalPlan plan_local(index_t m, index_t n, index_t k, std::size_t elem_size, const DeviceGemmOptions& opts,
                     std::span<Device* const> devs);

/// C's tiles kept on the devices across chunked calls (accumulate.hpp): per device, tile (i, j)
/// of C -> its device memory (tiles of the calls' tile size, leading dimension the tile).
struct ResidentC {
    index_t tile = 0;
    std::vector<std::map<std::pair<index_t, index_t>, void*>> tiles;  ///< one map per device
};

/// Runs the plan; traffic (one entry per device) counts the tiles actually moved. With rc, C's
/// tiles are taken from rc (and put there at their first use, read from the host unless beta ==
/// 0) and stay there: the call neither writes C back nor frees its tiles.
template <class T>
void chunked_gemm(std::span<Device* const> devs, const ChunkedPlan& plan, Op op_a, Op op_b, index_t m, index_t n,
                  index_t k, T alpha, const T* a, index_t lda, const T* b, index_t ldb, T beta, T* c, index_t ldc,
                  std::vector<DeviceTraffic>& traffic, ResidentC* rc = nullptr);

/// device_gemm on one kind of device (the list names no cpu unit and not host with CUDA
/// devices): the chunked engine over the devices of opts, its traffic added to the totals.
template <class T>
void device_gemm_chunked(Op op_a, Op op_b, index_t m, index_t n, index_t k, T alpha, const T* a, index_t lda,
                         const T* b, index_t ldb, T beta, T* c, index_t ldc, const DeviceGemmOptions& opts);

/// Adds a call's per-device tiles moved to device_traffic_total().
void add_device_traffic(const DeviceGemmReport& rep) noexcept;

}  // namespace cala::device

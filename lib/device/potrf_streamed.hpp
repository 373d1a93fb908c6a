#pragma once
// The streamed Cholesky (issue 29): a host-resident n x n matrix factored on one device, the
// triangle held on the device for the whole call, left-looking by column blocks.
//
// cala::potrf (1 x 1 grid, one device) -> potrf_streamed -> Device::{herk, gemm, potrf, trsm}
//   (HostDevice: kernels::; CudaDevice: cuBLAS, cuSOLVER) and Device copies
//
// Lower, column blocks of nb (block j holds rows j0..n-1 of columns j0..j0+w-1, its own device
// allocation), time flowing right on a device with streams:
//   in:      [block 0][block 1][block 2][block 3] ...      block j+3 issued after step j's kernels
//   compute:          [potrf 0, trsm 0][update 1 by 0, potrf 1, trsm 1][update 2 by 0, 1, ...]
//   out:                               [block 0]                  [block 1] ...
// Step j waits only for the arrival of block j (the earlier blocks are finished on the compute
// stream); a block's copy out runs while the later steps read it. Upper is the same on row
// blocks (A = Uᴴ·U). Each element of the triangle (and the other strict triangle of the diagonal
// blocks, copied back unchanged) moves once in and once out.

#include <cstddef>
#include <cstdint>

#include "device/device.hpp"

namespace cala::device {

/// What a streamed Cholesky moves and holds (elements of the matrix's type).
struct StreamedPotrfReport {
    index_t nb = 0;                   ///< block width used
    index_t blocks = 0;               ///< column (lower) or row (upper) blocks
    std::int64_t h2d_elems = 0;       ///< elements copied host -> device
    std::int64_t d2h_elems = 0;       ///< elements copied device -> host
    std::int64_t device_bytes = 0;    ///< device memory the blocks hold (all of them, all the call)
    std::int64_t device_calls = 0;    ///< kernels issued on the device (herk, gemm, potrf, trsm)
    bool operator==(const StreamedPotrfReport&) const = default;
};

/// The model of potrf_streamed for order n, block width nb (> 0) and elements of elem bytes: with
/// w_j = min(nb, n - j·nb) and r_j = n - j·nb, block j moves r_j·w_j elements each way and holds
/// r_j·w_j·elem bytes; step j issues 2j update kernels (j when r_j == w_j), potrf, and a trsm
/// when r_j > w_j.
StreamedPotrfReport streamed_potrf_model(index_t n, index_t nb, std::size_t elem);

/// The block width potrf_streamed uses on dev when given 0: CALA_STREAMED_NB when set (> 0),
/// else the device's preferred tile, at most 1024 (CudaDevice: 1024; HostDevice: 256).
index_t streamed_potrf_block(const Device& dev);

/// A := L·Lᴴ (lower) or Uᴴ·U (upper) of the host-resident n x n column-major matrix a (leading
/// dimension lda) on dev; the factor overwrites that triangle (the other strict triangle is
/// written back unchanged where it lies in a diagonal block). Returns LAPACK's info: 0, or the
/// 1-based global index of the first minor that is not positive definite (the matrix then holds
/// no defined result). Local: no communication. nb 0: streamed_potrf_block(dev).
/// @pre n >= 0, lda >= max(1, n), nb >= 0 (cala::Error); the triangle's blocks
///      (streamed_potrf_model(n, nb).device_bytes) fit what dev has free of its budget, else
///      cala::Error before anything is copied or written.
template <class T>
index_t potrf_streamed(Device& dev, bool lower, index_t n, T* a, index_t lda, index_t nb = 0,
                       StreamedPotrfReport* report = nullptr);

}  // namespace cala::device

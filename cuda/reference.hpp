#pragma once
// The GPU references cala-bench measures cala against, behind host-callable functions: no CUDA
// type appears here, so bench/ (a host program) includes it when built with CUDA.

#include <cstdint>
#include <string>

#include "cala/types.hpp"

namespace cala::cuda {

/// The device's name and memory ("NVIDIA H100 80GB HBM3", bytes).
std::string device_name(int ordinal);
std::int64_t device_memory_bytes(int ordinal);

/// Seconds of the timed runs (after one untimed warm-up run).
struct RefTime {
    double best_s = 0, median_s = 0;
};

/// In-core cuBLAS (T = float or double): A (m x k), B (k x n) and C (m x n, column-major, no
/// padding) are copied to the device once, then C := A·B (cublas?gemm, beta = 0) runs `runs`
/// times, timed with events; the last result is copied back to c (not timed). Throws
/// cala::Error when they do not fit.
template <class T>
RefTime incore_gemm(int ordinal, index_t m, index_t n, index_t k, const T* a, const T* b, T* c, int runs);

/// cublasXt?gemm on host memory (pass pinned memory for the comparison of issue 8), one device,
/// block dimension tile: C := A·B, timed on the host clock including its transfers.
template <class T>
RefTime cublasxt_gemm(int ordinal, index_t m, index_t n, index_t k, index_t tile, const T* a, const T* b, T* c,
                      int runs);

/// The host link in GB/s (1e9 bytes), pinned host memory, copies of rows x cols bytes: host->device
/// alone, device->host alone, and both at once on two streams (each direction's own rate), all
/// contiguous; then each direction alone as the engine copies a tile, 2D out of a host matrix
/// whose columns are ld_bytes apart (cudaMemcpy2DAsync). Best of `reps` after one warm-up.
struct LinkRate {
    double h2d = 0, d2h = 0, both_h2d = 0, both_d2h = 0, h2d_2d = 0, d2h_2d = 0;
};
LinkRate link_rate(int ordinal, std::size_t row_bytes, std::size_t cols, std::size_t ld_bytes, int reps);

/// GB/s of host->device copies of every tile of an m x n host matrix (tile x tile elements of
/// elem bytes, columns ld elements apart), in the engine's order, into a ring of four device
/// tiles on one stream: the address pattern of a chunked run. With busy, cublasDgemm of tile x
/// tile runs on a second stream all the while, as the engine's compute does.
double tile_sweep_gbs(int ordinal, const void* host, index_t m, index_t n, index_t ld, index_t tile, std::size_t elem,
                      bool busy);

/// GFLOP/s of cuBLAS on what the chunked engine runs: `count` products of t x t x t tiles of
/// random numbers in [-1, 1) (beta = 1, each into its own C tile) back to back on one stream,
/// best of `reps` batches.
template <class T>
double tile_gemm_gflops(int ordinal, index_t t, int count, int reps);

}  // namespace cala::cuda

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

/// In-core cuBLAS: A (m x k), B (k x n) and C (m x n, column-major, no padding) are copied to
/// the device once, then C := A·B (cublasDgemm, beta = 0) runs `runs` times, timed with events;
/// the last result is copied back to c (not timed). Throws cala::Error when they do not fit.
RefTime incore_dgemm(int ordinal, index_t m, index_t n, index_t k, const double* a, const double* b, double* c,
                     int runs);

/// cublasXtDgemm on host memory (pass pinned memory for the comparison of issue 8), one device,
/// block dimension tile: C := A·B, timed on the host clock including its transfers.
RefTime cublasxt_dgemm(int ordinal, index_t m, index_t n, index_t k, index_t tile, const double* a,
                       const double* b, double* c, int runs);

}  // namespace cala::cuda

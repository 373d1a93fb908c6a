#pragma once
// Process-level setup: BLAS kernel selection and thread counts.

#include <string>

namespace cala {

/// Name of the BLIS kernel set in use (e.g. "zen3"). Debian's BLIS 0.9 does not recognize
/// AMD family 0x1A (Zen 5) and falls back to slow generic kernels; unless the user has set
/// BLIS_ARCH_TYPE (or CALA_BLIS_ARCH), cala selects the AVX2/AVX-512 kernels such CPUs run.
std::string blas_kernel_name();

/// Threads a rank's local kernels use (OpenMP's max threads for the calling thread).
int local_threads();

}  // namespace cala

#pragma once
// Process-level setup: BLAS kernel selection and thread counts.

#include <string>

namespace cala {

/// MPI for a cala program: MPI_Init_thread asking for MPI_THREAD_FUNNELED (cala's OpenMP
/// threads never call MPI), unless MPI is already initialized; MPI_Finalize at the end if this
/// object initialized it. Prints one line on rank 0's stderr if the level provided is lower.
class Environment {
public:
    Environment(int& argc, char**& argv);
    ~Environment();
    Environment(const Environment&) = delete;
    Environment& operator=(const Environment&) = delete;
    int thread_level() const noexcept { return provided_; }  ///< MPI_THREAD_* provided

private:
    bool owns_ = false;
    int provided_ = 0;
};

/// Name of the BLIS kernel set in use (e.g. "skx"). Debian's BLIS 0.9 does not recognize
/// AMD family 0x1A (Zen 5) and falls back to its generic kernels, twenty times slower; unless
/// the user has set BLIS_ARCH_TYPE (or CALA_BLIS_ARCH, a BLIS arch_t number), cala selects the
/// AVX-512 (skx) kernels on such CPUs when the library loads. The choice is process-wide: a
/// ScaLAPACK linked into the same program uses the same kernels.
std::string blas_kernel_name();

/// Threads a rank's local kernels use (OpenMP's max threads for the calling thread).
int local_threads();

}  // namespace cala

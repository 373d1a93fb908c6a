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

/// Name of the BLIS kernel set in use (e.g. "skx"). cala chooses it when the library loads,
/// before BLIS's first call, from CALA_BLAS_ARCH: `auto` (default: from the CPUID bits and the
/// measured number of 512-bit FMA units; Debian's BLIS 0.9 runs haswell on AVX-512 Xeons under
/// KVM and knows no Zen 4 or 5), `keep` (BLIS's own choice, or BLIS_ARCH_TYPE), or a kernel set
/// name. The choice is process-wide: a ScaLAPACK in the same program uses the same kernels.
/// @throws cala::Error if CALA_BLAS_ARCH was refused (not a kernel set of this BLIS, or one the CPU
///         cannot run); BLIS's own choice then runs.
std::string blas_kernel_name();

/// The library that runs cala's host kernels and its kernel set: "blis <set>" or "openblas <core>".
/// Chosen at load from CALA_BLAS: `auto` (default: OpenBLAS, loaded apart with dlopen, unless a
/// measured one-core DGEMM on BLIS's chosen set is faster than OpenBLAS's by more than 3%; BLIS when
/// CALA_BLAS_ARCH names a set or `keep`), `blis`, or `openblas` ($CALA_OPENBLAS, else
/// libopenblas.so.0). A ScaLAPACK in the same program calls its own BLAS (libblas.so.3).
/// @throws cala::Error if CALA_BLAS was refused or OpenBLAS did not load (BLIS then runs).
std::string blas_library_name();

/// Threads a rank's local kernels use (OpenMP's max threads for the calling thread).
int local_threads();

}  // namespace cala

#pragma once
// OpenBLAS as a second BLAS for cala's host kernels, loaded apart (dlopen, RTLD_LOCAL: its symbols
// never interpose on the program's BLAS) and chosen at load by a measured DGEMM (arch.hpp,
// CALA_BLAS). Nothing here is linked: a machine without OpenBLAS builds and runs on BLIS alone.
//
//   kernels::gemm / trsm / herk / trmm -> openblas_for(threads)? -> cblas_* of this library
//                                                               : BLIS (bli_?*_ex with a runtime)
//
// Threads: BLIS takes a thread count per call; OpenBLAS does not. So OpenBLAS serves a call
//   on 1 thread (its OpenMP build runs single-threaded inside a parallel region; outside one,
//   and in its serial build, the count is 1 when asked), or on t threads outside any parallel
//   region in its OpenMP build (omp_set_num_threads(t) around the call, OpenBLAS follows it).
//   Its pthreads build serves 1-thread calls only while its own count is 1; BLIS runs the rest.

#include <complex>
#include <cstdint>
#include <string>

namespace cala::kernels {

/// The entry points of a loaded OpenBLAS (CBLAS, column-major; 32-bit integers).
struct OpenBlas {
    std::string path;    ///< as loaded (dlopen name or path)
    std::string config;  ///< openblas_get_config()
    std::string core;    ///< openblas_get_corename(): the kernel set OpenBLAS runs
    /// Where its own CPU detection fell back to kernels without AVX2 on a CPU with AVX2
    /// (openblas_core_advice, arch.hpp) and cala ran its core selection again with
    /// OPENBLAS_CORETYPE (for the whole process), or CALA_OPENBLAS_CORETYPE named a core: the core
    /// it had picked. Empty otherwise.
    std::string own_core;
    /// Where it runs such kernels still (OPENBLAS_CORETYPE set by the user, CALA_OPENBLAS_CORETYPE
    /// = keep, a build with one core): the OPENBLAS_CORETYPE that would fix it. Else empty.
    std::string advice;
    int parallel = 0;    ///< openblas_get_parallel(): 0 serial, 1 pthreads, 2 OpenMP
    /// Where it ran AVX2 kernels on a CPU with AVX-512 and cala measured a core with AVX-512
    /// against them (openblas_core_candidate, arch.hpp): the two rates ("Zen 53.1, SkylakeX 93.0
    /// GF/s a core"). own_core is then set where the candidate won and now runs. Else empty.
    std::string core_rates;

    using cf = std::complex<float>;
    using cd = std::complex<double>;
    void (*sgemm)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
    void (*dgemm)(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*, int);
    void (*cgemm)(int, int, int, int, int, int, const void*, const void*, int, const void*, int, const void*, void*, int);
    void (*zgemm)(int, int, int, int, int, int, const void*, const void*, int, const void*, int, const void*, void*, int);
    void (*strsm)(int, int, int, int, int, int, int, float, const float*, int, float*, int);
    void (*dtrsm)(int, int, int, int, int, int, int, double, const double*, int, double*, int);
    void (*ctrsm)(int, int, int, int, int, int, int, const void*, const void*, int, void*, int);
    void (*ztrsm)(int, int, int, int, int, int, int, const void*, const void*, int, void*, int);
    void (*strmm)(int, int, int, int, int, int, int, float, const float*, int, float*, int);
    void (*dtrmm)(int, int, int, int, int, int, int, double, const double*, int, double*, int);
    void (*ctrmm)(int, int, int, int, int, int, int, const void*, const void*, int, void*, int);
    void (*ztrmm)(int, int, int, int, int, int, int, const void*, const void*, int, void*, int);
    void (*ssyrk)(int, int, int, int, int, float, const float*, int, float, float*, int);
    void (*dsyrk)(int, int, int, int, int, double, const double*, int, double, double*, int);
    void (*cherk)(int, int, int, int, int, float, const void*, int, float, void*, int);
    void (*zherk)(int, int, int, int, int, double, const void*, int, double, void*, int);
    int (*get_num_threads)();
};

/// CBLAS's enumerations (cblas.h), which OpenBLAS takes as ints.
namespace cblas {
inline constexpr int col_major = 102, no_trans = 111, trans = 112, conj_trans = 113, upper = 121, lower = 122,
                     non_unit = 131, unit = 132, left = 141, right = 142;
}

/// Where OpenBLAS is looked for: $CALA_OPENBLAS, else "libopenblas.so.0" (the loader's search path;
/// Debian's libopenblas0-openmp, -pthread or -serial).
std::string openblas_path();

/// Loads OpenBLAS from `path` once per path (RTLD_NOW | RTLD_LOCAL; a library the program already
/// has is shared, not loaded twice). nullptr when it cannot be loaded or lacks an entry point;
/// `why` then says which. Kernels without AVX2 on a CPU with AVX2 (its CPU detection does not know
/// the CPU; Debian's OpenBLAS 0.3.21 on recent Xeons): unless OPENBLAS_CORETYPE is set or
/// CALA_OPENBLAS_CORETYPE=keep, its core selection runs again with OPENBLAS_CORETYPE =
/// openblas_core_advice(...) (CALA_OPENBLAS_CORETYPE=<core>: that one), for the whole process:
/// the program's own BLAS and LAPACK calls too (OpenBlas::own_core says so); else
/// OpenBlas::advice names the fix.
const OpenBlas* load_openblas(const std::string& path, std::string* why = nullptr);

/// The OpenBLAS at `path` where the program already holds it (its BLAS or LAPACK is OpenBLAS), else
/// nullptr; loads nothing new.
const OpenBlas* held_openblas(const std::string& path);

/// Runs the OpenBLAS at `path` (loaded by load_openblas) on `core` from now on, for the whole
/// process: its core selection again with OPENBLAS_CORETYPE = core, what a process started with
/// it set would run. Records `rates` in OpenBlas::core_rates, and the core it had in own_core
/// where it changed. Returns whether it now runs `core` (false: not loaded, not a DYNAMIC_ARCH
/// build, or a name it does not know; it then runs what it ran). Not while BLAS calls run.
bool switch_openblas_core(const std::string& path, const std::string& core, const std::string& rates);

/// Notes the rates that kept the OpenBLAS at `path` on its own core (OpenBlas::core_rates).
void note_openblas_core_rates(const std::string& path, const std::string& rates);

/// The OpenBLAS cala's kernels run on, or nullptr (BLIS). Set at load (CALA_BLAS, arch.hpp).
const OpenBlas* active_openblas() noexcept;

/// Makes `lib` (nullptr: BLIS) the BLAS of cala's kernels for the whole process; returns the
/// previous one. For tests and benchmarks that compare the two; not while kernels run.
const OpenBlas* set_active_openblas(const OpenBlas* lib) noexcept;

/// Calls cala's kernels have made to OpenBLAS in this process (tests: which library served).
std::uint64_t openblas_calls() noexcept;
void count_openblas_call() noexcept;

}  // namespace cala::kernels

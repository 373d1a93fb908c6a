#pragma once
// Which BLIS kernel set (BLIS's "sub-configuration": skx, haswell, zen3, ...) the process runs,
// chosen from the CPUID bits and a measured FMA throughput, not from the brand string.
//
//   load time (lib/kernels/arch_load.cpp, an ELF constructor of libcala, so before BLIS reads
//   BLIS_ARCH_TYPE at its first call, in a program linked to cala or under the preloaded shim):
//     CALA_BLAS_ARCH  = auto (default) | keep | <kernel set>
//     auto: CPUID -> AVX-512 (F, DQ, CD, BW, VL) usable? -> a DGEMM probe of skx and of the
//           AVX2 set (one core, child processes, cached per CPU): the faster by more than 3%;
//           a tie or a failed probe: the FMA rates per core (256-bit and 512-bit register-only
//           loops, cached) decide -> two 512-bit FMA units? skx : the AVX2 set
//           : AVX2+FMA? AMD: zen / zen2 / zen3 by family; others: haswell : BLIS's own choice
//     keep: BLIS's own choice (its CPUID detection, or BLIS_ARCH_TYPE)
//     a name: that set (an error if this BLIS lacks it or the CPU cannot run it)
//   -> BLIS_ARCH_TYPE=<arch_t number> (BLIS 0.9 reads a number; a name reads as 0, skx).
//
// Why: Debian's BLIS 0.9 runs haswell on AVX-512 Xeons under KVM (it guesses the FMA units from
// the brand string; skx is 1.7x faster there) and knows no Zen 4 or Zen 5. The FMA units alone
// do not decide: Zen 4 runs 512-bit FMAs in two halves (no more flops than 256-bit ones), yet
// skx's DGEMM is 1.2-1.4x zen3's there (32 vector registers, a larger micro-tile).

#include <array>
#include <functional>
#include <string>
#include <vector>

namespace cala::kernels {

/// What CPUID (and XGETBV: the OS saves the registers) says about the CPU.
struct CpuInfo {
    enum class Vendor { Intel, Amd, Other };
    Vendor vendor = Vendor::Other;
    unsigned family = 0, model = 0;  ///< display family and model (base + extended)
    bool ssse3 = false, avx = false, fma3 = false, fma4 = false, avx2 = false;
    bool avx512f = false, avx512dq = false, avx512cd = false, avx512bw = false, avx512vl = false;
    bool avx512er = false;  ///< Xeon Phi (BLIS's knl)
    std::string brand;      ///< the brand string (printed, never used to decide)

    /// AVX2 and FMA3 with the YMM state saved by the OS.
    bool has_avx2_fma() const { return avx && avx2 && fma3; }
    /// AVX-512 F, DQ, CD, BW and VL with the ZMM state saved by the OS: what BLIS's skx kernels use.
    bool has_avx512_skx() const { return avx512f && avx512dq && avx512cd && avx512bw && avx512vl; }
};

/// The CPU this process runs on.
CpuInfo read_cpu_info();

/// Register-only FMA throughput of one core, GFLOP/s (0: that width is not available).
struct FmaRates {
    double gflops_256 = 0;
    double gflops_512 = 0;
};

/// GFLOP/s of a register-only FMA loop of `bits` (256: AVX2+FMA3, 512: AVX-512F) on the calling
/// thread for about `seconds`. The caller checks that the CPU has the instructions.
double fma_loop_gflops(int bits, double seconds);

/// FMA rates of one core, alternating the two widths (best of `rounds`); 512 only where usable.
FmaRates measure_fma_rates(const CpuInfo& cpu, double seconds_per_round = 0.004, int rounds = 3);

/// 512-bit FMA units per core, from the rates: 2 when 512-bit FMAs run at least 1.4x the flops of
/// 256-bit ones (two 512-bit units), else 1 (one unit, or 256-bit halves: Zen 4).
int fma_units_512(const FmaRates& r);

/// The products the DGEMM probe times, the shapes of cala's updates: a 256-deep panel into a
/// wide block (m x n x k), then a tall panel's update (panel_m x k x k; 0: none). The second is
/// where the sets differ most (Zen 4: skx 47, zen3 39 GF/s a core; BLIS's AVX2 sets take their
/// small-matrix path there).
struct ProbeShape {
    long m = 2048;        ///< rows of the first product
    long n = 2048;        ///< its columns (n >= k)
    long k = 256;         ///< the depth of both
    long panel_m = 8192;  ///< rows of the panel's update (k columns)
    int runs = 3;         ///< timed runs after a warm-up; the median counts
};

/// One core's DGEMM GFLOP/s with BLIS's kernel set `set`, measured in a child process (fork), so
/// that the caller's BLIS is not started. 0 when the probe failed (no such set, one the CPU cannot
/// run, a bad shape, fork refused, the child failed or took over 10 s); -1 when it did not try
/// (the caller has more than one thread: no fork). Call it before MPI_Init and before threads.
double probe_gemm_gflops(const std::string& set, const ProbeShape& shape = {});

/// The same for the OpenBLAS at `path` (openblas.hpp): one core's DGEMM GFLOP/s on the same
/// products, in a child process that loads it (OPENBLAS_NUM_THREADS=1); 0 when it does not load.
double probe_openblas_gflops(const std::string& path, const ProbeShape& shape = {});

/// BLIS on kernel set `set` and the OpenBLAS at `path` measured together: one child process runs
/// the products on each in turn (a warm-up of each, then the timed runs alternating), so that a
/// noisy machine slows both alike. {BLIS's GF/s, OpenBLAS's}: 0 where one failed (the set cannot
/// run, OpenBLAS does not load), -1 for both where it did not try (several threads).
std::array<double, 2> probe_libraries_gflops(const std::string& set, const std::string& path,
                                             const ProbeShape& shape = {});

/// The OpenBLAS at `path` on each of its cores `cores` (OPENBLAS_CORETYPE names) in turn, in one
/// child process that runs the library's core selection again for each (as the process would at
/// its start with OPENBLAS_CORETYPE set): one core's DGEMM GF/s on the probe's products, 0 for a
/// core it does not switch to (not a DYNAMIC_ARCH build, a name it does not know) or where it does
/// not load; -1 for both where this process has several threads (no fork).
std::array<double, 2> probe_openblas_cores_gflops(const std::string& path, const std::array<std::string, 2>& cores,
                                                  const ProbeShape& shape = {});

/// Whether this process runs one thread (/proc/self/task): where it may fork a probe, or switch
/// a loaded OpenBLAS's core (no other thread can be in a BLAS call).
bool single_threaded();

/// Whether this BLIS has kernel set `name` and `cpu` has its instructions.
bool kernel_set_runs_on(const std::string& name, const CpuInfo& cpu);

/// A measured DGEMM rate of one kernel set (GFLOP/s of one core; 0: not measured).
struct SetRate {
    std::string set;
    double gflops = 0;
};

/// A cala choice of kernel set. `name` empty: BLIS's own choice stands.
struct KernelChoice {
    std::string name;
    std::string setting;  ///< CALA_BLAS_ARCH as read: auto, keep or a name
    std::string reason;   ///< one line, for CALA_VERBOSE and cala-bench
    FmaRates rates;       ///< when measured (auto on an AVX-512 CPU)
    std::vector<SetRate> gemm;  ///< the DGEMM probe's rates, when it ran (auto on an AVX-512 CPU)
};

/// The DGEMM rate of a kernel set (the probe, or its cached result); 0 when not measured.
using GemmRateFn = std::function<double(const std::string& set)>;

/// The choice for `setting` (CALA_BLAS_ARCH; empty = auto) on `cpu`. `rates` and `gemm_rate`
/// are called only when the choice depends on them (auto on a CPU with the skx instructions:
/// the probe's rates of skx and of the AVX2 set decide where they differ by more than 3%, the
/// FMA units otherwise; no `gemm_rate`: the FMA units alone).
/// @throws cala::Error for a name that is not a kernel set of this BLIS, or one `cpu` cannot run.
KernelChoice choose_kernel_set(const std::string& setting, const CpuInfo& cpu,
                               const std::function<FmaRates()>& rates, const GemmRateFn& gemm_rate = {});

/// Which library runs cala's host kernels: BLIS (the kernel set above) or OpenBLAS (openblas.hpp).
///   CALA_BLAS = auto (default) | blis | openblas
///     auto: OpenBLAS unless BLIS's DGEMM probe on the chosen kernel set is faster than OpenBLAS's
///           by more than 3% (probe_libraries_gflops: the two measured together; cached per CPU;
///           a tie is OpenBLAS's); BLIS when CALA_BLAS_ARCH names a set or keeps BLIS's
///           own, when no set was chosen, or when a probe failed or OpenBLAS is not there
///     blis, openblas: that library (openblas: an error if it does not load; BLIS then runs)
struct LibraryChoice {
    bool openblas = false;
    std::string setting;  ///< CALA_BLAS as read
    std::string reason;   ///< one line, for CALA_VERBOSE and cala-bench
    double blis_gflops = 0, openblas_gflops = 0;  ///< the probe's rates (one core), when it ran
};

/// The choice for `setting` (CALA_BLAS; empty = auto) after the kernel choice `kernels`;
/// `openblas_rate` and `blis_rate` are called only where auto needs them.
/// @throws cala::Error for a setting other than auto, blis or openblas.
LibraryChoice choose_blas_library(const std::string& setting, const KernelChoice& kernels,
                                  const std::function<double()>& openblas_rate, const GemmRateFn& blis_rate);

/// The OPENBLAS_CORETYPE an OpenBLAS that picked kernel set `core` (openblas_get_corename) should
/// run on `cpu`, where its own CPU detection fell back to kernels without AVX2 on a CPU that has
/// AVX2 and FMA (Debian's OpenBLAS 0.3.21 runs "Prescott", SSE3, on Xeons newer than it knows:
/// 0.18 of the machine's DGEMM rate): "SkylakeX" with the AVX-512 instructions of skx, else
/// "Zen" (AMD) or "Haswell". Empty when `core` uses AVX2 already, is not a core OpenBLAS names,
/// or the CPU has no AVX2 and FMA. Case-insensitive.
std::string openblas_core_advice(const std::string& core, const CpuInfo& cpu);

/// Where an OpenBLAS runs AVX2 kernels ("Haswell", "Zen"; case-insensitive) on a CPU with skx's
/// AVX-512 instructions: "SkylakeX", the core worth measuring against them (Debian's OpenBLAS
/// 0.3.21 knows no Zen 4 or Zen 5 and runs Zen there: 53 GF/s a core on a Zen 5 where BLIS's skx
/// reached 93). Empty otherwise (a core with AVX-512 already, one without AVX2: the advice above,
/// a CPU without skx's instructions).
std::string openblas_core_candidate(const std::string& core, const CpuInfo& cpu);

/// Whether a candidate core's measured DGEMM rate (one core, GF/s) beats the own core's by more
/// than 3% (a failed measurement, 0, never wins and is never beaten).
bool openblas_candidate_wins(double own_gflops, double candidate_gflops);

/// The cache keys of the two rates that decide an OpenBLAS's core (openblas_core_candidate): the
/// own core and the candidate, measured beside each other for the OpenBLAS at `path`.
std::array<std::string, 2> openblas_core_keys(const std::string& path, const std::string& own,
                                              const std::string& candidate);

/// The kernel sets of this BLIS build that run on x86-64 (names as BLIS prints them).
std::vector<std::string> kernel_set_names();

/// BLIS's arch_t number of a kernel set name; -1 if this BLIS has no such set.
int kernel_set_id(const std::string& name);

/// The choice made when the library loaded (lib/kernels/arch_load.cpp). `error` is non-empty
/// when CALA_BLAS_ARCH was refused (BLIS's own choice then stands).
struct LoadChoice {
    KernelChoice choice;
    LibraryChoice library;
    std::string library_error;  ///< non-empty when CALA_BLAS was refused or OpenBLAS did not load
    std::string error;
    std::string blis_arch_type;  ///< BLIS_ARCH_TYPE as the library set it (or found it)
};
const LoadChoice& load_choice();

/// Runs once, from libcala's constructor (lib/core/runtime.cpp), before any BLIS call: reads
/// CALA_BLAS_ARCH, chooses and sets BLIS_ARCH_TYPE, then CALA_BLAS (and loads OpenBLAS when it is
/// chosen); under CALA_VERBOSE, one line each on stderr from
/// the process of MPI rank 0 (PMI_RANK) or a process outside MPI.
void select_kernels_at_load();

/// This machine's cache of measured numbers (key=value lines), keyed on the CPU (vendor, brand,
/// signature, features, BLIS version): $CALA_CACHE_DIR, else $XDG_CACHE_HOME/cala, else
/// ~/.cache/cala, file machine-<key>.txt. Empty path: no home to write to.
std::string machine_cache_path();
/// The value of `key` in the cache ("" if none).
std::string machine_cache_get(const std::string& key);
/// Whether the cache can be written (its folder exists or was made, and is writable).
bool machine_cache_writable();
/// The cache's keys of the library probe's two rates: BLIS on `set` measured beside the OpenBLAS at
/// `path`, and that OpenBLAS (keyed on its path and, where the process holds it, the core it runs).
std::array<std::string, 2> library_probe_keys(const std::string& set, const std::string& path);
/// Sets keys in the cache (written to a temporary file, then renamed: ranks may race).
void machine_cache_put(const std::vector<std::pair<std::string, std::string>>& values);

}  // namespace cala::kernels

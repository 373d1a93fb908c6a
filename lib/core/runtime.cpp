// BLIS kernel selection at load time, and thread counts.

#include "cala/runtime.hpp"

#include <blis.h>
#include <cpuid.h>
#include <mpi.h>
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/threads.hpp"

namespace cala {

namespace {

// AMD family from CPUID leaf 1 (base family + extended family).
unsigned amd_family() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid(0, &a, &b, &c, &d) == 0) return 0;
    const bool amd = b == 0x68747541u;  // "Auth"enticAMD
    if (!amd || __get_cpuid(1, &a, &b, &c, &d) == 0) return 0;
    const unsigned base = (a >> 8) & 0xf, ext = (a >> 20) & 0xff;
    return base == 0xf ? base + ext : base;
}

// Runs before main, so before BLIS reads its environment on first use. BLIS 0.9 reads
// BLIS_ARCH_TYPE as a number (an arch_t id); a name is silently read as 0.
[[gnu::constructor]] void select_blis_kernels() {
    if (std::getenv("BLIS_ARCH_TYPE") != nullptr) return;
    if (const char* forced = std::getenv("CALA_BLIS_ARCH")) {
        setenv("BLIS_ARCH_TYPE", forced, 1);
        return;
    }
    // BLIS 0.9 knows AMD families up to 0x19 (Zen 3/4); newer ones get the generic kernels,
    // twenty times slower. Zen 5 (0x1A) executes 512-bit FMAs natively: the skx kernels fit.
    if (amd_family() < 0x1a) return;
    const arch_t id = __builtin_cpu_supports("avx512f") ? BLIS_ARCH_SKX : BLIS_ARCH_ZEN3;
    setenv("BLIS_ARCH_TYPE", std::to_string(static_cast<int>(id)).c_str(), 1);
}

}  // namespace

std::string blas_kernel_name() {
    bli_init();  // idempotent; the arch query needs BLIS's kernel structure
    return bli_arch_string(bli_arch_query_id());
}

int local_threads() { return omp_get_max_threads(); }

Environment::Environment(int& argc, char**& argv) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
        MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided_);
        owns_ = true;
    } else {
        MPI_Query_thread(&provided_);
    }
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (provided_ < MPI_THREAD_FUNNELED && rank == 0)
        std::fprintf(stderr, "cala: MPI provides thread level %d < MPI_THREAD_FUNNELED; run with one thread per rank\n",
                     provided_);
    detail::fit_threads(MPI_COMM_WORLD);  // threads that fit the node (core/threads.hpp)
}

Environment::~Environment() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owns_ && !finalized) MPI_Finalize();
}

}  // namespace cala

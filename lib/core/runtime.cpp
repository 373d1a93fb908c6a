// BLIS kernel selection at load time, and thread counts.

#include "cala/runtime.hpp"

#include <blis.h>
#include <cpuid.h>
#include <omp.h>

#include <cstdlib>

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

// Runs before main, so before BLIS reads its environment on first use.
[[gnu::constructor]] void select_blis_kernels() {
    if (std::getenv("BLIS_ARCH_TYPE") != nullptr) return;
    if (const char* forced = std::getenv("CALA_BLIS_ARCH")) {
        setenv("BLIS_ARCH_TYPE", forced, 1);
        return;
    }
    // BLIS 0.9 knows AMD families up to 0x19 (Zen 3/4); newer ones get generic kernels,
    // six times slower. Zen 5 (0x1A) runs the zen3 kernels at full speed.
    if (amd_family() >= 0x1a) setenv("BLIS_ARCH_TYPE", "zen3", 1);
}

}  // namespace

std::string blas_kernel_name() { return bli_arch_string(bli_arch_query_id()); }

int local_threads() { return omp_get_max_threads(); }

}  // namespace cala

// Register-only FMA loops: the core's floating-point peak, measured (256-bit AVX2+FMA3 and
// 512-bit AVX-512F), compiled for those instructions with target attributes so that the library
// still runs on any x86-64; the caller checks CPUID first.
//
// 12 independent accumulators: an FMA's latency (4-5 cycles) times two units needs 8-10 in flight.
// a := a·m + c with m < 1 converges to c / (1 - m): no overflow and no subnormal ever.

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>

#include "kernels/arch.hpp"

namespace cala::kernels {

namespace {

constexpr int acc = 12;
constexpr std::int64_t chunk = 4096;  // iterations between clock reads

// One loop per width, written out: a target attribute does not reach templates or lambdas.
#define CALA_FMA_LOOP(V, LANES, SET1, FMA, ADD)                                              \
    V a[acc];                                                                                  \
    for (int j = 0; j < acc; ++j) a[j] = SET1(1.0 + 1e-3 * j);                                 \
    const V m = SET1(0.999999), c = SET1(1e-7);                                                \
    const auto t0 = std::chrono::steady_clock::now();                                          \
    std::int64_t iters = 0;                                                                    \
    double dt = 0;                                                                             \
    do {                                                                                       \
        for (std::int64_t i = 0; i < chunk; ++i) {                                             \
            for (int j = 0; j < acc; ++j) a[j] = FMA(a[j], m, c);                              \
            __asm__ volatile("" : "+x"(a[0]), "+x"(a[1]), "+x"(a[2]), "+x"(a[3]), "+x"(a[4]),  \
                             "+x"(a[5]), "+x"(a[6]), "+x"(a[7]), "+x"(a[8]), "+x"(a[9]),       \
                             "+x"(a[10]), "+x"(a[11]));                                        \
        }                                                                                      \
        iters += chunk;                                                                        \
        dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();     \
    } while (dt < seconds);                                                                    \
    V s = a[0];                                                                                \
    for (int j = 1; j < acc; ++j) s = ADD(s, a[j]);                                            \
    alignas(64) double out[LANES];                                                             \
    std::memcpy(out, &s, sizeof out);                                                          \
    sink = out[0];                                                                             \
    return 2.0 * LANES * acc * static_cast<double>(iters) / dt * 1e-9

volatile double sink = 0;  // the loops' results go here, so that they are computed

__attribute__((target("avx2,fma"))) double loop_256(double seconds) {
    CALA_FMA_LOOP(__m256d, 4, _mm256_set1_pd, _mm256_fmadd_pd, _mm256_add_pd);
}

__attribute__((target("avx512f"))) double loop_512(double seconds) {
    CALA_FMA_LOOP(__m512d, 8, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_add_pd);
}

#undef CALA_FMA_LOOP

}  // namespace

double fma_loop_gflops(int bits, double seconds) { return bits == 512 ? loop_512(seconds) : loop_256(seconds); }

FmaRates measure_fma_rates(const CpuInfo& cpu, double seconds_per_round, int rounds) {
    FmaRates r;
    if (!cpu.has_avx2_fma()) return r;
    const bool wide = cpu.avx512f;
    for (int i = 0; i < rounds; ++i) {  // alternating: a clock that changes meanwhile weighs on both
        r.gflops_256 = std::max(r.gflops_256, loop_256(seconds_per_round));
        if (wide) r.gflops_512 = std::max(r.gflops_512, loop_512(seconds_per_round));
    }
    return r;
}

}  // namespace cala::kernels

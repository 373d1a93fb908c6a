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

// One loop per width, written out: a target attribute does not reach templates or lambdas. The
// accumulators are named variables tied to registers by the empty asm: an array would live on the
// stack, and its stores and loads would lengthen each FMA's dependency chain.
#define CALA_FMA_STEP(V, FMA)                                                                   \
    a0 = FMA(a0, m, c), a1 = FMA(a1, m, c), a2 = FMA(a2, m, c), a3 = FMA(a3, m, c);             \
    a4 = FMA(a4, m, c), a5 = FMA(a5, m, c), a6 = FMA(a6, m, c), a7 = FMA(a7, m, c);             \
    a8 = FMA(a8, m, c), a9 = FMA(a9, m, c), a10 = FMA(a10, m, c), a11 = FMA(a11, m, c);         \
    __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5), "+x"(a6), \
                     "+x"(a7), "+x"(a8), "+x"(a9), "+x"(a10), "+x"(a11))

#define CALA_FMA_LOOP(V, LANES, SET1, FMA, ADD)                                                 \
    V a0 = SET1(1.000), a1 = SET1(1.001), a2 = SET1(1.002), a3 = SET1(1.003);                     \
    V a4 = SET1(1.004), a5 = SET1(1.005), a6 = SET1(1.006), a7 = SET1(1.007);                     \
    V a8 = SET1(1.008), a9 = SET1(1.009), a10 = SET1(1.010), a11 = SET1(1.011);                   \
    const V m = SET1(0.999999), c = SET1(1e-7);                                                   \
    const auto t0 = std::chrono::steady_clock::now();                                             \
    std::int64_t iters = 0;                                                                       \
    double dt = 0;                                                                                \
    do {                                                                                          \
        for (std::int64_t i = 0; i < chunk; ++i) {                                                \
            CALA_FMA_STEP(V, FMA);                                                                \
        }                                                                                         \
        iters += chunk;                                                                           \
        dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();        \
    } while (dt < seconds);                                                                       \
    const V s = ADD(ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7))),            \
                    ADD(ADD(a8, a9), ADD(a10, a11)));                                             \
    alignas(64) double out[LANES];                                                                \
    std::memcpy(out, &s, sizeof out);                                                             \
    sink = out[0];                                                                                \
    return 2.0 * LANES * acc * static_cast<double>(iters) / dt * 1e-9

volatile double sink = 0;  // the loops' results go here, so that they are computed

__attribute__((target("avx2,fma"))) double loop_256(double seconds) {
    CALA_FMA_LOOP(__m256d, 4, _mm256_set1_pd, _mm256_fmadd_pd, _mm256_add_pd);
}

__attribute__((target("avx512f"))) double loop_512(double seconds) {
    CALA_FMA_LOOP(__m512d, 8, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_add_pd);
}

#undef CALA_FMA_LOOP
#undef CALA_FMA_STEP

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

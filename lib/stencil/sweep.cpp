// The local sweep kernel.
//
// One output row segment is computed by passes of at most kChunk taps each: the first pass
// writes o[i] = c0·p0[i] + c1·p1[i] + ..., later passes o[i] = o[i] + c·p[i] + ... . Every point
// thus sums its taps left to right in stencil order, whatever the chunking, tiling or thread
// count: results are identical to a plain sequential loop. For the presets (5, 7, 9 taps) one
// pass suffices; 27 taps take three, over a row segment that stays in L1.
//
// A box whose output exceeds the last-level cache (the next step reads it from memory anyway)
// is written with non-temporal stores when its rows take one pass: the same multiplies and adds
// in the same order, 32-byte vectors stored without first reading the line (2 memory transfers
// per point instead of 3), a scalar head up to the first aligned point and a scalar tail.

#include "stencil/sweep.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "kernels/arch.hpp"

namespace cala::detail {

namespace {

constexpr int kChunk = 9;

template <class T, int K, bool First>
[[gnu::always_inline]] inline void row_body(T* __restrict o, const T* const* p, const T* c, index_t n) {
    const T* q[K];
    T w[K];
    for (int k = 0; k < K; ++k) {
        q[k] = p[k];
        w[k] = c[k];
    }
    for (index_t i = 0; i < n; ++i) {
        T acc;
        if constexpr (First) acc = w[0] * q[0][i];
        else acc = o[i] + w[0] * q[0][i];
#pragma GCC unroll 16
        for (int k = 1; k < K; ++k) acc += w[k] * q[k][i];
        o[i] = acc;
    }
}

// The same loop for the baseline ISA and for AVX2. AVX2 without FMA: the multiplies and adds
// round exactly as the baseline's, so the bits do not depend on the machine. (32-byte vectors
// run the 5-point sweep about 1.3x faster per core than 16-byte ones on Zen 5; 64-byte ones
// are no faster, as most of their unaligned loads split cache lines.)
template <class T, int K, bool First>
void row_pass(T* o, const T* const* p, const T* c, index_t n) {
    row_body<T, K, First>(o, p, c, n);
}

#if defined(__x86_64__)
template <class T, int K, bool First>
[[gnu::target("avx2")]] void row_pass_avx2(T* o, const T* const* p, const T* c, index_t n) {
    row_body<T, K, First>(o, p, c, n);
}
constexpr bool kHaveAvx2Path = true;
// 32-byte vectors of T (GCC vector extension: element-wise IEEE multiplies and adds).
typedef double Vd __attribute__((vector_size(32)));
typedef float Vf __attribute__((vector_size(32)));
template <class T>
using Vec32 = std::conditional_t<std::is_same_v<T, double>, Vd, Vf>;

// One pass of K taps (First) with non-temporal stores of the aligned middle of the row.
template <class T, int K>
[[gnu::target("avx2")]] void row_pass_avx2_stream(T* __restrict o, const T* const* p, const T* c, index_t n) {
    constexpr int W = 32 / sizeof(T);
    using V = Vec32<T>;
    const T* q[K];
    T w[K];
    V wv[K];
    for (int k = 0; k < K; ++k) {
        q[k] = p[k];
        w[k] = c[k];
        for (int e = 0; e < W; ++e) wv[k][e] = c[k];
    }
    index_t i = 0;
    const index_t head = std::min<index_t>(n, ((32 - reinterpret_cast<std::uintptr_t>(o) % 32) % 32) / sizeof(T));
    for (; i < head; ++i) {
        T acc = w[0] * q[0][i];
        for (int k = 1; k < K; ++k) acc += w[k] * q[k][i];
        o[i] = acc;
    }
    for (; i + W <= n; i += W) {
        V x;
        std::memcpy(&x, q[0] + i, sizeof(V));
        V acc = wv[0] * x;
#pragma GCC unroll 16
        for (int k = 1; k < K; ++k) {
            std::memcpy(&x, q[k] + i, sizeof(V));
            acc += wv[k] * x;
        }
        if constexpr (sizeof(T) == 8) _mm256_stream_pd(reinterpret_cast<double*>(o + i), reinterpret_cast<__m256d&>(acc));
        else _mm256_stream_ps(reinterpret_cast<float*>(o + i), reinterpret_cast<__m256&>(acc));
    }
    for (; i < n; ++i) {
        T acc = w[0] * q[0][i];
        for (int k = 1; k < K; ++k) acc += w[k] * q[k][i];
        o[i] = acc;
    }
}
#else
template <class T, int K, bool First>
void row_pass_avx2(T* o, const T* const* p, const T* c, index_t n) {
    row_body<T, K, First>(o, p, c, n);
}
constexpr bool kHaveAvx2Path = false;
#endif

template <class T>
using RowFn = void (*)(T*, const T* const*, const T*, index_t);

template <class T, bool First, bool Avx2, int... K>
constexpr std::array<RowFn<T>, sizeof...(K)> make_table(std::integer_sequence<int, K...>) {
    if constexpr (Avx2) return {&row_pass_avx2<T, K + 1, First>...};
    else return {&row_pass<T, K + 1, First>...};
}

template <class T, int... K>
constexpr std::array<RowFn<T>, sizeof...(K)> make_stream_table(std::integer_sequence<int, K...>) {
#if defined(__x86_64__)
    return {&row_pass_avx2_stream<T, K + 1>...};
#else
    return {};
#endif
}

template <class T>
struct RowTables {
    std::array<RowFn<T>, kChunk> first, later;
    std::array<RowFn<T>, kChunk> stream{};  ///< first passes with non-temporal stores; null without AVX2
};

template <class T>
const RowTables<T>& row_tables() {
    static const RowTables<T> t = [] {
        const auto seq = std::make_integer_sequence<int, kChunk>{};
        bool avx2 = false;
#if defined(__x86_64__)
        avx2 = kHaveAvx2Path && __builtin_cpu_supports("avx2");
#endif
        if (avx2)
            return RowTables<T>{make_table<T, true, true>(seq), make_table<T, false, true>(seq),
                                make_stream_table<T>(seq)};
        return RowTables<T>{make_table<T, true, false>(seq), make_table<T, false, false>(seq)};
    }();
    return t;
}

template <class T>
void row(const RowTables<T>& tab, T* o, const T* in, const Taps<T>& t, index_t n, bool stream) {
    const std::size_t ntaps = t.off.size();
    const T* p[kChunk];
    if (stream && ntaps <= kChunk) {
        for (std::size_t k = 0; k < ntaps; ++k) p[k] = in + t.off[k];
        tab.stream[ntaps - 1](o, p, t.coef.data(), n);
        return;
    }
    for (std::size_t s = 0; s < ntaps; s += kChunk) {
        const std::size_t m = std::min<std::size_t>(kChunk, ntaps - s);
        for (std::size_t k = 0; k < m; ++k) p[k] = in + t.off[s + k];
        (s == 0 ? tab.first : tab.later)[m - 1](o, p, t.coef.data() + s, n);
    }
}

// Bytes of the last-level cache (the L3, else the L2, else 32 MiB).
std::int64_t llc_bytes() {
    static const std::int64_t v = [] {
        long c = sysconf(_SC_LEVEL3_CACHE_SIZE);
        if (c <= 0) c = sysconf(_SC_LEVEL2_CACHE_SIZE);
        return c > 0 ? static_cast<std::int64_t>(c) : std::int64_t{32} << 20;
    }();
    return v;
}

}  // namespace

template <class T>
Taps<T> make_taps(const Stencil<T>& st, const Layout& L) {
    Taps<T> t;
    t.radius = st.radius();
    for (const auto& p : st.points()) {
        t.off.push_back(p.dx + p.dy * L.stride(1) + p.dz * L.stride(2));
        t.coef.push_back(p.coef);
    }
    return t;
}

template <class T>
void sweep_box(const Layout& L, const T* in, T* out, const Box& b, const Taps<T>& taps, const Blocking& blk) {
    if (b.empty()) return;
    const index_t bx = b.extent(0), by = b.extent(1), bz = b.extent(2);
    const index_t r = std::max(taps.radius, 1);
    const index_t sz = sizeof(T);
    index_t tx = blk.bx > 0 ? blk.bx : std::max<index_t>(64, blk.row_bytes / ((2 * r + 2) * sz));
    tx = std::min(tx, bx);
    index_t ty = blk.by;
    if (ty <= 0) ty = bz > 1 ? std::max<index_t>(8, blk.plane_bytes / ((2 * r + 1) * tx * sz) - 2 * r) : by;
    ty = std::min(ty, by);

    const index_t nit = (bx + tx - 1) / tx;
    const index_t rows_per_it = by * bz;
    const index_t total = nit * rows_per_it;
    const bool parallel = b.volume() >= 16384;
    const RowTables<T>& tab = row_tables<T>();
    const std::int64_t limit = blk.stream_bytes < 0 ? llc_bytes() : blk.stream_bytes;
    const bool stream = tab.stream[0] != nullptr && b.volume() * sz > limit;
#pragma omp parallel if (parallel)
    {
        const index_t nt = omp_get_num_threads(), id = omp_get_thread_num();
        const index_t q0 = total * id / nt, q1 = total * (id + 1) / nt;
        for (index_t q = q0; q < q1; ++q) {
            const index_t it = q / rows_per_it, rq = q - it * rows_per_it;
            const index_t jt = rq / (ty * bz), rr = rq - jt * ty * bz;
            const index_t th = std::min(ty, by - jt * ty);
            const index_t k = rr / th, j = jt * ty + rr % th;
            const index_t i0 = it * tx, n = std::min(tx, bx - i0);
            const index_t at = L.index(b.lo[0] + i0, b.lo[1] + j, b.lo[2] + k);
            row(tab, out + at, in + at, taps, n, stream);
        }
#if defined(__x86_64__)
        if (stream) _mm_sfence();  // the streamed rows reach memory before anyone reads them
#endif
    }
}

WindowChoice window_candidates() {
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l2 <= 0) l2 = 512 * 1024;
    WindowChoice c;
    c.llc_bytes = std::min({std::int64_t{8} * l2, llc_bytes() / 8, std::int64_t{16} << 20});
    c.l2_bytes = std::int64_t{l2} / 2;
    return c;
}

namespace {

// Updates per second of 8 steps of the 5-point stencil on a 2048 x 2048 field of doubles (two
// buffers, 64 MiB: past both windows) with the wavefront's budget `bytes`, best of 2 after a
// warm-up, on the caller's OpenMP threads.
double window_rate(std::int64_t bytes) {
    constexpr index_t n = 2048, S = 8;
    const Layout L{{1, 1, 0}, {n + 2, n + 2, 1}};
    std::vector<double> a(static_cast<std::size_t>((n + 2) * (n + 2)), 0.25), b(a.size(), 0.0);
    const Taps<double> taps = make_taps(Stencil<double>::five_point(), L);
    std::vector<Box> boxes;
    index_t updates = 0;
    for (index_t k = 0; k < S; ++k) {
        boxes.push_back(Box{{k, k, 0}, {n - k, n - k, 1}});
        updates += boxes.back().volume();
    }
    Blocking blk;
    blk.window_bytes = bytes;
    double best = 1e300;
    for (int r = 0; r < 3; ++r) {
        const double t0 = omp_get_wtime();
        sweep_steps(L, a.data(), b.data(), boxes, taps, blk);
        if (r > 0) best = std::min(best, omp_get_wtime() - t0);
    }
    return static_cast<double>(updates) / best;
}

}  // namespace

const WindowChoice& window_choice() {
    static const WindowChoice v = [] {
        WindowChoice c = window_candidates();
        if (const char* e = std::getenv("CALA_STENCIL_WINDOW_BYTES"); e != nullptr && std::atoll(e) >= 0) {
            c.bytes = std::atoll(e);
            c.reason = std::string("CALA_STENCIL_WINDOW_BYTES=") + e;
            return c;
        }
        const std::string key = "stencil_window_rates_l2_" + std::to_string(c.l2_bytes) + "_llc_" + std::to_string(c.llc_bytes);
        const std::string cached = kernels::machine_cache_get(key);
        double l2 = 0, llc = 0;
        if (std::sscanf(cached.c_str(), "%lf,%lf", &l2, &llc) != 2 || l2 <= 0 || llc <= 0) {
            l2 = window_rate(c.l2_bytes);
            llc = window_rate(c.llc_bytes);
            char v[64];
            std::snprintf(v, sizeof v, "%.4g,%.4g", l2, llc);
            kernels::machine_cache_put({{key, v}});
        }
        c.l2_rate = l2, c.llc_rate = llc;
        c.bytes = l2 > 1.03 * llc ? c.l2_bytes : c.llc_bytes;
        char why[160];
        std::snprintf(why, sizeof why, "%s window (5-point sweeps, 8 steps: L2 window %.3g, last-level %.3g updates/s)",
                      c.bytes == c.l2_bytes ? "L2" : "last-level cache", l2, llc);
        c.reason = why;
        return c;
    }();
    return v;
}

std::int64_t window_default_bytes() { return window_choice().bytes; }

template <class T>
void sweep_steps(const Layout& L, T* a, T* b, const std::vector<Box>& boxes, const Taps<T>& taps, const Blocking& blk,
                 const std::function<void()>& progress) {
    const index_t S = static_cast<index_t>(boxes.size());
    auto plain = [&] {
        for (index_t k = 0; k < S; ++k) {
            sweep_box(L, k % 2 ? b : a, k % 2 ? a : b, boxes[k], taps, blk);
            if (progress) progress();
        }
    };
    if (S < 2 || boxes[0].empty()) return plain();
    const Box& big = boxes[0];
    const int sd = big.extent(2) > 1 ? 2 : 1;
    if (big.extent(sd) <= 1) return plain();
    const index_t r = std::max(taps.radius, 1);
    const int td = sd - 1;  // tiled in skewed tiles (x in 2D, y in 3D)
    const index_t sz = static_cast<index_t>(sizeof(T)), rest = sd == 2 ? big.extent(0) : 1;
    const std::int64_t budget = blk.window_bytes < 0 ? window_default_bytes() : blk.window_bytes;
    constexpr index_t kMinTile = 64;
    index_t u = blk.wave_units, tw = blk.wave_tile > 0 ? blk.wave_tile : big.extent(td) + S * r;
    if (u <= 0) {
        // Tiles of tw points along td whose window, 2 buffers x (u + (S+1)·r) units of tw·rest
        // points with u >= 4·r, fits the budget; where even kMinTile does not, groups of G steps.
        const index_t fit = budget / (2 * sz * rest * (S + 5) * r), least = std::min(kMinTile, tw);
        if (blk.wave_tile <= 0 && fit < least) {
            const index_t G = budget / (2 * sz * rest * least * r) - 5;  // < S
            if (G < 2 || budget == 0) return plain();
            for (index_t k0 = 0; k0 < S; k0 += G) {
                const std::vector<Box> part(boxes.begin() + k0, boxes.begin() + std::min(S, k0 + G));
                sweep_steps(L, k0 % 2 ? b : a, k0 % 2 ? a : b, part, taps, blk, progress);
            }
            return;
        }
        if (blk.wave_tile <= 0) tw = std::min(tw, fit);
        u = std::max<index_t>(4 * r, budget / (2 * sz * rest * tw) - (S + 1) * r);
    }
    u = std::min(u, big.extent(sd));
    const index_t y0 = big.lo[sd], x0 = big.lo[td];
    index_t waves = 0, tiles = 0;
    for (index_t k = 0; k < S; ++k)
        if (!boxes[k].empty()) {
            waves = std::max(waves, (boxes[k].hi[sd] + k * r - y0 + u - 1) / u);
            tiles = std::max(tiles, (boxes[k].hi[td] + k * r - x0 + tw - 1) / tw);
        }
    const RowTables<T>& tab = row_tables<T>();
    const bool parallel = big.volume() >= 16384 && omp_get_max_threads() > 1;
    constexpr index_t kWavesPerProgress = 16;
#pragma omp parallel if (parallel)
    {
        const index_t nt = omp_get_num_threads(), id = omp_get_thread_num();
        for (index_t i = 0; i < tiles; ++i)
            for (index_t w = 0; w < waves; ++w) {
                if (progress && id == 0 && w % kWavesPerProgress == kWavesPerProgress - 1) progress();
                for (index_t k = 0; k < S; ++k) {
                    Box v = boxes[k];
                    v.lo[sd] = std::max(v.lo[sd], y0 + w * u - k * r);
                    v.hi[sd] = std::min(v.hi[sd], y0 + (w + 1) * u - k * r);
                    v.lo[td] = std::max(v.lo[td], x0 + i * tw - k * r);
                    v.hi[td] = std::min(v.hi[td], x0 + (i + 1) * tw - k * r);
                    if (!v.empty()) {
                        const T* in = k % 2 ? b : a;
                        T* out = k % 2 ? a : b;
                        const index_t ey = v.extent(1), rows = ey * v.extent(2), n = v.extent(0);
                        for (index_t q = rows * id / nt; q < rows * (id + 1) / nt; ++q) {
                            const index_t at = L.index(v.lo[0], v.lo[1] + q % ey, v.lo[2] + q / ey);
                            row(tab, out + at, in + at, taps, n, false);
                        }
                    }
                    if (nt > 1) {
#pragma omp barrier
                    }
                }
            }
    }
    if (progress) progress();
}

#define CALA_STENCIL_SWEEP_INST(T)                                                    \
    template Taps<T> make_taps<T>(const Stencil<T>&, const Layout&);                  \
    template void sweep_box<T>(const Layout&, const T*, T*, const Box&, const Taps<T>&, const Blocking&); \
    template void sweep_steps<T>(const Layout&, T*, T*, const std::vector<Box>&, const Taps<T>&, const Blocking&, \
                                 const std::function<void()>&);
CALA_STENCIL_SWEEP_INST(float)
CALA_STENCIL_SWEEP_INST(double)

}  // namespace cala::detail

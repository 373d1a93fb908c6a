#pragma once
// cala-bench stencil's references, measured in the same run on every rank at once: the copy
// bandwidth (the memory roof), a ping-pong (the model's network), and the sweep's rate in cache
// (the compute roof). Used by stencil_bench.cpp only.

#include <mpi.h>
#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "cala/comm.hpp"
#include "cala/stencil.hpp"

namespace cala::bench::stencil_ref {

inline double max_over_ranks(double v) {
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return v;
}

// Barrier, body, barrier; the time is the maximum over ranks.
template <class F>
double timed(F&& body) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    body();
    MPI_Barrier(MPI_COMM_WORLD);
    return max_over_ranks(MPI_Wtime() - t0);
}

inline double best(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }
inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// A copy loop the compiler may not turn into memcpy: ordinary loads and stores, split over the
// OpenMP threads like the sweep.
template <class T>
__attribute__((optimize("no-tree-loop-distribute-patterns"))) void copy_loop(const T* __restrict a,
                                                                               T* __restrict b, std::int64_t len) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < len; ++i) b[i] = a[i];
}

// memcpy of each thread's contiguous share (glibc streams large copies past the cache with
// non-temporal stores, as the sweep does large boxes; small ones it copies through the cache).
template <class T>
void copy_memcpy(const T* a, T* b, std::int64_t len) {
#pragma omp parallel
    {
        const std::int64_t nt = omp_get_num_threads(), id = omp_get_thread_num();
        const std::int64_t lo = len * id / nt, hi = len * (id + 1) / nt;
        std::memcpy(b + lo, a + lo, sizeof(T) * static_cast<std::size_t>(hi - lo));
    }
}

// Two arrays allocated as a StencilField's buffers are (2 MiB aligned, transparent huge pages
// asked for, from 4 MiB on), first touched by the threads that copy them.
template <class T>
struct CopyArrays {
    std::int64_t len = 0;
    T* a = nullptr;
    T* b = nullptr;
    explicit CopyArrays(double mib) : len(static_cast<std::int64_t>(mib * 1024 * 1024 / sizeof(T))) {
        a = allocate(len);
        b = allocate(len);
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < len; ++i) {
            a[i] = T(1);
            b[i] = T(0);
        }
    }
    CopyArrays(const CopyArrays&) = delete;
    CopyArrays& operator=(const CopyArrays&) = delete;
    ~CopyArrays() {
        std::free(a);
        std::free(b);
    }
    static T* allocate(std::int64_t n) {
        constexpr std::size_t huge = std::size_t{2} << 20;
        const std::size_t want = sizeof(T) * static_cast<std::size_t>(std::max<std::int64_t>(n, 1));
        const std::size_t align = want >= 2 * huge ? huge : 64;
        const std::size_t bytes = (want + align - 1) / align * align;
        T* p = static_cast<T*>(std::aligned_alloc(align, bytes));
        if (p == nullptr) throw std::bad_alloc();
        if (align == huge) madvise(p, bytes, MADV_HUGEPAGE);
        return p;
    }
};

// Copy bandwidth samples (GB/s per rank, 2·sizeof(T) bytes per element: read + written), every
// rank at once: `reps` repeats of each kind of copy, after one untimed of each.
struct CopySamples {
    std::vector<double> loop, memcpy;  ///< ordinary stores; memcpy (non-temporal when large)
    /// The reference: per repeat the faster of the two kinds, median over the repeats.
    double reference() const {
        std::vector<double> m;
        for (std::size_t i = 0; i < loop.size(); ++i) m.push_back(std::max(loop[i], memcpy[i]));
        return m.empty() ? 0.0 : median(m);
    }
    void add(const CopySamples& o) {
        loop.insert(loop.end(), o.loop.begin(), o.loop.end());
        memcpy.insert(memcpy.end(), o.memcpy.begin(), o.memcpy.end());
    }
};

template <class T>
CopySamples copy_gbs(CopyArrays<T>& c, int reps) {
    CopySamples out;
    const double bytes = 2.0 * sizeof(T) * static_cast<double>(c.len);
    for (int r = -1; r < reps; ++r) {
        const double tl = timed([&] { copy_loop(c.a, c.b, c.len); });
        const double tm = timed([&] { copy_memcpy(c.a, c.b, c.len); });
        if (r < 0) continue;
        out.loop.push_back(bytes / tl / 1e9);
        out.memcpy.push_back(bytes / tm / 1e9);
    }
    return out;
}

struct PingPong {
    double latency_s = 0, bandwidth = 1e30;  // bandwidth in bytes/s
};

inline PingPong ping_pong() {
    PingPong pp;
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) return pp;
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    auto round_trips = [&](std::vector<char>& buf, int reps) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        for (int i = 0; i < reps && me < 2; ++i) {
            const int n = static_cast<int>(buf.size());
            if (me == 0) {
                MPI_Send(buf.data(), n, MPI_CHAR, 1, 7, MPI_COMM_WORLD);
                MPI_Recv(buf.data(), n, MPI_CHAR, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf.data(), n, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf.data(), n, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
            }
        }
        double dt = (MPI_Wtime() - t0) / reps;
        MPI_Bcast(&dt, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        return dt;
    };
    std::vector<char> small(8), large(4 << 20);
    round_trips(small, 10);
    pp.latency_s = round_trips(small, 200) / 2;
    round_trips(large, 2);
    const double t = round_trips(large, 10) / 2;
    pp.bandwidth = static_cast<double>(large.size()) / std::max(t - pp.latency_s, 1e-12);
    return pp;
}

// The compute roof of the temporally blocked steps: the rate, in point updates per second
// (halo points included), of cala::stencil on a block alone whose two buffers take 4 x the L2
// (half the wavefront's budget, so that the whole block stays in cache; rows as long as this
// rank's, up to 16384 points; at least 8 rows, or 8 x 8 in 3D), at the deepest depth it takes
// (at most 32), at least 64 steps; best of --runs (at least 5), minimum over ranks. Measured on one
// thread and multiplied by the rank's threads.
template <class T>
double cached_update_rate(const Stencil<T>& st, int dim, index_t nx, std::int64_t steps, int runs) {
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l2 <= 0) l2 = 512 * 1024;
    const index_t x = std::min<index_t>(nx, 16384);
    const index_t fit = 4 * l2 / (2 * static_cast<index_t>(sizeof(T)) * x);  // rows (2D) or y·z (3D) that fit
    const index_t len = std::max<index_t>(8, dim == 2 ? fit : static_cast<index_t>(std::sqrt(static_cast<double>(fit))));
    const int depth = static_cast<int>(std::clamp<index_t>(std::min(x, len) / st.radius(), 1, 32));
    const Comm self = Comm::borrow(MPI_COMM_SELF);
    const StencilGrid alone(self, dim == 2 ? StencilDomain::make_2d(x, len, 1, 1)
                                           : StencilDomain::make_3d(x, len, len, 1, 1, 1));
    StencilField<T> v(alone, depth * st.radius());
    v.fill([](index_t i, index_t j, index_t k) { return static_cast<T>((i + j + k) % 3); });
    const std::int64_t n = (std::max<std::int64_t>(64, steps) + depth - 1) / depth * depth;
    // On one thread, times the threads: a roof that no thread count can beat by sharing the block
    // (one thread per rank: the rate itself).
    const int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    double tbest = 1e300;
    StencilStats stats;
    for (int r = -1; r < std::max(runs, 5); ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        stats = stencil(v, st, n, StencilOptions{depth, true});
        if (r >= 0) tbest = std::min(tbest, MPI_Wtime() - t0);
    }
    omp_set_num_threads(threads);
    const double rate = static_cast<double>(stats.updates) / tbest * threads;
    double slowest = rate;
    MPI_Allreduce(&rate, &slowest, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    return slowest;
}

}  // namespace cala::bench::stencil_ref

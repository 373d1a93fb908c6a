#pragma once
// Shared by cala-bench's subcommands: grid-independent random data, the timing protocol
// (STYLE.md section 7), the single-core BLAS rate, reductions over ranks.

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cala/cala.hpp"
#include "kernels/blas.hpp"

namespace cala::bench {

inline int world_rank() {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

// ---- data: value of element (i, j) of matrix `id` is a hash of (seed, id, i, j), so it does not
// depend on the grid; the seed is fresh each run (random_device on rank 0, broadcast).

inline std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

inline double uniform(std::uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-52 - 1.0; }  // [-1, 1)

template <class T>
T element(std::uint64_t seed, index_t i, index_t j) {
    const std::uint64_t h = mix(seed ^ mix(static_cast<std::uint64_t>(i) * 0x100000001b3ull + mix(j)));
    if constexpr (is_complex_v<T>) return T(static_cast<real_t<T>>(uniform(h)), static_cast<real_t<T>>(uniform(mix(h))));
    else return static_cast<T>(uniform(h));
}

template <class T>
void fill_random(const MatrixRef<T>& a, std::uint64_t seed) {
    const Grid2D& g = a.grid();
#pragma omp parallel for schedule(static)
    for (index_t j = 0; j < a.n_loc(); ++j) {
        const index_t jg = a.layout().cols.to_global(j, g.col());
        for (index_t i = 0; i < a.m_loc(); ++i) a.local(i, j) = element<T>(seed, a.layout().rows.to_global(i, g.row()), jg);
    }
}

template <class T>
void copy_local(const MatrixRef<T>& src, const MatrixRef<T>& dst) {
    if (src.m_loc() > 0 && src.n_loc() > 0)
        std::memcpy(dst.data(), src.data(), sizeof(T) * static_cast<std::size_t>(src.ld() * src.n_loc()));
}

// ---- timing

struct Times {
    std::vector<double> runs;  ///< max over ranks, per reported run
    double best() const { return *std::min_element(runs.begin(), runs.end()); }
    double median() const {
        std::vector<double> s = runs;
        std::sort(s.begin(), s.end());
        const std::size_t h = s.size() / 2;
        return s.size() % 2 ? s[h] : 0.5 * (s[h - 1] + s[h]);
    }
};

// `reset` (untimed) then barrier, `body`, barrier; one warm-up, then `runs` reported runs.
template <class Reset, class Body>
Times time_runs(int runs, MPI_Comm comm, Reset&& reset, Body&& body) {
    Times t;
    for (int r = -1; r < runs; ++r) {
        reset();
        MPI_Barrier(comm);
        const double t0 = MPI_Wtime();
        body();
        MPI_Barrier(comm);
        double dt = MPI_Wtime() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, comm);
        if (r >= 0) t.runs.push_back(dt);
    }
    return t;
}

// Single-core BLAS rate on the per-rank local shape m_loc x n_loc x k, measured on rank 0 with
// one thread while the other ranks wait; broadcast to all. GFLOP/s per core.
template <class T>
double blas_rate(index_t m_loc, index_t n_loc, index_t k, double flops_per_fma, int threads, MPI_Comm comm) {
    double gflops = 0;
    if (world_rank() == 0 && m_loc > 0 && n_loc > 0 && k > 0) {
        omp_set_num_threads(1);
        std::vector<T> a(static_cast<std::size_t>(m_loc * k)), b(static_cast<std::size_t>(k * n_loc)),
            c(static_cast<std::size_t>(m_loc * n_loc));
        for (std::size_t i = 0; i < a.size(); ++i) a[i] = element<T>(7, static_cast<index_t>(i), 0);
        for (std::size_t i = 0; i < b.size(); ++i) b[i] = element<T>(8, static_cast<index_t>(i), 0);
        double best = INFINITY;
        for (int r = 0; r < 4; ++r) {  // a warm-up, then best of 3
            const double t0 = MPI_Wtime();
            kernels::gemm<T>(Op::N, Op::N, m_loc, n_loc, k, T(1), a.data(), m_loc, b.data(), k, T(0), c.data(), m_loc);
            const double dt = MPI_Wtime() - t0;
            if (r > 0) best = std::min(best, dt);
        }
        gflops = flops_per_fma * static_cast<double>(m_loc) * static_cast<double>(n_loc) * static_cast<double>(k) / best / 1e9;
        omp_set_num_threads(threads);
    }
    MPI_Barrier(comm);
    MPI_Bcast(&gflops, 1, MPI_DOUBLE, 0, comm);
    return gflops;
}

// A 1x1x1 product: initializes the BLAS (blas_kernel_name() aborts if asked before that).
template <class T>
void touch_blas() {
    const T one = T(1);
    T dummy = T(0);
    kernels::gemm<T>(Op::N, Op::N, 1, 1, 1, one, &one, 1, &one, 1, T(0), &dummy, 1);
}

inline std::int64_t max_over_ranks(std::int64_t v, MPI_Comm comm) {
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, MPI_MAX, comm);
    return v;
}

}  // namespace cala::bench

#pragma once
// Shared by cala-bench's subcommands: grid-independent random data, the timing protocol
// (STYLE.md section 7), reductions over ranks. The reference rates are in concurrent_ref.hpp.

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cala/cala.hpp"
#include "core/trace.hpp"
#include "kernels/blas.hpp"
#include "output.hpp"

namespace cala::bench {

/// The launcher of the MPI this cala-bench is built for (meson -Dmpi=...), for messages.
#if defined(OPEN_MPI)
inline constexpr const char* kLauncher = "mpiexec.openmpi";
#else
inline constexpr const char* kLauncher = "mpiexec.mpich";
#endif

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

/// A fresh seed for this run's data: std::random_device on world rank 0, broadcast over comm.
inline std::uint64_t fresh_seed(MPI_Comm comm) {
    std::uint64_t seed = 0;
    if (world_rank() == 0) seed = (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, comm);
    return seed;
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

// The median (the mean of the two middle values for an even count; 0 for none).
inline double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.empty() ? 0 : v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

struct Times {
    std::vector<double> runs;  ///< max over ranks, per reported run
    double best() const { return *std::min_element(runs.begin(), runs.end()); }
    double median() const { return median_of(runs); }
};

// `reset` (untimed) then barrier, `body`, barrier; one warm-up, then `runs` reported runs.
// Progress (on a terminal): "<bench>: <what>, run i of n".
template <class Reset, class Body>
Times time_runs(const std::string& bench, const std::string& what, int runs, MPI_Comm comm, Reset&& reset,
                Body&& body) {
    Times t;
    for (int r = -1; r < runs; ++r) {
        progress(bench, what + (r < 0 ? ", warm-up" : ", run " + std::to_string(r + 1) + " of " + std::to_string(runs)));
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

// One more call of `body`, traced (lib/core/trace.hpp), not among the reported runs: the trace of
// every rank goes to `path` (written by rank 0). Returns the call's time, max over ranks.
template <class Body>
double traced_run(MPI_Comm comm, const std::string& path, Body&& body) {
    detail::trace::start(comm);
    const double t0 = MPI_Wtime();
    body();
    MPI_Barrier(comm);
    double dt = MPI_Wtime() - t0;
    detail::trace::stop();
    MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, comm);
    detail::trace::write(comm, path);
    return dt;
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

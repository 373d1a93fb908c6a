#pragma once
// The concurrent reference rate that cala-bench's efficiencies are measured against (issue 18).
//
// Every rank, with every OpenMP thread the run uses, runs the run's own local kernel at the same
// time as all the others: the memory system, the caches and the clock are shared exactly as they
// are during the run. The machine's rate is the sum of the ranks' rates; one repeat is
//
//   barrier (sleeping, not spinning); t0; local kernel (each rank its own shape; calls in a row
//   worth at least 2 GFLOP on the busiest rank, the same count on every rank); t1;
//   rate_r = flops_r / (t1 - t0);
//   machine rate = sum over ranks of rate_r
//
// and the reference is the median over `repeats` repeats (after one warm-up); the benches measure
// it before and after their timed runs and take the median of both sets. Two threadings:
//   Blas:      one BLAS call on `threads` threads per rank (what cala::gemm's local products do);
//   PerThread: every thread its own single-threaded call C_t := A·B_tᴴ + C_t, all at once, as
//              cala::potrf's update tasks run a step: A (m x k, the step's panel) is one array
//              that all threads of the rank read, B_t (n x k) is a slice of it (the panel's tile
//              of the column, opb C), C_t (m x n) is the thread's own; a rank's flops are then
//              threads x the shape's. Each call writes the next of the thread's C_t blocks (256 MiB
//              of them a rank, more than a cache holds), as each task of potrf another column. Until issue 32 every
//              thread had its own A: on 16 threads
//              sixteen panels streamed from memory where potrf's tasks read one (from the shared
//              cache), and potrf ran at 1.59 of that reference. The benches take the fastest of
//              a few heights of the update (potrf_bench.cpp).
//
// Measuring it on one core while the others wait (the reference before issue 18) gives that core
// the whole memory system and its boost clock, and efficiencies above 1.

#include <mpi.h>
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cala/cala.hpp"
#include "common.hpp"
#include "core/threads.hpp"
#include "core/workspace.hpp"
#include "kernels/blas.hpp"
#include "peak.hpp"

namespace cala::bench {

enum class Threading { Blas, PerThread };

struct Reference {
    double gflops = 0;              ///< median over repeats of the sum over ranks (GFLOP/s)
    std::vector<double> samples;    ///< the sums, one per repeat
    std::string shape;              ///< this rank's local shape (rank 0's goes in the JSON line)

    /// The samples of another measurement of the same reference (the benches measure it before
    /// and after the timed runs, so that a machine whose load changes meanwhile weighs on both).
    void add(const Reference& later) {
        samples.insert(samples.end(), later.samples.begin(), later.samples.end());
        gflops = median_of(samples);
    }
};

/// Where a run's threads per rank came from, for the JSON line's "threads_from": "--threads"
/// when the command line gave them, else cala's choice (core/threads.hpp), e.g. "1 thread per
/// rank (node: 2 cores / 2 ranks)" or "2 threads per rank (OMP_NUM_THREADS)".
inline std::string threads_from(bool given) {
    return given ? "--threads" : cala::detail::last_thread_fit().describe();
}

namespace detail {

// c := a·op(b) + 0·c of an m x n x k product on buffers owned by the calling thread.
template <class T>
struct GemmOperands {
    index_t m, n, k;
    Op opb;
    cala::detail::Buffer<T> a, b, c;
    GemmOperands(index_t m_, index_t n_, index_t k_, Op opb_)
        : m(m_), n(n_), k(k_), opb(opb_), a(m_ * k_), b(k_ * n_), c(m_ * n_) {
        for (index_t i = 0; i < a.size(); ++i) a[i] = element<T>(7, i, 0);
        for (index_t i = 0; i < b.size(); ++i) b[i] = element<T>(8, i, 0);
        for (index_t i = 0; i < c.size(); ++i) c[i] = T(0);
    }
    void run() const {
        if (m == 0 || n == 0 || k == 0) return;
        kernels::gemm<T>(Op::N, opb, m, n, k, T(1), a.data(), m, b.data(), opb == Op::N ? k : n, T(1), c.data(), m);
    }
};

// PerThread's operands: A (m x k) shared by the threads of a rank; B_t, n x k (opb C) or k x n
// (opb N), a slice of it where A has the rows (thread t's at row t·n, wrapping), else its own.
template <class T>
struct SharedPanel {
    index_t m, n, k;
    Op opb;
    cala::detail::Buffer<T> a, own_b;
    SharedPanel(index_t m_, index_t n_, index_t k_, Op opb_)
        : m(m_), n(n_), k(k_), opb(opb_), a(m_ * k_), own_b(opb_ != Op::N && n_ <= m_ ? 0 : k_ * n_) {
        for (index_t i = 0; i < a.size(); ++i) a[i] = element<T>(7, i, 0);
        for (index_t i = 0; i < own_b.size(); ++i) own_b[i] = element<T>(8, i, 0);
    }
    // Thread t's B and its leading dimension.
    std::pair<const T*, index_t> b(int t) const {
        if (own_b.size() > 0) return {own_b.data(), opb == Op::N ? k : n};
        const index_t slices = std::max<index_t>(m / std::max<index_t>(n, 1), 1);
        return {a.data() + (t % slices) * n, m};
    }
};

// One thread's tasks on a SharedPanel: C_t := A·op(B_t) + C_t, each call on the next of the
// thread's `blocks` column blocks of C (first-touched here), as potrf's tasks of a step each
// update another column: a C used again at once would stay in the cache, which potrf's do not.
template <class T>
struct PanelTask {
    const SharedPanel<T>& p;
    const T* b;
    index_t ldb, blocks;
    cala::detail::Buffer<T> c;
    mutable index_t next = 0;
    PanelTask(const SharedPanel<T>& p_, int t, index_t blocks_)
        : p(p_), blocks(std::max<index_t>(blocks_, 1)), c(p_.m * p_.n * std::max<index_t>(blocks_, 1)) {
        std::tie(b, ldb) = p.b(t);
        for (index_t i = 0; i < c.size(); ++i) c[i] = T(0);
    }
    void run() const {
        if (p.m == 0 || p.n == 0 || p.k == 0) return;
        T* cb = c.data() + (next++ % blocks) * p.m * p.n;
        kernels::gemm<T>(Op::N, p.opb, p.m, p.n, p.k, T(1), p.a.data(), p.m, b, ldb, T(1), cb, p.m);
    }
};

// A barrier that sleeps while it waits: a rank done with its product early must not spin (MPICH
// polls in MPI_Barrier) on a core another rank still computes on, where ranks share cores.
inline void sleeping_barrier(MPI_Comm comm) {
    MPI_Request r;
    MPI_Ibarrier(comm, &r);
    for (int done = 0;;) {
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        if (done) return;
        const timespec ts{0, 20000};  // 20 us
        nanosleep(&ts, nullptr);
    }
}

}  // namespace detail

/// The concurrent rate of the local products m_loc x n_loc x k (C := A·op(B)) that this rank
/// runs, on `threads` threads; collective over comm (every rank passes its own shape).
template <class T>
Reference gemm_reference(index_t m_loc, index_t n_loc, index_t k, Op opb, Threading how, int threads,
                         MPI_Comm comm, int repeats = 5) {
    const double fma = is_complex_v<T> ? 8.0 : 2.0;
    const int per_rank = how == Threading::PerThread ? threads : 1;
    double flops = fma * double(m_loc) * double(n_loc) * double(k) * per_rank;
    Reference ref;
    ref.shape = std::to_string(m_loc) + "x" + std::to_string(n_loc) + "x" + std::to_string(k) +
                (how == Threading::PerThread ? " on each of " + std::to_string(threads) + " threads, A shared"
                                             : " on " + std::to_string(threads) + " threads");

    // A repeat is `calls` calls in a row, at least kRepeatFlops on the busiest rank (the same count
    // on every rank, so that all ranks compute for the whole repeat): a tile product of a few
    // milliseconds, timed alone, is at the mercy of one scheduler tick (on a VM, of the host).
    constexpr double kRepeatFlops = 2e9;
    double busiest = flops;
    MPI_Allreduce(MPI_IN_PLACE, &busiest, 1, MPI_DOUBLE, MPI_MAX, comm);
    const int calls = busiest > 0 ? static_cast<int>(std::clamp(std::ceil(kRepeatFlops / busiest), 1.0, 64.0)) : 1;
    flops *= calls;
    if (calls > 1) ref.shape += ", " + std::to_string(calls) + " calls a repeat";

    std::vector<double> rank_times;
    if (how == Threading::Blas) {
        detail::GemmOperands<T> x(m_loc, n_loc, k, opb);
        kernels::ThreadScope scope(threads);
        for (int r = -1; r < repeats; ++r) {
            detail::sleeping_barrier(comm);
            const double t0 = MPI_Wtime();
            for (int c = 0; c < calls; ++c) x.run();
            rank_times.push_back(MPI_Wtime() - t0);
        }
    } else {
        // A shared (filled by this thread, as potrf's panel arrives on the driving thread); each
        // thread first-touches its own C; then all threads of all ranks start each repeat
        // together (MPI barrier on the master, then an OpenMP barrier).
        rank_times.assign(static_cast<std::size_t>(repeats + 1), 0.0);
        const detail::SharedPanel<T> panel(m_loc, n_loc, k, opb);
        // Each thread's C blocks: 256 MiB a rank (at most 64 a thread), more than a cache holds.
        const index_t c_blocks = std::clamp<index_t>(
            static_cast<index_t>((256.0 * 1048576.0 / threads) / (double(m_loc) * double(n_loc) * sizeof(T) + 1.0)), 1,
            64);
        double t0 = 0;
#pragma omp parallel num_threads(threads)
        {
            kernels::ThreadScope one(1);
            const detail::PanelTask<T> x(panel, omp_get_thread_num(), c_blocks);
            for (int r = 0; r <= repeats; ++r) {
#pragma omp barrier
#pragma omp master
                {
                    detail::sleeping_barrier(comm);
                    t0 = MPI_Wtime();
                }
#pragma omp barrier
                for (int c = 0; c < calls; ++c) x.run();
#pragma omp barrier
#pragma omp master
                rank_times[static_cast<std::size_t>(r)] = MPI_Wtime() - t0;
            }
        }
    }
    rank_times.erase(rank_times.begin());  // the warm-up
    for (double t : rank_times) {
        double rate = flops > 0 ? flops / t / 1e9 : 0.0;
        MPI_Allreduce(MPI_IN_PLACE, &rate, 1, MPI_DOUBLE, MPI_SUM, comm);
        ref.samples.push_back(rate);
    }
    ref.gflops = median_of(ref.samples);
    return ref;
}

/// The reference fields of a result line, and the efficiency of a run whose median rate is
/// `rate_median`: reference_gflops (the machine, all ranks), reference_gflops_samples,
/// reference_shape (rank 0's), blas_gflops (the reference per core, for older scripts) and
/// efficiency. An efficiency above 1 by more than the reference's own spread (reference_noise:
/// its best sample over its median) means the reference is wrong: an error (stderr, the line's
/// "error" field, exit status 3); within that spread, a "note".
inline void add_efficiency(nlohmann::ordered_json& j, const std::string& bench, double rate_median,
                           const Reference& ref, int cores) {
    recheck_peak();  // the FMA peak again, now that the runs are done (collective, once)
    j["reference_gflops"] = ref.gflops;
    j["reference_gflops_samples"] = ref.samples;
    j["reference_shape"] = ref.shape;
    j["blas_gflops"] = ref.gflops / std::max(cores, 1);
    j["blas_kernel"] = blas_library_name();  // what ran the reference (and cala): "blis <set>" or "openblas <core>"
    const double eff = ref.gflops > 0 ? rate_median / ref.gflops : 0.0;
    j["efficiency"] = eff;
    // The reference's own spread: its best sample over its median. An efficiency above 1 by no
    // more than that is the reference's noise (a run as fast as the kernel, e.g. 1 rank), said in
    // the line; above it, the reference is wrong: an error.
    const double best = ref.samples.empty() ? ref.gflops : *std::max_element(ref.samples.begin(), ref.samples.end());
    const double noise = ref.gflops > 0 ? best / ref.gflops - 1.0 : 0.0;
    j["reference_noise"] = noise;
    if (eff > 1.0 && eff <= 1.0 + noise) j["note"] = "efficiency above 1 within the reference's spread (reference_noise)";
    if (eff > 1.0 + noise) {
        char msg[256];
        std::snprintf(msg, sizeof msg,
                      "efficiency %.3f > 1: cala's median rate %.1f GF/s exceeds the concurrent reference %.1f GF/s "
                      "by more than its spread (%.1f%%): a wrong reference, or a machine busy with other work",
                      eff, rate_median, ref.gflops, 100.0 * noise);
        j["error"] = msg;
        report_error(bench, msg);
    }
}

}  // namespace cala::bench

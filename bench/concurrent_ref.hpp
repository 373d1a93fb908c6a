#pragma once
// The concurrent reference rate that cala-bench's efficiencies are measured against (issue 18).
//
// Every rank, with every OpenMP thread the run uses, runs the run's own local kernel at the same
// time as all the others: the memory system, the caches and the clock are shared exactly as they
// are during the run. The machine's rate is the sum of the ranks' rates; one repeat is
//
//   barrier (sleeping, not spinning); t0; local kernel (each rank its own shape); t1;
//   rate_r = flops_r / (t1 - t0);
//   machine rate = sum over ranks of rate_r
//
// and the reference is the median over `repeats` repeats (after one warm-up); the benches measure
// it before and after their timed runs and take the median of both sets. Two threadings:
//   Blas:      one BLAS call on `threads` threads per rank (what cala::gemm's local products do);
//   PerThread: every thread its own single-threaded call, all at once (what cala::potrf's update
//              tasks do); a rank's flops are then threads x the shape's.
//
// Measuring it on one core while the others wait (the reference before issue 18) gives that core
// the whole memory system and its boost clock, and efficiencies above 1.

#include <mpi.h>
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cala/cala.hpp"
#include "common.hpp"
#include "core/workspace.hpp"
#include "kernels/blas.hpp"

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
    const double flops = fma * double(m_loc) * double(n_loc) * double(k) * per_rank;
    Reference ref;
    ref.shape = std::to_string(m_loc) + "x" + std::to_string(n_loc) + "x" + std::to_string(k) +
                (how == Threading::PerThread ? " on each of " + std::to_string(threads) + " threads"
                                             : " on " + std::to_string(threads) + " threads");

    std::vector<double> rank_times;
    if (how == Threading::Blas) {
        detail::GemmOperands<T> x(m_loc, n_loc, k, opb);
        kernels::ThreadScope scope(threads);
        for (int r = -1; r < repeats; ++r) {
            detail::sleeping_barrier(comm);
            const double t0 = MPI_Wtime();
            x.run();
            rank_times.push_back(MPI_Wtime() - t0);
        }
    } else {
        // Each thread allocates and first-touches its own operands, then all threads of all
        // ranks start each repeat together (MPI barrier on the master, then an OpenMP barrier).
        rank_times.assign(static_cast<std::size_t>(repeats + 1), 0.0);
        double t0 = 0;
#pragma omp parallel num_threads(threads)
        {
            kernels::ThreadScope one(1);
            detail::GemmOperands<T> x(m_loc, n_loc, k, opb);
            for (int r = 0; r <= repeats; ++r) {
#pragma omp barrier
#pragma omp master
                {
                    detail::sleeping_barrier(comm);
                    t0 = MPI_Wtime();
                }
#pragma omp barrier
                x.run();
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
    j["reference_gflops"] = ref.gflops;
    j["reference_gflops_samples"] = ref.samples;
    j["reference_shape"] = ref.shape;
    j["blas_gflops"] = ref.gflops / std::max(cores, 1);
    j["blas_kernel"] = blas_kernel_name();
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

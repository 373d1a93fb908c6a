#pragma once
// Threads that fit the node: the default number of OpenMP threads per rank (issue 32).
//
// grid (Grid2D's constructor, so libcala and the ScaLAPACK shim alike) -> fit_threads (this)
//   -> MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) + the ranks' affinity masks -> omp_set_num_threads
//
// libgomp starts as many threads per process as the process's affinity mask has CPUs: two ranks
// on a 2-core node ran 2 threads each, and PDGEMM through the shim fell from 100 to 15 GF/s.
// Unless the user chose, each rank now takes its share of the node:
//
//   threads = max(1, min(mask_cores, node_cores / node_ranks))
//
// node_cores: CPUs in the union of the affinity masks of the communicator's ranks on this node;
// node_ranks: those ranks (the most seen by this process so far: a grid over a sub-communicator
// does not hand a rank the cores of ranks that are not in it); mask_cores: this rank's own mask.
//
// Who chose, in the order that wins:
//   program          omp_set_num_threads by the program since cala last looked (cala-bench --threads)
//   CALA_THREADS     a positive integer: cala's threads per rank
//   OMP_NUM_THREADS  set in the environment (libgomp read it at its start): left as it is
//   node             none of these: the share above
// A call's own thread option (a ThreadScope) wins over all of them for that call.

#include <mpi.h>

#include <string>

namespace cala::detail {

/// A rank's thread count and where it came from.
struct ThreadFit {
    int threads = 1;     ///< threads per rank (omp_get_max_threads() on the calling thread after the fit)
    int node_cores = 0;  ///< CPUs in the union of the affinity masks of the node's ranks
    int node_ranks = 0;  ///< ranks on this node (the most seen by this process)
    int mask_cores = 0;  ///< CPUs in this rank's affinity mask
    std::string source;  ///< "program", "CALA_THREADS", "OMP_NUM_THREADS" or "node"

    /// One line: "1 thread per rank (node: 2 cores / 2 ranks)".
    std::string describe() const;
};

/// The node's share of one rank: max(1, min(mask_cores, node_cores / node_ranks)).
int node_share(int node_cores, int node_ranks, int mask_cores) noexcept;

/// What the environment says: the value of CALA_THREADS if it is a positive integer, else 0;
/// `omp_set` is whether OMP_NUM_THREADS is set (to anything: libgomp read it).
struct ThreadEnv {
    int cala_threads = 0;
    bool omp_set = false;
};
ThreadEnv thread_env();

/// Counts the ranks of `comm` on this rank's node and the CPUs of their affinity masks, and sets
/// the calling thread's OpenMP thread count by the rules above (`env`: the environment's say).
/// Collective over `comm` (one MPI_Comm_split_type and one MPI_Allreduce on the node). Prints
/// the choice on stderr from rank 0 of `comm` under CALA_VERBOSE (once per different choice).
ThreadFit fit_threads(MPI_Comm comm, const ThreadEnv& env);
inline ThreadFit fit_threads(MPI_Comm comm) { return fit_threads(comm, thread_env()); }

/// The last fit of this process (source empty if there was none).
ThreadFit last_thread_fit();

}  // namespace cala::detail

// Threads that fit the node (threads.hpp): the share of the node's cores each rank takes unless
// the user chose.

#include "core/threads.hpp"

#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "core/check.hpp"

namespace cala::detail {

namespace {

struct State {
    std::mutex mu;
    int expected = 0;           // omp_get_max_threads() as cala last saw or set it
    bool program = false;       // the program set it itself: it keeps it
    int node_ranks = 0;         // the most ranks seen on this node, and their cores
    int node_cores = 0;
    ThreadFit last;
    std::string printed;        // the last CALA_VERBOSE line
};

State& state() {
    static State s;
    return s;
}

// libgomp has read OMP_NUM_THREADS (or counted the process's CPUs) before this library's
// constructors run: what a program finds before it sets anything itself.
[[gnu::constructor]] void record_initial_threads() { state().expected = omp_get_max_threads(); }

bool verbose() {
    const char* v = std::getenv("CALA_VERBOSE");
    return v != nullptr && *v != '\0' && std::string(v) != "0";
}

}  // namespace

std::string ThreadFit::describe() const {
    std::string s = cat(threads, threads == 1 ? " thread" : " threads", " per rank (", source);
    if (source == "node") s += cat(": ", node_cores, " cores / ", node_ranks, node_ranks == 1 ? " rank" : " ranks");
    return s + ")";
}

int node_share(int node_cores, int node_ranks, int mask_cores) noexcept {
    const int share = node_cores / std::max(node_ranks, 1);
    return std::max(1, std::min(mask_cores > 0 ? mask_cores : share, share));
}

ThreadEnv thread_env() {
    ThreadEnv e;
    if (const char* c = std::getenv("CALA_THREADS")) {
        char* end = nullptr;
        const long v = std::strtol(c, &end, 10);
        if (end != c && *end == '\0' && v > 0 && v < 1 << 20) e.cala_threads = static_cast<int>(v);
    }
    e.omp_set = std::getenv("OMP_NUM_THREADS") != nullptr;
    return e;
}

ThreadFit fit_threads(MPI_Comm comm, const ThreadEnv& env) {
    // This node's ranks of comm and the union of their affinity masks.
    MPI_Comm node = MPI_COMM_NULL;
    CALA_CHECK_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int ranks = 1;
    MPI_Comm_size(node, &ranks);
    cpu_set_t mine, all;
    CPU_ZERO(&mine);
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) CPU_ZERO(&mine);
    const int rc = MPI_Allreduce(&mine, &all, sizeof(cpu_set_t), MPI_BYTE, MPI_BOR, node);
    MPI_Comm_free(&node);
    CALA_CHECK_MPI(rc);
    int comm_rank = 0;
    MPI_Comm_rank(comm, &comm_rank);

    State& s = state();
    std::lock_guard lock(s.mu);
    if (ranks >= s.node_ranks) s.node_ranks = ranks, s.node_cores = CPU_COUNT(&all);
    ThreadFit f;
    f.node_ranks = s.node_ranks;
    f.node_cores = s.node_cores;
    f.mask_cores = CPU_COUNT(&mine);
    const int current = omp_get_max_threads();
    if (s.program || current != s.expected) {
        s.program = true;
        f.threads = current, f.source = "program";
    } else if (env.cala_threads > 0) {
        f.threads = env.cala_threads, f.source = "CALA_THREADS";
    } else if (env.omp_set) {
        f.threads = current, f.source = "OMP_NUM_THREADS";
    } else {
        f.threads = node_share(f.node_cores, f.node_ranks, f.mask_cores), f.source = "node";
    }
    if (f.threads != current) omp_set_num_threads(f.threads);
    s.expected = f.threads;
    s.last = f;
    const std::string line = f.describe();
    if (comm_rank == 0 && line != s.printed && verbose()) {
        std::fprintf(stderr, "cala: %s\n", line.c_str());
        s.printed = line;
    }
    return f;
}

ThreadFit last_thread_fit() {
    State& s = state();
    std::lock_guard lock(s.mu);
    return s.last;
}

}  // namespace cala::detail

// Threads that fit the node (lib/core/threads.hpp): the default is the node's cores over the
// node's ranks, and what the user chose wins (CALA_THREADS, OMP_NUM_THREADS, the program's
// omp_set_num_threads). The expected share is counted here independently of the library: ranks
// with this rank's processor name, and the union of their affinity masks, gathered over the world.
// (run as: mpiexec.mpich -n N test_threads; N = 1, 2, 3)

#include <doctest/doctest.h>
#include <mpi.h>
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cala/cala.hpp"
#include "core/threads.hpp"

using cala::detail::fit_threads;
using cala::detail::ThreadEnv;

namespace {

bool everywhere(bool ok) {
    int v = ok ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return v == 1;
}

struct Node {
    int ranks = 0, cores = 0, mask = 0;
};

// This rank's node as the test sees it: the world's ranks with the same processor name.
Node count_node() {
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int len = 0;
    MPI_Get_processor_name(name, &len);
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<char> names(static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                  MPI_COMM_WORLD);
    cpu_set_t mine;
    CPU_ZERO(&mine);
    REQUIRE(sched_getaffinity(0, sizeof mine, &mine) == 0);
    std::vector<cpu_set_t> masks(static_cast<std::size_t>(size));
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, masks.data(), sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
    Node n;
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int r = 0; r < size; ++r) {
        if (std::strncmp(name, names.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME,
                         MPI_MAX_PROCESSOR_NAME) != 0)
            continue;
        ++n.ranks;
        CPU_OR(&all, &all, &masks[static_cast<std::size_t>(r)]);
    }
    n.cores = CPU_COUNT(&all);
    n.mask = CPU_COUNT(&mine);
    return n;
}

}  // namespace

TEST_CASE("the node's share: max(1, min(own mask, node cores / node ranks))") {
    CHECK(cala::detail::node_share(2, 2, 2) == 1);
    CHECK(cala::detail::node_share(2, 1, 2) == 2);
    CHECK(cala::detail::node_share(2, 3, 2) == 1);    // oversubscribed: never 0
    CHECK(cala::detail::node_share(16, 3, 16) == 5);  // one core left over
    CHECK(cala::detail::node_share(16, 2, 4) == 4);   // a rank bound to 4 cores takes 4
    CHECK(cala::detail::node_share(16, 1, 0) == 16);  // no mask: the share
}

TEST_CASE("the environment: CALA_THREADS a positive integer, OMP_NUM_THREADS set or not") {
    const char* saved_c = std::getenv("CALA_THREADS");
    const char* saved_o = std::getenv("OMP_NUM_THREADS");
    const std::string keep_c = saved_c ? saved_c : "", keep_o = saved_o ? saved_o : "";

    unsetenv("CALA_THREADS");
    unsetenv("OMP_NUM_THREADS");
    const ThreadEnv none = cala::detail::thread_env();
    setenv("CALA_THREADS", "3", 1);
    setenv("OMP_NUM_THREADS", "", 1);
    const ThreadEnv both = cala::detail::thread_env();
    setenv("CALA_THREADS", "0", 1);
    const ThreadEnv zero = cala::detail::thread_env();
    setenv("CALA_THREADS", "4x", 1);
    const ThreadEnv junk = cala::detail::thread_env();

    CHECK(none.cala_threads == 0);
    CHECK_FALSE(none.omp_set);
    CHECK(both.cala_threads == 3);
    CHECK(both.omp_set);
    CHECK(zero.cala_threads == 0);
    CHECK(junk.cala_threads == 0);
    if (saved_c) setenv("CALA_THREADS", keep_c.c_str(), 1); else unsetenv("CALA_THREADS");
    if (saved_o) setenv("OMP_NUM_THREADS", keep_o.c_str(), 1); else unsetenv("OMP_NUM_THREADS");
}

TEST_CASE("a grid fits the threads by what the environment says") {
    const Node node = count_node();
    const ThreadEnv env = cala::detail::thread_env();
    const int before = omp_get_max_threads();

    cala::Grid2D grid(cala::Comm::borrow(MPI_COMM_WORLD));
    const cala::detail::ThreadFit f = cala::detail::last_thread_fit();

    const int want = env.cala_threads > 0 ? env.cala_threads
                     : env.omp_set        ? before
                                          : std::max(1, std::min(node.mask, node.cores / node.ranks));
    CHECK(everywhere(f.threads == want && omp_get_max_threads() == want));
    CHECK(everywhere(f.source == (env.cala_threads > 0 ? "CALA_THREADS" : env.omp_set ? "OMP_NUM_THREADS" : "node")));
}

TEST_CASE("unset: each rank takes the node's cores over the node's ranks") {
    const Node node = count_node();

    const auto f = fit_threads(MPI_COMM_WORLD, ThreadEnv{});

    CHECK(everywhere(f.node_ranks == node.ranks));
    CHECK(everywhere(f.node_cores == node.cores));
    CHECK(everywhere(f.mask_cores == node.mask));
    CHECK(everywhere(f.threads == std::max(1, std::min(node.mask, node.cores / node.ranks))));
    CHECK(everywhere(omp_get_max_threads() == f.threads));
    CHECK(everywhere(f.source == "node"));
    CHECK(everywhere(f.describe().find("node: " + std::to_string(node.cores) + " cores") != std::string::npos));
}

TEST_CASE("a grid over fewer ranks of the node does not raise the share") {
    const Node node = count_node();
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm alone = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &alone);

    const auto f = fit_threads(alone, ThreadEnv{});
    MPI_Comm_free(&alone);

    CHECK(everywhere(f.node_ranks == node.ranks));
    CHECK(everywhere(f.threads == std::max(1, std::min(node.mask, node.cores / node.ranks))));
}

TEST_CASE("OMP_NUM_THREADS set: left as it is; CALA_THREADS wins over it") {
    const int before = omp_get_max_threads();

    const auto omp = fit_threads(MPI_COMM_WORLD, ThreadEnv{.cala_threads = 0, .omp_set = true});
    const int after_omp = omp_get_max_threads();
    const auto cala = fit_threads(MPI_COMM_WORLD, ThreadEnv{.cala_threads = 3, .omp_set = true});
    const int after_cala = omp_get_max_threads();

    CHECK(everywhere(omp.threads == before && after_omp == before && omp.source == "OMP_NUM_THREADS"));
    CHECK(everywhere(cala.threads == 3 && after_cala == 3 && cala.source == "CALA_THREADS"));
}

TEST_CASE("the program's own omp_set_num_threads wins, for good") {
    omp_set_num_threads(5);

    const auto f = fit_threads(MPI_COMM_WORLD, ThreadEnv{.cala_threads = 3, .omp_set = false});
    cala::Grid2D grid(cala::Comm::borrow(MPI_COMM_WORLD));
    const auto g = fit_threads(MPI_COMM_WORLD, ThreadEnv{});

    CHECK(everywhere(f.threads == 5 && f.source == "program"));
    CHECK(everywhere(g.threads == 5 && g.source == "program"));
    CHECK(everywhere(omp_get_max_threads() == 5));
}

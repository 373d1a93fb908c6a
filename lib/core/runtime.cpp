// BLIS kernel selection at load time (the hook), and thread counts.

#include "cala/runtime.hpp"

#include <blis.h>
#include <mpi.h>
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cala/error.hpp"
#include "core/threads.hpp"
#include "kernels/arch.hpp"

namespace cala {

namespace {

// Runs before main, so before BLIS reads BLIS_ARCH_TYPE at its first call: the kernel set
// (CALA_BLAS_ARCH, lib/kernels/arch.hpp), in a program linked to cala and under the shim alike.
[[gnu::constructor]] void select_blis_kernels() { kernels::select_kernels_at_load(); }

}  // namespace

std::string blas_kernel_name() {
    if (const auto& e = kernels::load_choice().error; !e.empty()) throw Error(e);
    bli_init();  // idempotent; the arch query needs BLIS's kernel structure
    return bli_arch_string(bli_arch_query_id());
}

int local_threads() { return omp_get_max_threads(); }

Environment::Environment(int& argc, char**& argv) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
        MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided_);
        owns_ = true;
    } else {
        MPI_Query_thread(&provided_);
    }
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (provided_ < MPI_THREAD_FUNNELED && rank == 0)
        std::fprintf(stderr, "cala: MPI provides thread level %d < MPI_THREAD_FUNNELED; run with one thread per rank\n",
                     provided_);
    detail::fit_threads(MPI_COMM_WORLD);  // threads that fit the node (core/threads.hpp)
}

Environment::~Environment() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owns_ && !finalized) MPI_Finalize();
}

}  // namespace cala

// Thread counts and the MPI environment (the BLAS kernel set is chosen in lib/kernels/arch_load.cpp).

#include "cala/runtime.hpp"

#include <mpi.h>
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/threads.hpp"

namespace cala {

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

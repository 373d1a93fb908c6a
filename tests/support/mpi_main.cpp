// Shared main of the MPI tests: MPI_Init_thread, a world-size check, doctest, MPI_Finalize.
//
// A test registered for N ranks refuses to run under any other world size: an OpenMPI
// `mpiexec` starting N single-rank MPICH jobs would otherwise have each "pass" alone.

#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

#include "support/oversubscribed.hpp"

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char* want = std::getenv("CALA_TEST_NPROCS");
    if (want == nullptr || std::atoi(want) != size) {
        if (rank == 0)
            std::fprintf(stderr, "test registered for CALA_TEST_NPROCS=%s ranks but MPI_COMM_WORLD has %d; "
                                 "launch with mpiexec.mpich -n N\n", want ? want : "(unset)", size);
        MPI_Finalize();
        return 2;
    }
    if (cala::test::yield_in_waits() && rank == 0)
        std::fprintf(stderr, "oversubscribed: %d ranks, waits yield their core (tests/support/oversubscribed.cpp)\n", size);
    if (provided < MPI_THREAD_FUNNELED && rank == 0)
        std::fprintf(stderr, "MPI provides thread level %d < MPI_THREAD_FUNNELED\n", provided);
    doctest::Context ctx(argc, argv);
    if (rank != 0) ctx.setOption("out", "/dev/null");  // one report, from rank 0
    const int failed = ctx.run();
    int any = failed != 0;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any;
}

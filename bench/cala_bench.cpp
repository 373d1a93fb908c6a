// cala-bench: one CLI, one JSON schema. Subcommands print one JSON object per result on stdout
// and human progress on stderr, both from rank 0 only.
//
//   mpiexec.mpich -n 2 cala-bench gemm --m 4096 --n 4096 --k 4096 --grid 1x2 --compare scalapack

#include <mpi.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <sstream>

#include "cala/error.hpp"
#include "commands.hpp"

namespace {

// Every rank parses and validates the same argv, so a parse error or a cala::Error raised by
// argument checks happens on every rank: report it once and finalize. Anything else may have
// happened on one rank only, and the others could be blocked in a collective: abort.
int run(int argc, char** argv, int rank) {
    CLI::App app{"cala-bench: benchmarks of cala against local BLAS and ScaLAPACK (JSON on stdout)",
                 "cala-bench"};
    app.require_subcommand(1);
    cala::bench::add_gemm_command(app);
    cala::bench::add_stencil_command(app);
    cala::bench::add_calibrate_command(app);
    cala::bench::add_mw_command(app);
    cala::bench::add_potrf_command(app);
    cala::bench::add_device_command(app);
    cala::bench::add_model_command(app);
    try {
        app.parse(argc, argv);
        return 0;
    } catch (const CLI::ParseError& e) {
        std::ostringstream sink;
        return rank == 0 ? app.exit(e) : app.exit(e, sink, sink);
    } catch (const CLI::Error& e) {  // a subcommand asking for a given exit code
        return e.get_exit_code() != 0 ? e.get_exit_code() : 1;
    } catch (const cala::MpiError& e) {
        std::fprintf(stderr, "cala-bench: rank %d: %s\n", rank, e.what());
        MPI_Abort(MPI_COMM_WORLD, 2);
    } catch (const cala::Error& e) {
        if (rank == 0) std::fprintf(stderr, "cala-bench: error: %s\n", e.what());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cala-bench: rank %d: %s\n", rank, e.what());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    int provided = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        std::fprintf(stderr, "cala-bench: MPI_Init_thread failed\n");
        return 2;
    }
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (provided < MPI_THREAD_FUNNELED && rank == 0)
        std::fprintf(stderr, "cala-bench: warning: MPI gives thread level %d, below MPI_THREAD_FUNNELED\n",
                     provided);
    const int rc = run(argc, argv, rank);
    std::fflush(stdout);
    MPI_Finalize();
    return rc;
}

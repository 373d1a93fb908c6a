// cala-bench: one CLI, one JSON schema. Subcommands produce one JSON object per result, from
// rank 0 only: on stdout when it is not a terminal (or with --json); on a terminal, a table of
// the results, with the JSON lines in a results file whose path is printed (output.hpp).
// Progress goes to stderr when it is a terminal. Exit status 3: a result failed a check of the
// benchmark itself (an efficiency above 1, see concurrent_ref.hpp).
//
//   mpiexec.mpich -n 2 cala-bench gemm --m 4096 --n 4096 --k 4096 --grid 1x2 --compare scalapack
//   cala-bench table cala-bench-results/gemm-20261125-093000.jsonl

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>

#include "cala/error.hpp"
#include "cala/runtime.hpp"
#include "commands.hpp"
#include "core/threads.hpp"
#include "output.hpp"
#include "peak.hpp"

namespace {

// Every rank parses and validates the same argv, so a parse error or a cala::Error raised by
// argument checks happens on every rank: report it once and finalize. Anything else may have
// happened on one rank only, and the others could be blocked in a collective: abort.
// --json / --table, and the subcommand's name (the results file's name), read before CLI11
// parses: the subcommand runs inside the parse.
// Returns the subcommand's name and its --threads (0: not given).
std::pair<std::string, int> configure_from_argv(int argc, char** argv) {
    cala::bench::OutputMode mode = cala::bench::OutputMode::Auto;
    std::string command;
    int threads = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--json") mode = cala::bench::OutputMode::Json;
        else if (a == "--table") mode = cala::bench::OutputMode::Table;
        else if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
        else if (a.rfind("--threads=", 0) == 0) threads = std::atoi(a.c_str() + 10);
        else if (command.empty() && !a.empty() && a[0] != '-') command = a;
    }
    cala::bench::configure_output(mode, command.empty() ? "cala-bench" : command);
    return {command, threads};
}

int run(int argc, char** argv, int rank) {
    CLI::App app{"cala-bench: benchmarks of cala against a concurrent BLAS reference and ScaLAPACK",
                 "cala-bench"};
    app.require_subcommand(1);
    app.fallthrough();  // --json / --table may follow the subcommand
    app.add_flag("--json")->description("JSON lines on stdout even on a terminal");
    app.add_flag("--table")->description("the table and a results file even when stdout is not a terminal");
    const auto [command, threads] = configure_from_argv(argc, argv);
    cala::bench::add_gemm_command(app);
    cala::bench::add_stencil_command(app);
    cala::bench::add_calibrate_command(app);
    cala::bench::add_mw_command(app);
    cala::bench::add_potrf_command(app);
    cala::bench::add_getrf_command(app);
    cala::bench::add_geqrf_command(app);
    cala::bench::add_device_command(app);
    cala::bench::add_model_command(app);
    cala::bench::add_hetero_command(app);
    cala::bench::add_table_command(app);
    cala::bench::add_symm_command(app);
    try {
        // The machine's FMA peak on the run's ranks and threads, for every result line (peak.hpp).
        if (command != "table" && command != "model" && !command.empty())
            cala::bench::measure_machine(threads > 0 ? threads : cala::local_threads());
        app.parse(argc, argv);
        return cala::bench::finish_output();
    } catch (const CLI::ParseError& e) {
        std::ostringstream sink;
        return rank == 0 ? app.exit(e) : app.exit(e, sink, sink);
    } catch (const CLI::Error& e) {  // a subcommand asking for a given exit code
        return e.get_exit_code() != 0 ? e.get_exit_code() : 1;
    } catch (const cala::RankError& e) {  // MPI or a device failed on this rank alone: the others wait
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
    // Threads that fit the node unless the user chose (OMP_NUM_THREADS, CALA_THREADS; --threads
    // later): before any command reads omp_get_max_threads() as its default.
    cala::detail::fit_threads(MPI_COMM_WORLD);
    const int rc = run(argc, argv, rank);
    std::fflush(stdout);
    MPI_Finalize();
    return rc;
}

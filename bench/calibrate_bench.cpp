// cala-bench calibrate: the machine parameters of the cost model, measured here.
//   latency    ping-pong of one word between ranks 0 and 1 (half the round trip, median of 200)
//   bandwidth  ping-pong of a 32 MiB message (bytes / half the round trip, best of 5)
//   flop rate  the local BLAS dgemm on 2048^3 with the rank's threads (best of 3), on every rank
//              at once; the slowest rank's
// It prints one JSON object, and on stderr the environment settings that make cala's planner
// use these numbers (CALA_MODEL_LATENCY_US, CALA_MODEL_BANDWIDTH_GBS, CALA_MODEL_GFLOPS).

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "commands.hpp"
#include "output.hpp"
#include "kernels/blas.hpp"

namespace cala::bench {

namespace {

// Seconds for one message of `bytes` from 0 to 1 (half of each round trip), `reps` times.
std::vector<double> ping_pong(std::vector<char>& buf, int reps, MPI_Comm comm) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    std::vector<double> out;
    const int n = static_cast<int>(buf.size());
    for (int i = 0; i < reps + 1; ++i) {  // the first is a warm-up
        MPI_Barrier(comm);
        const double t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf.data(), n, MPI_CHAR, 1, 0, comm);
            MPI_Recv(buf.data(), n, MPI_CHAR, 1, 0, comm, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf.data(), n, MPI_CHAR, 0, 0, comm, MPI_STATUS_IGNORE);
            MPI_Send(buf.data(), n, MPI_CHAR, 0, 0, comm);
        }
        if (i > 0) out.push_back((MPI_Wtime() - t0) / 2);
    }
    return out;
}

double gemm_gflops(int threads) {
    const index_t n = 2048;
    std::vector<double> a(n * n, 0.5), b(n * n, 0.25), c(n * n, 0.0);
    omp_set_num_threads(threads);
    double best = 0;
    for (int i = 0; i < 4; ++i) {
        const double t0 = omp_get_wtime();
        kernels::gemm(Op::N, Op::N, n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
        const double t = omp_get_wtime() - t0;
        if (i > 0) best = std::max(best, 2.0 * n * n * n / t / 1e9);
    }
    return best;
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
    auto* cmd = app.add_subcommand("calibrate", "measure latency, bandwidth and flop rate for the cost model");
    cmd->callback([] {
        int rank = 0, size = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (size < 2) throw CLI::ValidationError("calibrate", "needs at least 2 ranks (mpiexec.mpich -n 2)");
        std::vector<char> small(8), large(32 << 20);
        auto lat = ping_pong(small, 200, MPI_COMM_WORLD);
        std::sort(lat.begin(), lat.end());
        const auto bw = ping_pong(large, 5, MPI_COMM_WORLD);
        const double latency_us = lat[lat.size() / 2] * 1e6;
        const double bandwidth_gbs = double(large.size()) / *std::min_element(bw.begin(), bw.end()) / 1e9;
        // Every rank at once, as in a run of cala::gemm (ranks share the memory bus and, when
        // oversubscribed, the cores); the slowest rank's rate, since the busiest rank sets the time.
        MPI_Barrier(MPI_COMM_WORLD);
        double gflops = gemm_gflops(omp_get_max_threads());
        MPI_Allreduce(MPI_IN_PLACE, &gflops, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
        if (rank != 0) return;
        nlohmann::ordered_json j = {{"bench", "calibrate"}, {"ranks", size}, {"threads", omp_get_max_threads()},
                                    {"latency_us", latency_us}, {"bandwidth_gbs", bandwidth_gbs},
                                    {"gflops_per_rank", gflops}};
        emit(j);
        std::cerr << "export CALA_MODEL_LATENCY_US=" << latency_us << " CALA_MODEL_BANDWIDTH_GBS=" << bandwidth_gbs
                  << " CALA_MODEL_GFLOPS=" << gflops << "\n";
    });
}

}  // namespace cala::bench

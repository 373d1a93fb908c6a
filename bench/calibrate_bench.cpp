// cala-bench calibrate: the machine parameters of the cost model, measured here.
//   latency    ping-pong of one word between ranks 0 and 1 (half the round trip, median of 200)
//   bandwidth  ping-pong of a 32 MiB message (bytes / half the round trip, best of 5)
//   flop rate  and packing rate: the local BLAS dgemm on 2048^3 and on a tall-skinny 65536 x 256
//              x 512 (C m x n, inner k) with the rank's threads (best of 6 each), on every rank
//              at once, the slowest rank's times; the two unknowns of time = flops / rate +
//              packed elements of op(A) / packing rate (detail::packed_a_elements: m·k for both
//              shapes) solved from the two times. The square product barely packs (2048 flops
//              per packed element), the tall one packs 4 times more per flop.
//   FMA rates  of one core, register-only loops of 256 and 512 bits (lib/kernels/fma.cpp), every
//              rank at once, rank 0's: the 512-bit FMA units, hence the kernel set cala's auto
//              choice (CALA_BLAS_ARCH) picks on this CPU.
// It prints one JSON object, and on stderr the environment settings that make cala's planner
// use these numbers (CALA_MODEL_LATENCY_US, _BANDWIDTH_GBS, _GFLOPS, _STREAM_GBS). Rank 0 writes
// them and the FMA rates to the machine cache (kernels/arch.hpp: machine_cache_path(), keyed on
// the CPU), where libcala reads the FMA rates when it loads instead of measuring them again.

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>
#include <nlohmann/json.hpp>
#include <vector>

#include "commands.hpp"
#include "common.hpp"
#include "output.hpp"
#include "gemm/plan.hpp"
#include "kernels/arch.hpp"
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

// Best of 6 seconds (after a warm-up) of the local dgemm C(m x n) = A(m x k)·B(k x n).
double gemm_seconds(index_t m, index_t n, index_t k, int threads) {
    std::vector<double> a(m * k, 0.5), b(k * n, 0.25), c(m * n, 0.0);
    omp_set_num_threads(threads);
    double best = 1e300;
    for (int i = 0; i < 7; ++i) {
        const double t0 = omp_get_wtime();
        kernels::gemm(Op::N, Op::N, m, n, k, 1.0, a.data(), m, b.data(), k, 0.0, c.data(), m);
        const double t = omp_get_wtime() - t0;
        if (i > 0) best = std::min(best, t);
    }
    return best;
}

// The load-time DGEMM probe's rates per kernel set ({} where auto does not probe; 0: a failed probe).
nlohmann::ordered_json gemm_rates(const kernels::KernelChoice& k) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (const auto& r : k.gemm) j[r.set] = r.gflops;
    return j;
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
    auto* cmd = app.add_subcommand("calibrate", "measure latency, bandwidth and flop rate for the cost model");
    cmd->callback([] {
        int rank = 0, size = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (size < 2) throw CLI::ValidationError("calibrate", std::string("needs at least 2 ranks (") + kLauncher + " -n 2)");
        std::vector<char> small(8), large(32 << 20);
        auto lat = ping_pong(small, 200, MPI_COMM_WORLD);
        std::sort(lat.begin(), lat.end());
        const auto bw = ping_pong(large, 5, MPI_COMM_WORLD);
        const double latency_us = lat[lat.size() / 2] * 1e6;
        const double bandwidth_gbs = double(large.size()) / *std::min_element(bw.begin(), bw.end()) / 1e9;
        // Every rank at once, as in a run of cala::gemm (ranks share the memory bus and, when
        // oversubscribed, the cores); the slowest rank's rate, since the busiest rank sets the time.
        struct Shape {
            index_t m, n, k;
        };
        const Shape sq{2048, 2048, 2048}, tall{65536, 256, 512};
        double t[2] = {0, 0};
        for (int i = 0; i < 2; ++i) {
            const Shape x = i == 0 ? sq : tall;
            MPI_Barrier(MPI_COMM_WORLD);
            t[i] = gemm_seconds(x.m, x.n, x.k, omp_get_max_threads());
        }
        MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        // t_i = flops_i · s_flop + packed_i · s_elem, solved for (s_flop, s_elem); a packing time
        // that comes out <= 0 (the tall product as fast per flop as the square) leaves it off.
        const auto flops = [](Shape x) { return 2.0 * x.m * x.n * x.k; };
        const auto packed = [](Shape x) { return detail::packed_a_elements(x.m, x.n, x.k); };
        const double det = flops(sq) * packed(tall) - flops(tall) * packed(sq);
        double s_flop = (t[0] * packed(tall) - t[1] * packed(sq)) / det;
        double s_elem = (flops(sq) * t[1] - flops(tall) * t[0]) / det;
        if (!(s_elem > 0) || !(s_flop > 0)) s_elem = 0, s_flop = t[0] / flops(sq);
        const double gflops = 1e-9 / s_flop, stream_gbs = s_elem > 0 ? 1e-9 * sizeof(double) / s_elem : 0.0;
        // Every rank at once, rank 0's rates: longer rounds than the load-time probe.
        const kernels::CpuInfo cpu = kernels::read_cpu_info();
        MPI_Barrier(MPI_COMM_WORLD);
        const kernels::FmaRates fma = kernels::measure_fma_rates(cpu, 0.05, 3);
        // The DGEMM probe ran at load (a child process each; no fork after MPI_Init): its cached rates.
        const auto cached_gemm = [](const std::string& set) {
            return std::atof(kernels::machine_cache_get("dgemm_gflops_core_" + set).c_str());
        };
        const kernels::KernelChoice auto_choice =
            kernels::choose_kernel_set("auto", cpu, [&fma] { return fma; }, cached_gemm);
        if (rank != 0) return;
        auto num = [](double v) { return std::to_string(v); };
        kernels::machine_cache_put({{"fma256_gflops_core", num(fma.gflops_256)}, {"fma512_gflops_core", num(fma.gflops_512)},
                                    {"blas_arch_auto", auto_choice.name.empty() ? "blis" : auto_choice.name},
                                    {"latency_us", num(latency_us)}, {"bandwidth_gbs", num(bandwidth_gbs)},
                                    {"gflops_per_rank", num(gflops)}, {"stream_gbs_per_rank", num(stream_gbs)}});
        nlohmann::ordered_json j = {{"bench", "calibrate"}, {"ranks", size}, {"threads", omp_get_max_threads()},
                                    {"latency_us", latency_us}, {"bandwidth_gbs", bandwidth_gbs},
                                    {"gflops_per_rank", gflops}, {"stream_gbs_per_rank", stream_gbs},
                                    {"square_gflops", flops(sq) / t[0] * 1e-9}, {"tall_gflops", flops(tall) / t[1] * 1e-9},
                                    {"fma256_gflops_core", fma.gflops_256}, {"fma512_gflops_core", fma.gflops_512},
                                    {"fma512_units", kernels::fma_units_512(fma)},
                                    {"blas_arch_auto", auto_choice.name}, {"blas_arch_auto_reason", auto_choice.reason},
                                    {"dgemm_gflops_core", gemm_rates(auto_choice)},
                                    {"cache", kernels::machine_cache_path()}};
        emit(j);
        std::cerr << "export CALA_MODEL_LATENCY_US=" << latency_us << " CALA_MODEL_BANDWIDTH_GBS=" << bandwidth_gbs
                  << " CALA_MODEL_GFLOPS=" << gflops << " CALA_MODEL_STREAM_GBS=" << stream_gbs << "\n";
    });
}

}  // namespace cala::bench

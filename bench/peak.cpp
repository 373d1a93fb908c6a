// The machine's FMA peak under all-core load and the kernel set, in every result line (peak.hpp).

#include "peak.hpp"

#include <mpi.h>
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cala/runtime.hpp"
#include "kernels/arch.hpp"

namespace cala::bench {

namespace {

struct Machine {
    bool measured = false, rechecked = false;
    int threads = 1;
    std::string arch, reason, method, library, library_reason;
    double peak = 0;
    std::vector<double> peaks;  // each measurement's: at the start, after the first timed runs
};

Machine& machine() {
    static Machine m;
    return m;
}

// A barrier that sleeps while it waits (ranks may share cores; MPICH's barrier spins).
void sleeping_barrier(MPI_Comm comm) {
    MPI_Request r;
    MPI_Ibarrier(comm, &r);
    for (int done = 0;;) {
        MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        if (done) return;
        const timespec ts{0, 20000};
        nanosleep(&ts, nullptr);
    }
}

// Sum over ranks and threads of the loop's GFLOP/s, every thread of every rank at once: the best of
// `samples` such sums of `seconds` each. A peak is a maximum: a sample that another process (or,
// in a VM, another guest on the same cores) slowed down is not the machine's rate.
double concurrent_rate(int bits, int threads, double seconds, int samples) {
    std::vector<double> rate(static_cast<std::size_t>(threads), 0.0);
    kernels::fma_loop_gflops(bits, 0.01);  // wakes the vector units (and the 512-bit clock level)
    double best = 0;
    for (int i = 0; i < samples; ++i) {
        sleeping_barrier(MPI_COMM_WORLD);
#pragma omp parallel num_threads(threads)
        rate[static_cast<std::size_t>(omp_get_thread_num())] = kernels::fma_loop_gflops(bits, seconds);
        double sum = 0;
        for (double r : rate) sum += r;
        MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        best = std::max(best, sum);
    }
    return best;
}

// The FMA loop's all-core rate, the higher of 256-bit and 512-bit (where the CPU has them), and how
// it was measured. Collective over MPI_COMM_WORLD.
std::pair<double, std::string> measure_peak(int threads, double seconds) {
    const kernels::CpuInfo cpu = kernels::read_cpu_info();
    int ranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    constexpr int samples = 8;
    const std::string where = " FMA loop on " + std::to_string(ranks) + " ranks x " + std::to_string(threads) +
                              " threads at once, best of " + std::to_string(samples);
    std::pair<double, std::string> p{0.0, ""};
    if (cpu.has_avx2_fma()) p = {concurrent_rate(256, threads, seconds / samples, samples), "256-bit" + where};
    if (cpu.has_avx2_fma() && cpu.avx512f) {
        const double wide = concurrent_rate(512, threads, seconds / samples, samples);
        if (wide > p.first) p = {wide, "512-bit" + where};
    }
    return p;
}

constexpr double kPeakSeconds = 0.4;  // per width, all samples

}  // namespace

void measure_machine(int threads) {
    Machine& m = machine();
    threads = std::max(threads, 1);
    m.arch = blas_kernel_name();  // a refused CALA_BLAS_ARCH throws here, on every rank
    const auto& load = kernels::load_choice();
    m.reason = load.choice.reason;
    m.library = blas_library_name();  // a refused CALA_BLAS throws here, on every rank
    m.library_reason = load.library.reason;
    m.threads = threads;
    std::tie(m.peak, m.method) = measure_peak(threads, kPeakSeconds);
    m.peaks = {m.peak};
    m.measured = true;
}

void recheck_peak() {
    Machine& m = machine();
    if (!m.measured || m.rechecked) return;
    m.rechecked = true;
    const auto [again, method] = measure_peak(m.threads, kPeakSeconds);
    m.peaks.push_back(again);
    if (again > m.peak) m.peak = again, m.method = method + ", after the first timed runs";
}

double peak_gflops() { return machine().peak; }

nlohmann::ordered_json with_machine_fields(const nlohmann::ordered_json& line) {
    const Machine& m = machine();
    if (!m.measured || !line.is_object()) return line;
    double rate = 0;
    if (line.contains("efficiency") && line.contains("reference_gflops"))
        rate = line["efficiency"].get<double>() * line["reference_gflops"].get<double>();  // the median rate
    else if (line.contains("gflops_median")) rate = line["gflops_median"].get<double>();
    else if (line.contains("gflops")) rate = line["gflops"].get<double>();
    const bool fraction = rate > 0 && m.peak > 0;
    nlohmann::ordered_json out;
    for (const auto& [k, v] : line.items()) {
        out[k] = v;
        if (k == "efficiency" && fraction) out["peak_fraction"] = rate / m.peak;
    }
    out["blas_arch"] = m.arch;
    out["blas_arch_reason"] = m.reason;
    out["blas_library"] = m.library;
    out["blas_library_reason"] = m.library_reason;
    // ScaLAPACK in this process binds the BLAS symbols of the BLIS cala links (scalapack_ref.cpp);
    // with OpenBLAS for cala, CALA_BLAS=blis gives both the same kernels.
    if (out.contains("scalapack_time_s")) out["scalapack_blas"] = "blis " + m.arch;
    out["peak_gflops"] = m.peak;
    out["peak_gflops_samples"] = m.peaks;
    out["peak_method"] = m.method;
    if (fraction && !out.contains("peak_fraction")) out["peak_fraction"] = rate / m.peak;
    return out;
}

}  // namespace cala::bench

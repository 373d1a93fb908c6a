#pragma once
// The machine's measured FMA peak and the BLAS kernel set, for every cala-bench result line.
//
// The peak is the register-only FMA loop of lib/kernels/fma.cpp on every thread of every rank of
// the run at once (the clock under all-core load, as the benchmark runs), 256-bit and, where the
// CPU has it, 512-bit; the higher sum over ranks and threads, the best of 8 samples of 50 ms (a
// sample slowed by other work is not the machine's peak). emit() adds to each line:
//   blas_arch        the kernel set BLIS runs (bli_arch_query_id), blas_arch_reason cala's why
//   blas_library     what runs cala's kernels ("blis <set>" or "openblas <core>"), blas_library_reason
//   peak_gflops      that sum (the higher of two measurements where the line has an efficiency:
//                    at the start and after the first timed runs), peak_gflops_samples both,
//                    peak_method how it was measured
//   peak_fraction    the line's rate over peak_gflops (beside "efficiency", where there is a rate)

#include <string>

#include <nlohmann/json.hpp>

namespace cala::bench {

/// Measures the peak on `threads` OpenMP threads per rank, all ranks at once, and reads the
/// kernel set. Collective over MPI_COMM_WORLD; every rank keeps the result. Throws the
/// cala::Error of a refused CALA_BLAS_ARCH, on every rank.
void measure_machine(int threads);

/// Measures the peak once more (the first call after measure_machine; later calls do nothing)
/// and keeps the higher of the two: a peak is a maximum, and one taken while the machine was
/// slowed (a VM's other vCPU away) is not the machine's. Collective over MPI_COMM_WORLD: called
/// where every rank computes a line's efficiency (add_efficiency), after the timed runs.
void recheck_peak();

/// Adds blas_arch, peak_gflops and peak_fraction to a result line (nothing before
/// measure_machine). peak_fraction goes right after "efficiency" if the line has one.
nlohmann::ordered_json with_machine_fields(const nlohmann::ordered_json& line);

/// The peak measured by measure_machine (0 before).
double peak_gflops();

}  // namespace cala::bench

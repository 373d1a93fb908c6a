#pragma once
// The machine's measured FMA peak and the BLAS kernel set, for every cala-bench result line.
//
// The peak is the register-only FMA loop of lib/kernels/fma.cpp on every thread of every rank of
// the run at once (the clock under all-core load, as the benchmark runs), 256-bit and, where the
// CPU has it, 512-bit; the higher sum over ranks and threads, the best of 8 samples of 50 ms (a
// sample slowed by other work is not the machine's peak). emit() adds to each line:
//   blas_arch        the kernel set BLIS runs (bli_arch_query_id), blas_arch_reason cala's why
//   blas_library     what runs cala's kernels ("blis <set>" or "openblas <core>"), blas_library_reason
//   peak_gflops      that sum, peak_method how it was measured
//   peak_fraction    the line's rate over peak_gflops (beside "efficiency", where there is a rate)

#include <string>

#include <nlohmann/json.hpp>

namespace cala::bench {

/// Measures the peak on `threads` OpenMP threads per rank, all ranks at once, and reads the
/// kernel set. Collective over MPI_COMM_WORLD; every rank keeps the result. Throws the
/// cala::Error of a refused CALA_BLAS_ARCH, on every rank.
void measure_machine(int threads, double seconds = 0.4);

/// Adds blas_arch, peak_gflops and peak_fraction to a result line (nothing before
/// measure_machine). peak_fraction goes right after "efficiency" if the line has one.
nlohmann::ordered_json with_machine_fields(const nlohmann::ordered_json& line);

/// The peak measured by measure_machine (0 before).
double peak_gflops();

}  // namespace cala::bench

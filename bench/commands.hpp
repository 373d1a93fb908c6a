#pragma once
// The subcommands of cala-bench; each adds itself to the CLI and runs when selected.
// Every subcommand hands one JSON object per result to output.hpp's emit (stdout or the table).

#include <CLI/CLI.hpp>

namespace cala::bench {

void add_gemm_command(CLI::App& app);     // bench/gemm_bench.cpp
void add_stencil_command(CLI::App& app);  // bench/stencil_bench.cpp
void add_calibrate_command(CLI::App& app);  // bench/calibrate_bench.cpp
void add_mw_command(CLI::App& app);         // bench/mw_bench.cpp
void add_potrf_command(CLI::App& app);      // bench/potrf_bench.cpp
void add_device_command(CLI::App& app);     // bench/device_bench.cpp
void add_model_command(CLI::App& app);      // bench/model_bench.cpp
void add_hetero_command(CLI::App& app);     // bench/hetero_bench.cpp
void add_table_command(CLI::App& app);      // bench/table.cpp: the table of saved JSON lines
void add_symm_command(CLI::App& app);       // bench/symm_bench.cpp
void add_getrf_command(CLI::App& app);      // bench/getrf_bench.cpp
void add_geqrf_command(CLI::App& app);      // bench/geqrf_bench.cpp

}  // namespace cala::bench

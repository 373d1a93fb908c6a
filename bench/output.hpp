#pragma once
// Where cala-bench's results go (rank 0 only; other ranks' calls do nothing).
//
//   stdout not a terminal, or --json:  one JSON object per result on stdout (what scripts and
//                                      scripts/plots read), as always;
//   stdout a terminal (or --table):    a table, one row per result, printed at the end, and the
//                                      JSON lines written to ./cala-bench-results/<command>-
//                                      <UTC time>.jsonl, whose path is printed under the table.
// Progress goes to stderr only when stderr is a terminal; errors go to stderr always.
//
// Under mpiexec.mpich a rank's stdout and stderr are pipes to the launcher, so "a terminal" means:
// the rank's own stream is one, or the stream of the launcher it was started by (hydra_pmi_proxy,
// then mpiexec) is one; `mpiexec ... | tee` or `> file` is therefore not a terminal.

#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cala::bench {

enum class OutputMode { Auto, Json, Table };

/// Set once, before the command runs (--json / --table); `command` names the results file.
void configure_output(OutputMode mode, const std::string& command);

/// One result: a JSON line on stdout, or a row of the table and a line of the results file; with
/// the kernel set and the machine's FMA peak (peak.hpp) once measure_machine has run.
void emit(const nlohmann::ordered_json& line);

/// A result that fails a check of the benchmark itself (an efficiency above 1): the message goes
/// to stderr now and cala-bench exits with status 3 after the command. The caller also puts it
/// in the line's "error" field.
void report_error(const std::string& bench, const std::string& message);

/// Progress on stderr when it is a terminal (one line, rewritten in place); nothing otherwise.
void progress(const std::string& bench, const std::string& what);

/// After the command: the table and the results file's path (table mode). Returns the exit
/// status the results ask for: 3 if report_error was called, else 0.
int finish_output();

/// The table of a list of results (any mix of benches), as finish_output prints it.
void print_table(std::ostream& out, const std::vector<nlohmann::ordered_json>& lines);

/// True if file descriptor fd (1 or 2) reaches a terminal, directly or through mpiexec.
bool reaches_terminal(int fd);

}  // namespace cala::bench

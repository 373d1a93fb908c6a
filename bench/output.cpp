// cala-bench's output modes (see output.hpp): JSON lines on stdout, or a table on a terminal with
// the JSON lines in a results file; progress on a terminal only.

#include "output.hpp"

#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "peak.hpp"

namespace cala::bench {

namespace {

struct State {
    OutputMode mode = OutputMode::Auto;
    std::string command = "cala-bench";
    bool table = false;        // decided on rank 0 by configure_output
    bool progress_on = false;  // stderr reaches a terminal
    bool progress_log = false;  // CALA_BENCH_PROGRESS: timestamped progress lines
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    bool progress_line = false;  // a progress line is on the screen (to be cleared)
    bool failed = false;
    std::vector<nlohmann::ordered_json> lines;
    std::string path;
    std::ofstream file;
};

State& state() {
    static State s;
    return s;
}

bool is_rank0() {
    int init = 0, r = 0;
    MPI_Initialized(&init);
    if (init) MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r == 0;
}

std::string read_link(const std::string& p) {
    std::error_code ec;
    const auto t = std::filesystem::read_symlink(p, ec);
    return ec ? std::string() : t.string();
}

std::string comm_of(long pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/comm");
    std::string s;
    std::getline(f, s);
    return s;
}

long parent_of(long pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const auto close = all.rfind(')');  // "pid (comm) state ppid ..."
    if (close == std::string::npos) return -1;
    char st = 0;
    long ppid = -1;
    if (std::sscanf(all.c_str() + close + 1, " %c %ld", &st, &ppid) != 2) return -1;
    return ppid;
}

bool is_tty_path(const std::string& p) { return p.rfind("/dev/pts/", 0) == 0 || p.rfind("/dev/tty", 0) == 0; }

// A results file name that does not exist yet: <dir>/<command>-<UTC yyyymmdd-HHMMSS>[-i].jsonl.
std::string new_results_path(const std::string& command) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path dir = "cala-bench-results";
    fs::create_directories(dir, ec);
    if (ec || access(dir.c_str(), W_OK) != 0) {
        const char* tmp = std::getenv("TMPDIR");
        dir = fs::path(tmp ? tmp : "/tmp") / "cala-bench-results";
        fs::create_directories(dir, ec);
    }
    const std::time_t now = std::time(nullptr);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::gmtime(&now));
    fs::path p = dir / (command + "-" + stamp + ".jsonl");
    for (int i = 2; fs::exists(p); ++i) p = dir / (command + "-" + stamp + "-" + std::to_string(i) + ".jsonl");
    return p.string();
}

void clear_progress() {
    State& s = state();
    if (!s.progress_line) return;
    std::fputs("\r\033[K", stderr);
    s.progress_line = false;
}

}  // namespace

bool reaches_terminal(int fd) {
    if (isatty(fd)) return true;
    // Through the launcher: hydra_pmi_proxy, then mpiexec.hydra / mpiexec.mpich / mpiexec (MPICH);
    // orterun (what mpiexec.openmpi runs as) or orted (Open MPI).
    const std::string self = read_link("/proc/self/fd/" + std::to_string(fd));
    if (self.rfind("pipe:", 0) != 0) return false;
    long pid = getppid();
    for (int depth = 0; depth < 3 && pid > 1; ++depth) {
        const std::string name = comm_of(pid);
        const bool launcher = name.rfind("hydra_pmi_prox", 0) == 0 || name.rfind("mpiexec", 0) == 0 ||
                              name.rfind("mpirun", 0) == 0 || name.rfind("orterun", 0) == 0 ||
                              name.rfind("orted", 0) == 0 || name.rfind("prterun", 0) == 0;
        if (!launcher) return false;
        const std::string target = read_link("/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd));
        if (is_tty_path(target)) return true;
        if (target.rfind("pipe:", 0) != 0) return false;  // a file: not a terminal
        pid = parent_of(pid);
    }
    return false;
}

void configure_output(OutputMode mode, const std::string& command) {
    State& s = state();
    s.mode = mode;
    s.command = command;
    if (!is_rank0()) return;
    s.table = mode == OutputMode::Table || (mode == OutputMode::Auto && reaches_terminal(STDOUT_FILENO));
    s.progress_on = reaches_terminal(STDERR_FILENO);
    // CALA_BENCH_PROGRESS=1: one timestamped line per step, for logs (a GPU run's phases).
    const char* env = std::getenv("CALA_BENCH_PROGRESS");
    s.progress_log = env != nullptr && *env != '\0' && *env != '0';
}

void emit(const nlohmann::ordered_json& result) {
    State& s = state();
    if (!is_rank0()) return;
    const nlohmann::ordered_json line = with_machine_fields(result);  // blas_arch, peak_gflops, peak_fraction
    if (!s.table) {
        clear_progress();
        std::cout << line.dump() << std::endl;
        return;
    }
    if (!s.file.is_open()) {
        s.path = new_results_path(s.command);
        s.file.open(s.path);
        if (!s.file) std::fprintf(stderr, "cala-bench: cannot write %s; the JSON lines follow the table\n", s.path.c_str());
    }
    if (s.file) s.file << line.dump() << std::endl;
    s.lines.push_back(line);
}

void report_error(const std::string& bench, const std::string& message) {
    State& s = state();
    s.failed = true;
    if (!is_rank0()) return;
    clear_progress();
    std::fprintf(stderr, "cala-bench %s: ERROR: %s\n", bench.c_str(), message.c_str());
}

void progress(const std::string& bench, const std::string& what) {
    State& s = state();
    if (!is_rank0() || !(s.progress_on || s.progress_log)) return;
    if (s.progress_log) {
        std::fprintf(stderr, "cala-bench %s: [%.3f s] %s\n", bench.c_str(), std::chrono::duration<double>(std::chrono::steady_clock::now() - s.started).count(), what.c_str());
        return;
    }
    std::fprintf(stderr, "\r\033[Kcala-bench %s: %s", bench.c_str(), what.c_str());
    std::fflush(stderr);
    s.progress_line = true;
}

int finish_output() {
    State& s = state();
    if (is_rank0()) {
        clear_progress();
        if (s.table && !s.lines.empty()) {
            print_table(std::cout, s.lines);
            if (s.file) std::cout << "JSON lines: " << s.path << "\n";
            else
                for (const auto& l : s.lines) std::cout << l.dump() << "\n";
            std::cout << std::flush;
        }
    }
    // Every rank exits with the same status (an error is found from data every rank has).
    int failed = s.failed ? 1 : 0;
    int init = 0;
    MPI_Initialized(&init);
    if (init) MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return failed ? 3 : 0;
}

}  // namespace cala::bench

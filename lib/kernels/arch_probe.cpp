// The DGEMM probe of a kernel set (or of OpenBLAS): one core's rate on a product of the shape
// cala's updates run, measured in a child process, because BLIS fixes its kernel set at its first
// call (BLIS_ARCH_TYPE, read once) and this process's BLIS must not have started yet (nor
// OpenBLAS be loaded: it may start threads).
//
//   parent (libcala's constructor, before any BLIS call)        child (fork)
//     pipe, fork  ---------------------------------------------> BLIS_ARCH_TYPE=<set> (or dlopen
//                                                                 OpenBLAS), one thread
//                                                                 2048 x 2048 x 256 and 8192 x 256 x 256,
//                                                                 a warm-up + 3 runs
//     read the median GF/s (or nothing: 0) <--------------------- write it, _exit (no atexit, no MPI)
//     waitpid
//
// Before MPI_Init and before any thread is started, fork is safe; the child never returns to
// the program. A child that fails (an exception, a crash: no core file, nothing on stderr) or is
// killed after 10 s reads as 0 (cached: the FMA rule from then on); a caller with more than one
// thread does not fork at all and reads -1 (not cached).

#include <blis.h>
#include <omp.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "kernels/arch.hpp"
#include "kernels/openblas.hpp"

namespace cala::kernels {

namespace {

constexpr int kProbeTimeoutMs = 10000;  // a probe takes about 0.3 s

using Rates = std::array<double, 2>;
using GemmFn = std::function<void(long, long, long, double*, long, double*, long, double*, long)>;

// The probe's products on each of `gemms` (one core), their runs interleaved (a warm-up of each,
// then a run of each in turn): GF/s of the median of each one's timed runs, 0 for one whose
// product is not finite, or that is null. A: max(m, panel_m) x k; B: k x n; C: m x n, then
// panel_m x k (each at its own leading dimension). gemm(m, n, k, a, lda, b, ldb, c, ldc) computes
// C := A·B.
Rates time_products(const ProbeShape& s, const std::array<GemmFn, 2>& gemms) {
    const long rows = std::max(s.m, s.panel_m);
    std::vector<double> a(static_cast<std::size_t>(rows * s.k)), b(static_cast<std::size_t>(s.k * s.n)),
        c(static_cast<std::size_t>(std::max(s.m * s.n, s.panel_m * s.k)), 0.0);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = 1.0 / static_cast<double>(1 + i % 97);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = 1.0 / static_cast<double>(1 + i % 89);
    const double flops = 2.0 * static_cast<double>(s.m * s.n * s.k + s.panel_m * s.k * s.k);
    std::array<std::vector<double>, 2> t;
    Rates rate{0, 0};
    for (int r = 0; r < 1 + s.runs; ++r)
        for (std::size_t g = 0; g < gemms.size(); ++g) {
            if (!gemms[g]) continue;
            c[0] = 0;
            const auto t0 = std::chrono::steady_clock::now();
            gemms[g](s.m, s.n, s.k, a.data(), rows, b.data(), s.k, c.data(), s.m);
            if (s.panel_m > 0) gemms[g](s.panel_m, s.k, s.k, a.data(), rows, b.data(), s.k, c.data(), s.panel_m);  // a panel's update
            const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (r > 0) t[g].push_back(dt);  // the first run pays for the library's start and its packing buffers
            if (r == s.runs) {
                std::sort(t[g].begin(), t[g].end());
                const double median = t[g][t[g].size() / 2];
                rate[g] = median > 0 && c[0] == c[0] ? flops / median * 1e-9 : 0;
            }
        }
    return rate;
}

// In the child: BLIS runs `id` (null if it cannot: the probe of that set is void).
GemmFn blis_gemm(int id) {
    setenv("BLIS_ARCH_TYPE", std::to_string(id).c_str(), 1);
    bli_init();  // BLIS 0.9 aborts on an arch query before its init when BLIS_ARCH_TYPE is set
    bli_thread_set_num_threads(1);
    if (static_cast<int>(bli_arch_query_id()) != id) return {};
    return [](long m, long n, long k, double* a, long lda, double* b, long ldb, double* c, long ldc) {
        double one = 1, zero = 0;
        bli_dgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k, &one, a, 1, lda, b, 1, ldb, &zero, c, 1, ldc);
    };
}

// In the child: the OpenBLAS at `path` on one thread (null if it does not load).
GemmFn openblas_gemm(const std::string& path) {
    setenv("OPENBLAS_NUM_THREADS", "1", 1);  // read when it loads: no thread pool
    setenv("OMP_NUM_THREADS", "1", 1);
    const OpenBlas* ob = load_openblas(path);  // (loaded before the fork, it is the parent's copy)
    if (ob == nullptr) return {};
    if (ob->parallel == 2) omp_set_num_threads(1);  // its OpenMP build follows the caller's count
    else if (ob->get_num_threads() != 1) return {};  // a pool the fork did not copy: no call
    return [ob](long m, long n, long k, double* a, long lda, double* b, long ldb, double* c, long ldc) {
        ob->dgemm(cblas::col_major, cblas::no_trans, cblas::no_trans, int(m), int(n), int(k), 1.0, a, int(lda), b,
                  int(ldb), 0.0, c, int(ldc));
    };
}

// In the child: the OpenBLAS at `path` (the parent's copy where it holds one: no loader lock, so
// not load_openblas) on one thread, switched to each of `cores` in turn and timed there.
Rates time_openblas_cores(const std::string& path, const std::array<std::string, 2>& cores, const ProbeShape& shape) {
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    setenv("OMP_NUM_THREADS", "1", 1);
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (h == nullptr) h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) return {0, 0};
    using Dgemm = void(int, int, int, int, int, int, double, const double*, int, const double*, int, double, double*,
                       int);
    auto* dgemm = reinterpret_cast<Dgemm*>(dlsym(h, "cblas_dgemm"));
    auto* quit = reinterpret_cast<void (*)()>(dlsym(h, "gotoblas_dynamic_quit"));
    auto* init = reinterpret_cast<void (*)()>(dlsym(h, "gotoblas_dynamic_init"));
    auto* corename = reinterpret_cast<const char* (*)()>(dlsym(h, "openblas_get_corename"));
    auto* parallel = reinterpret_cast<int (*)()>(dlsym(h, "openblas_get_parallel"));
    auto* threads = reinterpret_cast<int (*)()>(dlsym(h, "openblas_get_num_threads"));
    if (!dgemm || !quit || !init || !corename || !parallel || !threads) return {0, 0};
    if (parallel() == 2) omp_set_num_threads(1);  // its OpenMP build follows the caller's count
    else if (threads() != 1) return {0, 0};       // a pool the fork did not copy: no call
    const GemmFn fn = [dgemm](long m, long n, long k, double* a, long lda, double* b, long ldb, double* c, long ldc) {
        dgemm(102, 111, 111, int(m), int(n), int(k), 1.0, a, int(lda), b, int(ldb), 0.0, c, int(ldc));
    };
    auto lower = [](std::string x) {
        for (char& ch : x) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        return x;
    };
    Rates r{0, 0};
    for (std::size_t i = 0; i < cores.size(); ++i) {
        setenv("OPENBLAS_CORETYPE", cores[i].c_str(), 1);
        quit();
        init();
        if (lower(corename()) == lower(cores[i])) r[i] = time_products(shape, {fn, GemmFn{}})[0];
    }
    return r;
}

// The child's whole life: quiet (no core file, nothing on the program's stderr), measure, write,
// leave without running anything of the program's (no atexit, no destructors, no MPI).
[[noreturn]] void child(const std::function<Rates()>& measure, int out) {
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    if (const int null = open("/dev/null", O_WRONLY); null >= 0) dup2(null, STDERR_FILENO), close(null);
    Rates r{0, 0};
    try {
        r = measure();
    } catch (...) {
        _exit(1);
    }
    const ssize_t w = write(out, r.data(), sizeof r);
    _exit(w == static_cast<ssize_t>(sizeof r) ? 0 : 1);
}

// Threads of this process (/proc/self/task); 0 if unknown.
int thread_count() {
    std::error_code ec;
    int n = 0;
    for (auto it = std::filesystem::directory_iterator("/proc/self/task", ec); !ec && it != std::filesystem::end(it);
         it.increment(ec))
        ++n;
    return ec ? 0 : n;
}

bool valid(const ProbeShape& s) {
    return s.m > 0 && s.n > 0 && s.k > 0 && s.n >= s.k && s.panel_m >= 0 && s.runs >= 1;
}

// `measure` in a child process: its results, 0 where it failed or took too long, -1 if this process
// has more than one thread (no fork).
Rates in_child(const std::function<Rates()>& measure) {
    // Only a process of one thread forks: a lock another thread held at the fork would stay held
    // in the child forever (a library loaded by dlopen into a threaded program: the FMA rule).
    if (thread_count() != 1) return {-1, -1};
    int fd[2];
    if (pipe(fd) != 0) return {0, 0};
    const pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]), close(fd[1]);
        return {0, 0};
    }
    if (pid == 0) {
        close(fd[0]);
        child(measure, fd[1]);
    }
    close(fd[1]);
    // A child that does not answer within the limit is killed (a stalled probe must not stall the
    // program's start); a signal that interrupts the wait does not extend it.
    Rates r{0, 0};
    ssize_t got = 0;
    pollfd pfd{fd[0], POLLIN, 0};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kProbeTimeoutMs);
    int ready = 0;
    do {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        ready = ::poll(&pfd, 1, static_cast<int>(std::max<std::int64_t>(0, left.count())));
    } while (ready < 0 && errno == EINTR);
    if (ready > 0) {
        do got = read(fd[0], r.data(), sizeof r);
        while (got < 0 && errno == EINTR);
    } else {
        kill(pid, SIGKILL);
    }
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const bool ok = got == static_cast<ssize_t>(sizeof r) && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    return ok ? Rates{std::max(r[0], 0.0), std::max(r[1], 0.0)} : Rates{0, 0};
}

}  // namespace

bool single_threaded() { return thread_count() == 1; }

double probe_gemm_gflops(const std::string& set, const ProbeShape& shape) {
    const int id = kernel_set_id(set);
    if (id < 0 || !kernel_set_runs_on(set, read_cpu_info()) || !valid(shape)) return 0;
    return in_child([id, &shape] { return time_products(shape, {blis_gemm(id), GemmFn{}}); })[0];
}

double probe_openblas_gflops(const std::string& path, const ProbeShape& shape) {
    if (path.empty() || !valid(shape)) return 0;
    return in_child([&path, &shape] { return time_products(shape, {GemmFn{}, openblas_gemm(path)}); })[1];
}

std::array<double, 2> probe_openblas_cores_gflops(const std::string& path, const std::array<std::string, 2>& cores,
                                                  const ProbeShape& shape) {
    if (path.empty() || !valid(shape)) return {0, 0};
    return in_child([&] { return time_openblas_cores(path, cores, shape); });
}

std::array<double, 2> probe_libraries_gflops(const std::string& set, const std::string& path, const ProbeShape& shape) {
    const int id = kernel_set_id(set);
    if (!valid(shape)) return {0, 0};
    const bool blis_ok = id >= 0 && kernel_set_runs_on(set, read_cpu_info());
    return in_child([&] { return time_products(shape, {blis_ok ? blis_gemm(id) : GemmFn{}, openblas_gemm(path)}); });
}

}  // namespace cala::kernels

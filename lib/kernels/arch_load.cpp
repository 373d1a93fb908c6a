// The kernel choice made when libcala loads, and the machine cache that keeps the measured FMA
// rates, the DGEMM probe's rates per kernel set (and cala-bench calibrate's numbers) per CPU.

#include <blis.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>

#include "cala/error.hpp"
#include "cala/runtime.hpp"
#include "kernels/arch.hpp"
#include "kernels/openblas.hpp"

namespace cala::kernels {

namespace {

LoadChoice& state() {
    static LoadChoice s;
    return s;
}

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

bool all_digits(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

// FNV-1a, 64 bits, as 16 hex digits.
std::string hash_hex(const std::string& s) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char ch : s) h = (h ^ ch) * 0x100000001b3ull;
    char b[17];
    std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h));
    return b;
}

std::map<std::string, std::string> read_cache(const std::string& path) {
    std::map<std::string, std::string> kv;
    std::ifstream f(path);
    for (std::string line; std::getline(f, line);)
        if (const auto eq = line.find('='); eq != std::string::npos && line[0] != '#')
            kv[line.substr(0, eq)] = line.substr(eq + 1);
    return kv;
}

// The FMA rates of this CPU: from the cache, else measured (and cached).
FmaRates cached_rates(const CpuInfo& cpu) {
    const std::string r256 = machine_cache_get("fma256_gflops_core"), r512 = machine_cache_get("fma512_gflops_core");
    if (!r256.empty() && !r512.empty()) return {std::atof(r256.c_str()), std::atof(r512.c_str())};
    const FmaRates r = measure_fma_rates(cpu);
    machine_cache_put({{"fma256_gflops_core", std::to_string(r.gflops_256)},
                       {"fma512_gflops_core", std::to_string(r.gflops_512)}});
    return r;
}

// The lock on this machine's cache file while the DGEMM probe runs: the first process of a
// node to need the rates probes both sets and writes them before it lets go, so the ranks that
// start with it wait for its numbers and all choose the same set.
struct ProbeLock {
    int fd = -1;
    ProbeLock() = default;
    ProbeLock(const ProbeLock&) = delete;
    ProbeLock& operator=(const ProbeLock&) = delete;
    ~ProbeLock() {
        if (fd >= 0) flock(fd, LOCK_UN), close(fd);
    }
};

// A probed rate under `key`: from the cache, else `probe()` under the lock (and cached, a failure
// as 0: the FMA rule, or BLIS, from then on). Where there is no cache to keep it in, no probe:
// every process would pay for it (0.3 s a probe).
double cached_rate(const std::string& key, ProbeLock& lock, const std::function<double()>& probe) {
    if (const std::string v = machine_cache_get(key); !v.empty()) return std::atof(v.c_str());
    if (!machine_cache_writable()) return 0;
    if (lock.fd < 0) {
        lock.fd = open((machine_cache_path() + ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
        if (lock.fd >= 0) {
            while (flock(lock.fd, LOCK_EX) != 0 && errno == EINTR) {
            }
        }
        // Another process may have probed while this one waited.
        if (const std::string v = machine_cache_get(key); !v.empty()) return std::atof(v.c_str());
    }
    const double r = probe();
    if (r >= 0) machine_cache_put({{key, std::to_string(r)}});
    return std::max(r, 0.0);
}

// One core's DGEMM rate with kernel set `set`.
double cached_gemm_rate(const std::string& set, ProbeLock& lock) {
    return cached_rate("dgemm_gflops_core_" + set, lock, [&set] { return probe_gemm_gflops(set); });
}

// The library probe's two rates for BLIS on `set` and the OpenBLAS at `path` (0: not there), from
// the cache, else measured together under the lock (and cached).
std::array<double, 2> cached_library_rates(const std::string& set, const std::string& path, ProbeLock& lock) {
    const auto keys = library_probe_keys(set, path);
    std::array<double, 2> r{-1, -1};
    // The first key's probe measures and caches both; the second then reads the cache.
    r[0] = cached_rate(keys[0], lock, [&] {
        ProbeShape shape;
        shape.runs = 5;  // the two libraries often lie within a few percent: more runs, a steadier median
        const auto both = probe_libraries_gflops(set, path, shape);
        if (both[1] >= 0) machine_cache_put({{keys[1], std::to_string(both[1])}});
        return both[0];
    });
    r[1] = cached_rate(keys[1], lock, [&] { return probe_openblas_gflops(path); });
    return r;
}

// The OpenBLAS at `path` (loaded: `ob`) on AVX2 kernels on a CPU with AVX-512: the candidate core
// measured beside its own (one child, cached under the lock), and run from now on where it is
// faster by more than 3% (for the whole process, as the pre-AVX2 rule does). Not where the user
// set OPENBLAS_CORETYPE or CALA_OPENBLAS_CORETYPE names a core or keeps OpenBLAS's own.
void upgrade_openblas_core(const std::string& path, const OpenBlas* ob, const CpuInfo& cpu, ProbeLock& lock) {
    // (Another thread may be in a BLAS call: a libcala loaded into a threaded program.)
    if (ob == nullptr || !env("OPENBLAS_CORETYPE").empty() || !single_threaded()) return;
    if (const std::string s = env("CALA_OPENBLAS_CORETYPE"); !s.empty() && s != "auto") return;
    const std::string own = ob->core, candidate = openblas_core_candidate(own, cpu);
    if (candidate.empty()) return;
    const auto keys = openblas_core_keys(path, own, candidate);
    // The first key's probe measures both and caches the second; the second then reads the cache.
    const double own_rate = cached_rate(keys[0], lock, [&] {
        const auto both = probe_openblas_cores_gflops(path, {own, candidate});
        if (both[1] >= 0) machine_cache_put({{keys[1], std::to_string(both[1])}});
        return both[0];
    });
    const double cand_rate =
        cached_rate(keys[1], lock, [&] { return probe_openblas_cores_gflops(path, {own, candidate})[1]; });
    char rates[160];
    std::snprintf(rates, sizeof rates, "DGEMM %s %.1f, %s %.1f GF/s a core", own.c_str(), own_rate, candidate.c_str(),
                  cand_rate);
    if (openblas_candidate_wins(own_rate, cand_rate)) switch_openblas_core(path, candidate, rates);
    else note_openblas_core_rates(path, rates);
}

bool verbose_here() {
    const std::string v = env("CALA_VERBOSE");
    if (v.empty() || v == "0") return false;
    const std::string rank = env("PMI_RANK").empty() ? env("OMPI_COMM_WORLD_RANK") : env("PMI_RANK");
    return rank.empty() || rank == "0";
}

}  // namespace

std::string machine_cache_path() {
    std::string dir = env("CALA_CACHE_DIR");
    if (dir.empty() && !env("XDG_CACHE_HOME").empty()) dir = env("XDG_CACHE_HOME") + "/cala";
    if (dir.empty() && !env("HOME").empty()) dir = env("HOME") + "/.cache/cala";
    if (dir.empty()) return "";
    static const std::string key = [] {
        const CpuInfo c = read_cpu_info();
        unsigned a = 0, b = 0, cx = 0, d = 0;
        __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(cx), "=d"(d) : "a"(1), "c"(0));
        std::string id = c.brand + "|" + std::to_string(static_cast<int>(c.vendor)) + "|" + std::to_string(a) + "|";
        for (bool f : {c.ssse3, c.avx, c.fma3, c.fma4, c.avx2, c.avx512f, c.avx512dq, c.avx512cd, c.avx512bw,
                       c.avx512vl, c.avx512er})
            id += f ? '1' : '0';
        return hash_hex(id + "|" + bli_info_get_version_str());
    }();
    return dir + "/machine-" + key + ".txt";
}

std::string machine_cache_get(const std::string& key) {
    const std::string path = machine_cache_path();
    if (path.empty()) return "";
    const auto kv = read_cache(path);
    const auto it = kv.find(key);
    return it == kv.end() ? "" : it->second;
}

bool machine_cache_writable() {
    const std::string path = machine_cache_path();
    if (path.empty()) return false;
    const std::string dir = path.substr(0, path.rfind('/'));
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    return !ec && access(dir.c_str(), W_OK) == 0;
}

void machine_cache_put(const std::vector<std::pair<std::string, std::string>>& values) {
    if (!machine_cache_writable()) return;
    const std::string path = machine_cache_path();
    auto kv = read_cache(path);
    for (const auto& [k, v] : values) kv[k] = v;
    const std::string tmp = path + ".tmp." + std::to_string(getpid());
    {
        std::ofstream f(tmp);
        if (!f) return;
        f << "# cala's measurements on this CPU (" << read_cpu_info().brand << ", BLIS " << bli_info_get_version_str()
          << "); delete to measure again\n";
        for (const auto& [k, v] : kv) f << k << '=' << v << '\n';
        if (!f) return;
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) std::remove(tmp.c_str());
}

std::array<std::string, 2> library_probe_keys(const std::string& set, const std::string& path) {
    // The core the process's OpenBLAS runs joins the key (a rate measured on other kernels, as
    // before cala corrected them, is not this one's); one the probe's child loads itself is keyed
    // on its path alone (its core follows from the CPU and the same rule).
    const OpenBlas* held = held_openblas(path);
    const std::string lib = "openblas_" + hash_hex(held != nullptr ? path + "|" + held->core : path).substr(0, 8);
    return {"dgemm_gflops_core_" + set + "_beside_" + lib, "dgemm_gflops_core_" + lib};
}

std::array<std::string, 2> openblas_core_keys(const std::string& path, const std::string& own,
                                              const std::string& candidate) {
    const std::string lib = "openblas_" + hash_hex(path + "|" + own).substr(0, 8);
    return {"dgemm_gflops_core_" + lib + "_core_" + own, "dgemm_gflops_core_" + lib + "_core_" + candidate};
}

const LoadChoice& load_choice() { return state(); }

void select_kernels_at_load() {
    LoadChoice& s = state();
    const CpuInfo cpu = read_cpu_info();
    std::string blis_env = env("BLIS_ARCH_TYPE");
    // BLIS 0.9 reads BLIS_ARCH_TYPE as a number and a name as 0 (skx, an illegal instruction
    // where there is no AVX-512): a name BLIS knows becomes its number.
    if (!blis_env.empty() && !all_digits(blis_env) && kernel_set_id(blis_env) >= 0) {
        blis_env = std::to_string(kernel_set_id(blis_env));
        setenv("BLIS_ARCH_TYPE", blis_env.c_str(), 1);
    }
    // The OpenBLAS the program holds (libcala's LAPACK, ScaLAPACK's BLAS and LAPACK may be it), on
    // the kernels it should run (load_openblas: its core selection again where its detection fell
    // back to kernels without AVX2), before any probe forks: the program's own calls, cala's LAPACK
    // tile factorizations and the probe all see the same.
    const OpenBlas* held = held_openblas(openblas_path());
    ProbeLock lock;  // held, once taken, until every rate the choices need is in the cache
    upgrade_openblas_core(openblas_path(), held, cpu, lock);
    try {
        s.choice = choose_kernel_set(env("CALA_BLAS_ARCH"), cpu, [&cpu] { return cached_rates(cpu); },
                                     [&lock](const std::string& set) { return cached_gemm_rate(set, lock); });
    } catch (const Error& e) {
        s.error = e.what();
        s.choice = KernelChoice{};
        s.choice.setting = env("CALA_BLAS_ARCH");
        s.choice.reason = "CALA_BLAS_ARCH refused: BLIS's own choice";
        std::fprintf(stderr, "cala: error: %s; BLIS's own choice stands\n", e.what());
    }
    if (!s.choice.name.empty()) {
        blis_env = std::to_string(kernel_set_id(s.choice.name));
        setenv("BLIS_ARCH_TYPE", blis_env.c_str(), 1);
    }
    s.blis_arch_type = blis_env;
    const std::string path = openblas_path();
    try {
        std::array<double, 2> rates{-1, -1};  // measured together, on first need
        const auto measured = [&]() -> const std::array<double, 2>& {
            if (rates[0] < 0) rates = cached_library_rates(s.choice.name, path, lock);
            return rates;
        };
        s.library = choose_blas_library(env("CALA_BLAS"), s.choice, [&] { return measured()[1]; },
                                        [&](const std::string&) { return measured()[0]; });
    } catch (const Error& e) {
        s.library_error = e.what();
        s.library = LibraryChoice{};
        s.library.setting = env("CALA_BLAS");
        s.library.reason = "CALA_BLAS refused: BLIS";
        std::fprintf(stderr, "cala: error: %s; BLIS runs\n", e.what());
    }
    if (s.library.openblas) {
        std::string why;
        if (const OpenBlas* ob = load_openblas(path, &why)) {
            set_active_openblas(ob);
            if (ob != held) upgrade_openblas_core(path, ob, cpu, lock);
            if (ob != held && !ob->core_rates.empty())
                s.library.reason += "; its own detection picked " + (ob->own_core.empty() ? ob->core : ob->own_core) +
                                    " (AVX2), " + ob->core_rates + ": OPENBLAS_CORETYPE=" + ob->core;
            else if (!ob->own_core.empty() && ob != held)
                s.library.reason += "; its own detection picked " + ob->own_core + " (no AVX2): OPENBLAS_CORETYPE=" + ob->core;
        } else {  // auto probed it in a child, so only a forced choice can get here as a rule
            s.library.openblas = false;
            s.library.reason += "; " + path + " did not load: BLIS";
            if (s.library.setting == "openblas") {
                s.library_error = "CALA_BLAS=openblas: " + path + " did not load: " + why;
                std::fprintf(stderr, "cala: error: %s; BLIS runs\n", s.library_error.c_str());
            }
        }
    }
    if (held != nullptr && !held->core_rates.empty())
        s.library.reason += "; the process's OpenBLAS had picked " + (held->own_core.empty() ? held->core : held->own_core) +
                            " kernels (AVX2) on this AVX-512 CPU, " + held->core_rates + ": " +
                            (held->own_core.empty() ? "kept"
                                                    : "cala reran its core selection with OPENBLAS_CORETYPE=" + held->core) +
                            " (CALA_OPENBLAS_CORETYPE=keep leaves its own)";
    else if (held != nullptr && !held->own_core.empty())
        s.library.reason += "; the process's OpenBLAS had picked " + held->own_core + " kernels (no AVX2) on this CPU: " +
                            "cala reran its core selection with OPENBLAS_CORETYPE=" + held->core +
                            " (CALA_OPENBLAS_CORETYPE=keep leaves its own)";
    else if (held != nullptr && !held->advice.empty())
        s.library.reason += "; the process's OpenBLAS runs " + held->core + " kernels (no AVX2) on this CPU: " +
                            "OPENBLAS_CORETYPE=" + held->advice + " in the environment fixes its BLAS and LAPACK calls";
    if (verbose_here())
        std::fprintf(stderr, "cala: BLAS kernels %s: %s (CALA_BLAS_ARCH=%s, BLIS_ARCH_TYPE=%s; %s)\n",
                     s.choice.name.empty() ? "of BLIS's own choice" : s.choice.name.c_str(), s.choice.reason.c_str(),
                     s.choice.setting.c_str(), blis_env.empty() ? "unset" : blis_env.c_str(),
                     cpu.brand.empty() ? "unknown CPU" : cpu.brand.c_str());
    if (verbose_here()) {
        const OpenBlas* ob = active_openblas();
        std::fprintf(stderr, "cala: BLAS library %s: %s (CALA_BLAS=%s)\n",
                     ob ? ("OpenBLAS " + ob->core + ", " + ob->path).c_str() : "BLIS", s.library.reason.c_str(),
                     s.library.setting.c_str());
    }
}

}  // namespace cala::kernels

namespace cala {

namespace {

// Runs before main, so before BLIS reads BLIS_ARCH_TYPE at its first call: the kernel set
// (CALA_BLAS_ARCH, kernels/arch.hpp), in a program linked to cala and under the shim alike.
[[gnu::constructor]] void select_blis_kernels() { kernels::select_kernels_at_load(); }

}  // namespace

std::string blas_kernel_name() {
    if (const auto& e = kernels::load_choice().error; !e.empty()) throw Error(e);
    bli_init();  // idempotent; the arch query needs BLIS's kernel structure
    return bli_arch_string(bli_arch_query_id());
}

std::string blas_library_name() {
    if (const auto& e = kernels::load_choice().library_error; !e.empty()) throw Error(e);
    const kernels::OpenBlas* ob = kernels::active_openblas();
    return ob ? "openblas " + ob->core : "blis " + blas_kernel_name();
}

}  // namespace cala

// OpenBLAS loaded apart: dlopen, its entry points, and which BLAS cala's kernels run on.

#include "kernels/openblas.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "kernels/arch.hpp"

namespace cala::kernels {

namespace {

std::atomic<const OpenBlas*> g_active{nullptr};
std::atomic<std::uint64_t> g_calls{0};

// Sets `name` for the duration of a scope, then puts back what was there.
class EnvScope {
public:
    EnvScope(const char* name, const char* value) : name_(name) {
        if (const char* v = std::getenv(name)) had_ = true, old_ = v;
        setenv(name, value, 1);
    }
    ~EnvScope() {
        if (had_) setenv(name_, old_.c_str(), 1);
        else unsetenv(name_);
    }
    EnvScope(const EnvScope&) = delete;
    EnvScope& operator=(const EnvScope&) = delete;

private:
    const char* name_;
    bool had_ = false;
    std::string old_;
};

template <class F>
bool bind(void* h, const char* name, F*& f, std::string& missing) {
    f = reinterpret_cast<F*>(dlsym(h, name));
    if (f == nullptr && missing.empty()) missing = name;
    return f != nullptr;
}

// Binds the entry points of handle h into ob; the first missing one's name, or empty.
std::string bind_all(void* h, OpenBlas& ob) {
    std::string missing;
    const char* (*config)() = nullptr;
    const char* (*core)() = nullptr;
    int (*parallel)() = nullptr;
    bind(h, "openblas_get_config", config, missing);
    bind(h, "openblas_get_corename", core, missing);
    bind(h, "openblas_get_parallel", parallel, missing);
    bind(h, "openblas_get_num_threads", ob.get_num_threads, missing);
    bind(h, "cblas_sgemm", ob.sgemm, missing), bind(h, "cblas_dgemm", ob.dgemm, missing);
    bind(h, "cblas_cgemm", ob.cgemm, missing), bind(h, "cblas_zgemm", ob.zgemm, missing);
    bind(h, "cblas_strsm", ob.strsm, missing), bind(h, "cblas_dtrsm", ob.dtrsm, missing);
    bind(h, "cblas_ctrsm", ob.ctrsm, missing), bind(h, "cblas_ztrsm", ob.ztrsm, missing);
    bind(h, "cblas_strmm", ob.strmm, missing), bind(h, "cblas_dtrmm", ob.dtrmm, missing);
    bind(h, "cblas_ctrmm", ob.ctrmm, missing), bind(h, "cblas_ztrmm", ob.ztrmm, missing);
    bind(h, "cblas_ssyrk", ob.ssyrk, missing), bind(h, "cblas_dsyrk", ob.dsyrk, missing);
    bind(h, "cblas_cherk", ob.cherk, missing), bind(h, "cblas_zherk", ob.zherk, missing);
    if (missing.empty()) ob.config = config(), ob.core = core(), ob.parallel = parallel();
    return missing;
}

void* open_fresh(const std::string& path) {
    EnvScope one("OPENBLAS_NUM_THREADS", "1");
    return dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
}

// Kernels without AVX2 on a CPU that has AVX2 (OpenBLAS's CPU detection does not know the CPU):
// OpenBLAS's own core selection runs again with OPENBLAS_CORETYPE set (gotoblas_dynamic_quit,
// then gotoblas_dynamic_init, which reads it and initializes that core's parameters: what a
// process started with OPENBLAS_CORETYPE does), for the whole process, the program's own BLAS
// calls included. Not where the user set OPENBLAS_CORETYPE, nor with CALA_OPENBLAS_CORETYPE=keep;
// CALA_OPENBLAS_CORETYPE=<core> forces that core. A build without dynamic cores keeps its own.
void retarget(void* h, OpenBlas& ob) {
    const char* user = std::getenv("OPENBLAS_CORETYPE");
    const char* cala = std::getenv("CALA_OPENBLAS_CORETYPE");
    const std::string setting = cala != nullptr && *cala != '\0' ? cala : "auto";
    const std::string target = setting == "auto" ? openblas_core_advice(ob.core, read_cpu_info()) : setting;
    if (target.empty() || setting == "keep" || user != nullptr || target == ob.core) {
        if (setting == "auto") ob.advice = target;
        return;
    }
    void (*quit)() = nullptr, (*init)() = nullptr;
    const char* (*core)() = nullptr;
    std::string missing;
    bind(h, "gotoblas_dynamic_quit", quit, missing), bind(h, "gotoblas_dynamic_init", init, missing);
    bind(h, "openblas_get_corename", core, missing);
    if (!missing.empty()) {  // not a DYNAMIC_ARCH build: one core only
        ob.advice = target;
        return;
    }
    {
        EnvScope type("OPENBLAS_CORETYPE", target.c_str());
        quit();
        init();
    }
    const std::string now = core();
    if (now == ob.core) {  // (a core name this OpenBLAS does not know: its detection again)
        ob.advice = setting == "auto" ? target : "";
        return;
    }
    ob.own_core = ob.core;
    ob.core = now;
}

std::unique_ptr<OpenBlas> open_library(const std::string& path, std::string& why) {
    // A library the program already has (its libblas.so.3 may be this OpenBLAS) is shared as it
    // is; one cala loads first starts without a thread pool of its own (OpenMP's build ignores
    // it: it follows omp_get_max_threads() per call).
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    const bool held = h != nullptr;
    if (!held) h = open_fresh(path);
    if (h == nullptr) {
        const char* e = dlerror();
        why = e ? e : "dlopen failed";
        return nullptr;
    }
    auto ob = std::make_unique<OpenBlas>();
    ob->path = path;
    if (const std::string missing = bind_all(h, *ob); !missing.empty()) {
        why = path + " has no " + missing + ": not an OpenBLAS";
        dlclose(h);
        return nullptr;
    }
    retarget(h, *ob);
    return ob;  // never closed: its entry points may be in use until the process ends
}

}  // namespace

std::string openblas_path() {
    const char* p = std::getenv("CALA_OPENBLAS");
    return p != nullptr && *p != '\0' ? p : "libopenblas.so.0";
}

namespace {
// The libraries loaded (kept for the process's life) and the failures. A function's static: libcala's
// constructor loads OpenBLAS before this file's own statics would be initialized.
struct Loader {
    std::mutex m;
    std::map<std::string, std::unique_ptr<OpenBlas>> loaded;
    std::map<std::string, std::string> failed;
};
Loader& loader() {
    static Loader l;
    return l;
}
}  // namespace

const OpenBlas* load_openblas(const std::string& path, std::string* why) {
    auto& [m, loaded, failed] = loader();
    std::lock_guard lock(m);
    if (const auto it = loaded.find(path); it != loaded.end()) return it->second.get();
    if (const auto it = failed.find(path); it != failed.end()) {
        if (why) *why = it->second;
        return nullptr;
    }
    std::string reason;
    auto ob = open_library(path, reason);
    if (!ob) {
        failed[path] = reason;
        if (why) *why = reason;
        return nullptr;
    }
    return (loaded[path] = std::move(ob)).get();
}

bool switch_openblas_core(const std::string& path, const std::string& core, const std::string& rates) {
    auto& l = loader();
    std::lock_guard lock(l.m);
    const auto it = l.loaded.find(path);
    if (it == l.loaded.end()) return false;
    OpenBlas& ob = *it->second;
    ob.core_rates = rates;
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (h == nullptr) return false;
    void (*quit)() = nullptr, (*init)() = nullptr;
    const char* (*name)() = nullptr;
    std::string missing;
    bind(h, "gotoblas_dynamic_quit", quit, missing), bind(h, "gotoblas_dynamic_init", init, missing);
    bind(h, "openblas_get_corename", name, missing);
    auto lower = [](std::string x) {
        for (char& ch : x) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        return x;
    };
    auto select = [&](const std::string& c) {
        EnvScope type("OPENBLAS_CORETYPE", c.c_str());
        quit();
        init();
        return lower(name()) == lower(c);
    };
    bool now_core = false;
    if (missing.empty()) {
        now_core = select(core);
        // A name it does not know sends it to its own detection: back to the core it ran.
        if (!now_core) select(ob.core);
        if (const std::string now = name(); now != ob.core) {
            if (ob.own_core.empty()) ob.own_core = ob.core;
            ob.core = now;
        }
    }
    dlclose(h);  // (NOLOAD took a reference)
    return now_core;
}

void note_openblas_core_rates(const std::string& path, const std::string& rates) {
    auto& l = loader();
    std::lock_guard lock(l.m);
    if (const auto it = l.loaded.find(path); it != l.loaded.end()) it->second->core_rates = rates;
}

const OpenBlas* held_openblas(const std::string& path) {
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (h == nullptr) return nullptr;
    dlclose(h);  // (NOLOAD took a reference)
    return load_openblas(path);
}

const OpenBlas* active_openblas() noexcept { return g_active.load(std::memory_order_acquire); }

const OpenBlas* set_active_openblas(const OpenBlas* lib) noexcept {
    return g_active.exchange(lib, std::memory_order_acq_rel);
}

std::uint64_t openblas_calls() noexcept { return g_calls.load(std::memory_order_relaxed); }
void count_openblas_call() noexcept { g_calls.fetch_add(1, std::memory_order_relaxed); }

}  // namespace cala::kernels

// Settings, error reports, verbose lines and the real ScaLAPACK symbols.

#include "scalapack/report.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "scalapack/blacs.hpp"

namespace cala::scalapack {

const Settings& settings() {
    static const Settings s = [] {
        Settings r;
        if (const char* t = std::getenv("CALA_SCALAPACK_THRESHOLD"); t != nullptr && *t != '\0') {
            char* end = nullptr;
            const double v = std::strtod(t, &end);
            if (end != t && v >= 0) r.threshold = v;
            else std::fprintf(stderr, "cala_scalapack: ignoring CALA_SCALAPACK_THRESHOLD=%s (not a number >= 0)\n", t);
        }
        if (const char* m = std::getenv("CALA_SHIM"); m != nullptr && *m != '\0') {
            if (std::strcmp(m, "off") == 0) r.mode = Mode::Off;
            else if (std::strcmp(m, "log") == 0) r.mode = Mode::Log;
            else if (std::strcmp(m, "on") != 0)
                std::fprintf(stderr, "cala_scalapack: ignoring CALA_SHIM=%s (not off, on or log)\n", m);
        }
        const char* v = std::getenv("CALA_VERBOSE");
        r.verbose = v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
        return r;
    }();
    return s;
}

void* real_symbol(const char* name) { return dlsym(RTLD_NEXT, name); }

namespace {
thread_local Ran g_ran = Ran::Cala;
thread_local std::string g_note;
}  // namespace

void mark_ran(Ran r) noexcept { g_ran = r; }
Ran ran() noexcept { return g_ran; }
void note_call(std::string text) { g_note = std::move(text); }
const std::string& call_note() noexcept { return g_note; }

void log_call(const char* rout, const std::string& sizes, Ran who, double seconds, std::int64_t words) {
    int init = 0, rank = 0;
    MPI_Initialized(&init);
    if (init) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) return;
    const char* by = who == Ran::Cala ? "cala" : who == Ran::Scalapack ? "ScaLAPACK" : "illegal-argument";
    char tail[96];
    if (who == Ran::Cala) std::snprintf(tail, sizeof tail, "s=%.6f words=%lld", seconds, static_cast<long long>(words));
    else std::snprintf(tail, sizeof tail, "s=%.6f words=-", seconds);
    const std::string& note = call_note();
    std::fprintf(stderr, "cala_scalapack log: %s %s ran=%s %s%s%s\n", rout, sizes.c_str(), by, tail,
                 note.empty() ? "" : " ", note.c_str());
    std::fflush(stderr);
}

namespace {

// The shared object a symbol lives in (its load address), or nullptr.
const void* object_of(void* symbol) {
    Dl_info info{};
    if (symbol == nullptr || dladdr(symbol, &info) == 0) return nullptr;
    return info.dli_fbase;
}

}  // namespace

void report_illegal(int ctxt, const char* rout, int info, Checker who) {
    mark_ran(Ran::Illegal);
    const int position = -info;
    if (auto* pxerbla = reinterpret_cast<PxerblaFn>(dlsym(RTLD_DEFAULT, "pxerbla_"))) {
        pxerbla(&ctxt, rout, &position, std::strlen(rout));
    } else {  // no ScaLAPACK in the process: print PXERBLA's line ourselves
        int p = -1, q = -1, r = -1, c = -1;
        Cblacs_gridinfo(ctxt, &p, &q, &r, &c);
        std::printf("{%5d,%5d}:  On entry to %s parameter number %4d had an illegal value\n", r, c, rout, position);
        std::fflush(stdout);
    }
    if (who != Checker::Pblas) return;
    // A PBLAS tester defines PB_Cabort itself (it records INFO and returns): tell it too.
    void* handler = dlsym(RTLD_DEFAULT, "PB_Cabort");
    const void* scalapack = object_of(real_symbol("pdgemm_"));
    if (handler != nullptr && object_of(handler) != scalapack) {
        char name[16] = {};
        std::strncpy(name, rout, sizeof name - 1);
        reinterpret_cast<PbAbortFn>(handler)(ctxt, name, info);
    }
}

void say(const std::string& line) {
    std::fprintf(stderr, "cala_scalapack: %s\n", line.c_str());
    std::fflush(stderr);
}

int report_agreed(int code, const ArgCheck& own, const char* elsewhere, int ctxt, const char* rout, bool speaker,
                  const std::string& call, Checker who) {
    ArgCheck all;
    all.fail(code, code == own.code ? own.first : elsewhere);
    if (speaker) say(call + "illegal argument, info = " + std::to_string(all.info()) + ": " + all.first);
    report_illegal(ctxt, rout, all.info(), who);
    return all.info();
}

}  // namespace cala::scalapack

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
        const char* v = std::getenv("CALA_VERBOSE");
        r.verbose = v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
        return r;
    }();
    return s;
}

void* real_symbol(const char* name) { return dlsym(RTLD_NEXT, name); }

namespace {

// The shared object a symbol lives in (its load address), or nullptr.
const void* object_of(void* symbol) {
    Dl_info info{};
    if (symbol == nullptr || dladdr(symbol, &info) == 0) return nullptr;
    return info.dli_fbase;
}

}  // namespace

void report_illegal(int ctxt, const char* rout, int info, Checker who) {
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

#pragma once
// What the shim says and where it sends what it does not compute: settings from the
// environment, PXERBLA-style error reports, CALA_VERBOSE lines, the real ScaLAPACK symbols.

#include <exception>
#include <string>

namespace cala::scalapack {

/// Read once per process.
struct Settings {
    /// Calls with m·n·k below this go to ScaLAPACK (CALA_SCALAPACK_THRESHOLD; default 128³).
    double threshold = 128.0 * 128.0 * 128.0;
    /// CALA_VERBOSE set and not "0": one line per call on stderr, from grid process (0, 0).
    bool verbose = false;
};
const Settings& settings();

/// The next definition of a ScaLAPACK symbol after this library (dlsym(RTLD_NEXT)): the real
/// one, whether the shim was preloaded or linked before libscalapack. nullptr if none.
void* real_symbol(const char* name);

/// Who reports an illegal argument in the routine the shim stands in for.
enum class Checker {
    Pblas,      ///< a PBLAS routine (p?gemm): PXERBLA, then the program's own PB_Cabort if any
    Scalapack,  ///< a ScaLAPACK routine (p?potrf, p?potrs): PXERBLA only, as ScaLAPACK does
};

/// Reports an illegal argument as ScaLAPACK does: PXERBLA's line ("{r,c}:  On entry to PDGEMM
/// parameter number 1403 had an illegal value") through the process's own PXERBLA, then, for a
/// PBLAS routine when the process has a PBLAS error handler other than libscalapack's (a PBLAS
/// tester's, which records INFO instead of aborting), that handler. libscalapack's own handler
/// is not called: it would abort the program, and the shim's contract is that the program goes
/// on. Local.
void report_illegal(int ctxt, const char* rout, int info, Checker who = Checker::Pblas);

/// One CALA_VERBOSE line (the caller decides which process prints).
void say(const std::string& line);

/// The C boundary of an entry point: runs f, and says what it throws instead of letting it
/// escape into Fortran.
template <class F>
void guarded(const char* routine, F&& f) noexcept {
    try {
        f();
    } catch (const std::exception& e) {
        say(std::string(routine) + ": " + e.what());
    } catch (...) {
        say(std::string(routine) + ": unknown exception");
    }
}

}  // namespace cala::scalapack

#pragma once
// What the shim says and where it sends what it does not compute: settings from the
// environment, PXERBLA-style error reports, CALA_VERBOSE lines, the real ScaLAPACK symbols.

#include <cctype>
#include <complex>
#include <exception>
#include <string>
#include <string_view>
#include <type_traits>

#include "cala/comm.hpp"
#include "cala/error.hpp"
#include "scalapack/descriptor.hpp"

namespace cala::scalapack {

/// CALA_SHIM: off (every call goes to ScaLAPACK, untouched), on (the default), log (as on, and
/// MPI_COMM_WORLD rank 0 prints one line per call: routine, sizes, who ran it, seconds, words).
enum class Mode { Off, On, Log };

/// Read once per process.
struct Settings {
    Mode mode = Mode::On;
    /// Calls with m·n·k below this go to ScaLAPACK (CALA_SCALAPACK_THRESHOLD; default 128³).
    double threshold = 128.0 * 128.0 * 128.0;
    /// CALA_VERBOSE set and not "0": one line per call on stderr, from grid process (0, 0).
    bool verbose = false;
};
const Settings& settings();

/// The next definition of a ScaLAPACK symbol after this library (dlsym(RTLD_NEXT)): the real
/// one, whether the shim was preloaded or linked before libscalapack. nullptr if none.
void* real_symbol(const char* name);

/// A routine as PXERBLA names it ("PDPOTRF" for T = double and stem "POTRF") and its Fortran
/// symbol ("pdpotrf_").
struct RoutineId {
    std::string name, symbol;
};
template <class T>
RoutineId routine_id(std::string_view stem) {
    const char t = std::is_same_v<T, float>                 ? 'S'
                   : std::is_same_v<T, double>              ? 'D'
                   : std::is_same_v<T, std::complex<float>> ? 'C'
                                                            : 'Z';
    RoutineId r{std::string("P") + t + std::string(stem), ""};
    for (char c : r.name) r.symbol += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    r.symbol += '_';
    return r;
}

/// The real routine (real_symbol) as a function pointer of type Fn; cala::Error if there is none.
template <class Fn>
Fn real_routine(const std::string& symbol) {
    const auto f = reinterpret_cast<Fn>(real_symbol(symbol.c_str()));
    if (f == nullptr) throw Error("no ScaLAPACK " + symbol + " after cala_scalapack");
    return f;
}

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

/// What a ScaLAPACK routine's report says of an illegal argument another process found.
inline constexpr const char* kElsewhere = "found on another process of the grid, or differs between processes";

/// The illegal argument the grid agreed on (`code`, ArgCheck's encoding), reported as the
/// routine does: with this process's own reason when the code is its own check's, else with
/// `elsewhere`; `call` (the CALA_VERBOSE prefix) is printed when `speaker`. Returns the info.
int report_agreed(int code, const ArgCheck& own, const char* elsewhere, int ctxt, const char* rout, bool speaker,
                  const std::string& call, Checker who);

/// Called on every process of the grid when cala is about to compute a call (after the
/// agreement, from cala_or_scalapack), never for a call the shim declines (decline.hpp): the
/// single place where the shim sets up what cala's computation needs from the runtime (thread
/// defaults). Local; defined in decline.cpp.
void compute_starts() noexcept;

/// cala's computation of a call (compute_starts() first); a cala::Error (raised on every
/// process before any data moved: cala agrees on its arguments first) hands the call to
/// ScaLAPACK instead. MPI errors propagate.
template <class Cala, class Scalapack>
void cala_or_scalapack(const char* rout, const GridPos& g, Cala&& run, Scalapack&& fallback) {
    compute_starts();
    try {
        run();
    } catch (const RankError&) {  // one rank only: the others cannot follow a fallback
        throw;
    } catch (const Error& e) {
        if (g.row == 0 && g.col == 0) say(std::string(rout) + ": cala: " + e.what() + "; ScaLAPACK computes this call");
        fallback();
    }
}

/// Who ran the current call, for CALA_SHIM=log: the routines mark ScaLAPACK's runs (every
/// call of the real routine) and illegal arguments; anything else is cala's (nothing to do
/// included). Per thread.
enum class Ran { Cala, Scalapack, Illegal };
void mark_ran(Ran r) noexcept;
Ran ran() noexcept;
/// What CALA_SHIM=log adds to the current call's line (the symmetric routines' route and its
/// predictions); cleared when a call starts. Per thread.
void note_call(std::string text);
const std::string& call_note() noexcept;

/// CALA_SHIM=log's line for one call on MPI_COMM_WORLD rank 0 (stderr): "cala_scalapack log:
/// PDTRSM side=L ... ran=cala s=0.0123 words=4096" (words: cala's traffic counters on rank 0,
/// "-" when ScaLAPACK ran: its traffic is not counted), then call_note() if any.
void log_call(const char* rout, const std::string& sizes, Ran who, double seconds, std::int64_t words);

/// The C boundary of an entry point: runs f, and says what it throws instead of letting it
/// escape into Fortran.
template <class F>
void guarded(const char* routine, F&& f) noexcept {
    try {
        f();
    } catch (const RankError& e) {  // this rank alone failed: the others would wait for it forever
        say(std::string(routine) + ": " + e.what() + "; aborting");
        MPI_Abort(MPI_COMM_WORLD, 2);
    } catch (const std::exception& e) {
        say(std::string(routine) + ": " + e.what());
    } catch (...) {
        say(std::string(routine) + ": unknown exception");
    }
}

/// An entry point under CALA_SHIM: `scalapack()` alone when off; `cala()` (the shim's routine,
/// which may hand the call to ScaLAPACK itself) when on; when log, `cala()` timed, with the
/// line of log_call (`sizes()` says the call's sizes). Nothing escapes into Fortran.
template <class Sizes, class Cala, class Scalapack>
void run_entry(const char* rout, Sizes&& sizes, Cala&& cala, Scalapack&& scalapack) noexcept {
    const Settings& s = settings();
    if (s.mode == Mode::Off) return guarded(rout, scalapack);
    if (s.mode == Mode::On) return guarded(rout, cala);
    mark_ran(Ran::Cala);
    note_call({});
    const double t0 = MPI_Wtime();
    const std::int64_t w0 = traffic().words();
    guarded(rout, cala);
    const double t = MPI_Wtime() - t0;
    guarded(rout, [&] { log_call(rout, sizes(), ran(), t, traffic().words() - w0); });
}

}  // namespace cala::scalapack

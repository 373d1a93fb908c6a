// p?posv_ of ScaLAPACK, computed by cala: p?potrf then p?potrs, as ScaLAPACK's p?posv does.
//
// p?posv_ (Fortran ABI) -> n³ below the threshold: ScaLAPACK, nothing else (decline) ->
// ScaLAPACK's checks (CHK1MAT on A, p?posv's own; the shim also runs CHK1MAT on B, which p?posv
// leaves to p?potrs: descriptor) -> agree over the BLACS grid, PCHK2MAT's consistency checks
// included (context) -> route: nothing | cala::potrf (with CALA_DEVICES, where the model says
// the copies pay: resident on the rank's device, resident_factor.hpp), then (info == 0)
// cala::potrs on MatrixRefs over the caller's local arrays (cholesky/ -> right-looking tile loop;
// cholesky/solve/ -> cala::trsm twice)

#include <complex>
#include <cstddef>
#include <exception>
#include <optional>

#include "cala/cholesky.hpp"
#include "core/check.hpp"
#include "scalapack/blacs.hpp"
#include "scalapack/context.hpp"
#include "scalapack/decline.hpp"
#include "scalapack/descriptor.hpp"
#include "scalapack/report.hpp"
#include "scalapack/resident_factor.hpp"
#include "scalapack/settle.hpp"
#include "scalapack/solve_settle.hpp"
#include "scalapack/solve_args.hpp"
#include "scalapack/view.hpp"

namespace cala::scalapack {

namespace {

// The routine for T, named on first use.
template <class T>
const RoutineId& routine() {
    static const RoutineId r = routine_id<T>("POSV");
    return r;
}

template <class T>
using Args = SolveArgs<T>;

template <class T>
void call_scalapack(const Args<T>& x) {
    mark_ran(Ran::Scalapack);
    static const auto real = real_routine<SolveFn<T>>(routine<T>().symbol);
    x.call(real);
}

// ScaLAPACK's p?potrs_ on A's factor (when cala factored A but cannot solve).
template <class T>
void call_scalapack_potrs(const Args<T>& x) {
    mark_ran(Ran::Scalapack);
    static const auto real = real_routine<SolveFn<T>>(routine_id<T>("POTRS").symbol);
    x.call(real);
}

template <class T>
void pposv(const Args<T>& x) {
    using detail::cat;
    *x.info = 0;
    const char u = x.uplo_upper();
    const bool upper = u == 'U';
    const int n = *x.n, nrhs = *x.nrhs;

    // 0. Below the threshold (the factorization's n³): ScaLAPACK's, before anything else (decline.hpp).
    if (const double size = static_cast<double>(n) * n * n; declines(size, {n, nrhs})) {
        if (settings().verbose)
            say_declined(x.desca[SL_CTXT - 1], cat(routine<T>().name, "(", u, ") n=", n, " nrhs=", nrhs), "n^3", size);
        return call_scalapack(x);
    }
    const Call c = solve_call(routine<T>().name.c_str(), x.desca, cat("(", u, ") n=", n, " nrhs=", nrhs));

    // 1. ScaLAPACK's checks, in ScaLAPACK's order.
    if (foreign_context(c, kSolveArgA, x.info)) return;
    std::vector<SameArg> same;  // PCHK2MAT: what must be the same on every process of the grid
    ArgCheck chk = check_solve_args(x, c.g, same);

    // 2. Where the call goes.
    const Route route = n == 0 || nrhs == 0 ? Route::Nothing : Route::Cala;

    // 3. cala's views of A and B, one allreduce over the grid.
    const SolveOperands ops = settle_solve(c, chk, route, same, x.desca, *x.ia, *x.ja, x.descb, *x.ib, *x.jb, n, nrhs,
                                           x.info, [&] { call_scalapack(x); });
    const Grid2D* grid = ops.grid;
    if (grid == nullptr) return;

    // 4. The work: cala::potrf, then cala::potrs, in place on the caller's local arrays. Each
    // step that cala declines (cala::Error, raised on every process before any data moved) is
    // ScaLAPACK's: the whole p?posv before the factorization, p?potrs after it.
    const MatrixRef<T> av = view(*grid, *ops.a, x.a), bv = view(*grid, *ops.b, x.b);
    const Uplo uplo = upper ? Uplo::Upper : Uplo::Lower;
    // With CALA_DEVICES the factorization may run resident (resident_factor.hpp); potrs then runs
    // on the CPU path on the factor copied back.
    const bool factored = factor_routed<T>(c, uplo, av, x.info, "; then potrs on the cpu path", [&] {
        if (c.speaker())
            say(cat(c.head, "cala: potrf (",
                    plan_potrf(uplo, av.layout(), grid->order(), CholeskyOptions{}, sizeof(T), is_complex_v<T>).describe(),
                    "), then potrs (cala::trsm twice)"));
    }, [&] { call_scalapack(x); });
    if (!factored || *x.info != 0) return;
    cala_or_scalapack(c.rout, c.g, [&] { potrs(uplo, av, bv); }, [&] { call_scalapack_potrs(x); });
}

// The C boundary: nothing escapes into Fortran.
template <class T>
void entry(const Args<T>& x) noexcept {
    run_entry(
        routine<T>().name.c_str(), [&] { return detail::cat("uplo=", x.uplo[0], " n=", *x.n, " nrhs=", *x.nrhs); }, [&] { pposv(x); }, [&] { call_scalapack(x); });
}

}  // namespace

}  // namespace cala::scalapack

#define CALA_PPOSV_PARAMS(T)                                                                                    \
    const char *uplo, const int *n, const int *nrhs, const T *a, const int *ia, const int *ja, const int *desca, \
        T *b, const int *ib, const int *jb, const int *descb, int *info
#define CALA_PPOSV_ENTRY(sym, T)                                                                                \
    extern "C" __attribute__((visibility("default"))) void sym(CALA_PPOSV_PARAMS(T)) {                         \
        cala::scalapack::entry<T>({uplo, n, nrhs, a, ia, ja, desca, b, ib, jb, descb, info});                    \
    }
#define CALA_PPOSV_SPELLINGS(lower, upper, T) \
    CALA_PPOSV_ENTRY(lower##_, T) CALA_PPOSV_ENTRY(lower, T) CALA_PPOSV_ENTRY(upper, T)

CALA_PPOSV_SPELLINGS(psposv, PSPOSV, float)
CALA_PPOSV_SPELLINGS(pdposv, PDPOSV, double)
CALA_PPOSV_SPELLINGS(pcposv, PCPOSV, std::complex<float>)
CALA_PPOSV_SPELLINGS(pzposv, PZPOSV, std::complex<double>)

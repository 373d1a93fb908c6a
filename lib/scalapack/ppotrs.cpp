// p?potrs_ of ScaLAPACK, computed by cala.
//
// p?potrs_ (Fortran ABI) -> n·n·nrhs below the threshold: ScaLAPACK, nothing else (decline) ->
// ScaLAPACK's checks (CHK1MAT on A and B, p?potrs's own: descriptor) -> agree over the BLACS
// grid, PCHK2MAT's consistency checks included (context) -> route: nothing | cala::potrs on
// MatrixRefs over the caller's local arrays (cholesky/solve/ -> cala::trsm twice -> kernels:
// BLIS trsm/gemm)

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
#include "scalapack/settle.hpp"
#include "scalapack/solve_settle.hpp"
#include "scalapack/solve_args.hpp"
#include "scalapack/view.hpp"

namespace cala::scalapack {

namespace {

// The routine for T, named on first use.
template <class T>
const RoutineId& routine() {
    static const RoutineId r = routine_id<T>("POTRS");
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

template <class T>
void ppotrs(const Args<T>& x) {
    using detail::cat;
    *x.info = 0;
    const char u = x.uplo_upper();
    const bool upper = u == 'U';
    const int n = *x.n, nrhs = *x.nrhs;

    // 0. Below the threshold: ScaLAPACK's, before anything else (decline.hpp).
    if (const double size = static_cast<double>(n) * n * nrhs; declines(size, {n, nrhs})) {
        if (settings().verbose)
            say_declined(x.desca[SL_CTXT - 1], cat(routine<T>().name, "(", u, ") n=", n, " nrhs=", nrhs), "n*n*nrhs",
                         size);
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

    // 4. The work: cala::potrs in place on the caller's local arrays.
    const MatrixRef<T> av = view(*grid, *ops.a, x.a), bv = view(*grid, *ops.b, x.b);
    const Uplo uplo = upper ? Uplo::Upper : Uplo::Lower;
    if (c.speaker())
        say(cat(c.head, "cala: potrs (cala::trsm with ", upper ? "U^H, then U" : "L, then L^H", "), nb=",
                av.layout().rows.nb));
    cala_or_scalapack(c.rout, c.g, [&] { potrs(uplo, av, bv); }, [&] { call_scalapack(x); });
}

// The C boundary: nothing escapes into Fortran.
template <class T>
void entry(const Args<T>& x) noexcept {
    run_entry(
        routine<T>().name.c_str(), [&] { return detail::cat("uplo=", x.uplo[0], " n=", *x.n, " nrhs=", *x.nrhs); }, [&] { ppotrs(x); }, [&] { call_scalapack(x); });
}

}  // namespace

}  // namespace cala::scalapack

#define CALA_PPOTRS_PARAMS(T)                                                                                    \
    const char *uplo, const int *n, const int *nrhs, const T *a, const int *ia, const int *ja, const int *desca, \
        T *b, const int *ib, const int *jb, const int *descb, int *info
#define CALA_PPOTRS_ENTRY(sym, T)                                                                                \
    extern "C" __attribute__((visibility("default"))) void sym(CALA_PPOTRS_PARAMS(T)) {                         \
        cala::scalapack::entry<T>({uplo, n, nrhs, a, ia, ja, desca, b, ib, jb, descb, info});                    \
    }
#define CALA_PPOTRS_SPELLINGS(lower, upper, T) \
    CALA_PPOTRS_ENTRY(lower##_, T) CALA_PPOTRS_ENTRY(lower, T) CALA_PPOTRS_ENTRY(upper, T)

CALA_PPOTRS_SPELLINGS(pspotrs, PSPOTRS, float)
CALA_PPOTRS_SPELLINGS(pdpotrs, PDPOTRS, double)
CALA_PPOTRS_SPELLINGS(pcpotrs, PCPOTRS, std::complex<float>)
CALA_PPOTRS_SPELLINGS(pzpotrs, PZPOTRS, std::complex<double>)

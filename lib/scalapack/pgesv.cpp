// p?gesv_ of ScaLAPACK, computed by cala: p?getrf then p?getrs, as ScaLAPACK's p?gesv does.
//
// p?gesv_ (Fortran ABI) -> n³ below the threshold: ScaLAPACK, nothing else (decline) ->
// ScaLAPACK's checks (CHK1MAT on A and B, p?gesv's own: lu_args) -> agree over the BLACS grid,
// PCHK2MAT's consistency checks included (context) -> route: nothing | cala::getrf (IPIV written
// as ScaLAPACK's p?getrf leaves it), then (info == 0) cala::getrs with the same pivots, on
// MatrixRefs over the caller's local arrays (lu/)

#include <complex>
#include <cstddef>
#include <optional>
#include <vector>

#include "cala/lu.hpp"
#include "core/check.hpp"
#include "scalapack/blacs.hpp"
#include "scalapack/context.hpp"
#include "scalapack/decline.hpp"
#include "scalapack/descriptor.hpp"
#include "scalapack/lu_args.hpp"
#include "scalapack/lu_pivots.hpp"
#include "scalapack/report.hpp"
#include "scalapack/settle.hpp"
#include "scalapack/solve_settle.hpp"
#include "scalapack/view.hpp"

namespace cala::scalapack {

namespace {

// The routine for T, named on first use.
template <class T>
const RoutineId& routine() {
    static const RoutineId r = routine_id<T>("GESV");
    return r;
}

template <class T>
using Args = LuSolveArgs<T>;

template <class T>
void call_scalapack(const Args<T>& x) {
    mark_ran(Ran::Scalapack);
    static const auto real = real_routine<PgesvFn<T>>(routine<T>().symbol);
    real(x.n, x.nrhs, x.a, x.ia, x.ja, x.desca, x.ipiv, x.b, x.ib, x.jb, x.descb, x.info);
}

// ScaLAPACK's p?getrs_ on cala's factors (when cala factored A but cannot solve).
template <class T>
void call_scalapack_getrs(const Args<T>& x) {
    mark_ran(Ran::Scalapack);
    static const auto real = real_routine<PgetrsFn<T>>(routine_id<T>("GETRS").symbol);
    real("N", x.n, x.nrhs, x.a, x.ia, x.ja, x.desca, x.ipiv, x.b, x.ib, x.jb, x.descb, x.info, 1);
}

template <class T>
void pgesv(const Args<T>& x) {
    using detail::cat;
    *x.info = 0;
    const int n = *x.n, nrhs = *x.nrhs;

    // 0. Below the threshold (the factorization's n³): ScaLAPACK's, before anything else.
    if (const double size = lu_size(n, n); declines(size, {n, nrhs})) {
        if (settings().verbose)
            say_declined(x.desca[SL_CTXT - 1], cat(routine<T>().name, " n=", n, " nrhs=", nrhs), "n^3", size);
        return call_scalapack(x);
    }
    const Call c = solve_call(routine<T>().name.c_str(), x.desca, cat(" n=", n, " nrhs=", nrhs));

    // 1. ScaLAPACK's checks, in ScaLAPACK's order.
    if (foreign_context(c, x.desca_pos(), x.info)) return;
    std::vector<SameArg> same;  // PCHK2MAT: what must be the same on every process of the grid
    ArgCheck chk = check_lu_solve(x, c.g, same);

    // 2. Where the call goes. ScaLAPACK's p?gesv factors even when nrhs = 0 (its p?getrf runs);
    // a one-row matrix (M_A = 1) leaves IPIV(1) = 1 and nothing else, as its p?getrf.
    const bool one_row = x.desca[SL_M - 1] == 1;
    const Route route = n == 0 || one_row ? Route::Nothing : Route::Cala;

    // 3. cala's views of A and B, one allreduce over the grid.
    const SolveOperands ops = settle_solve(c, chk, route, same, x.desca, *x.ia, *x.ja, x.descb, *x.ib, *x.jb, n, nrhs,
                                           x.info, [&] { call_scalapack(x); });
    const Grid2D* grid = ops.grid;
    if (grid == nullptr) {
        if (route == Route::Nothing && one_row && *x.info == 0) x.ipiv[0] = 1;
        return;
    }

    // 4. The work: cala::getrf, then cala::getrs, in place. Each step cala declines (cala::Error,
    // raised on every process before any data moved) is ScaLAPACK's: the whole p?gesv before the
    // factorization, p?getrs after it.
    const MatrixRef<T> av = view(*grid, *ops.a, x.a), bv = view(*grid, *ops.b, x.b);
    if (c.speaker())
        say(cat(c.head, "cala: ", describe_getrf(av.layout(), sizeof(T), is_complex_v<T>),
                ", then getrs (cala::trsm twice)"));
    bool factored = false;
    std::vector<index_t> piv;
    cala_or_scalapack(
        c.rout, c.g,
        [&] {
            *x.info = static_cast<int>(getrf(av, piv));
            write_ipiv(piv, *x.ia, x.desca, c.g, x.ipiv);
            factored = true;
        },
        [&] { call_scalapack(x); });
    if (!factored || *x.info != 0 || nrhs == 0) return;
    cala_or_scalapack(c.rout, c.g, [&] { getrs(Op::N, av, piv, bv); }, [&] { call_scalapack_getrs(x); });
}

// The C boundary: nothing escapes into Fortran.
template <class T>
void entry(const Args<T>& x) noexcept {
    run_entry(
        routine<T>().name.c_str(), [&] { return detail::cat("n=", *x.n, " nrhs=", *x.nrhs); }, [&] { pgesv(x); },
        [&] { call_scalapack(x); });
}

}  // namespace

}  // namespace cala::scalapack

#define CALA_PGESV_PARAMS(T)                                                                                 \
    const int *n, const int *nrhs, T *a, const int *ia, const int *ja, const int *desca, int *ipiv, T *b,      \
        const int *ib, const int *jb, const int *descb, int *info
#define CALA_PGESV_ENTRY(sym, T)                                                                             \
    extern "C" __attribute__((visibility("default"))) void sym(CALA_PGESV_PARAMS(T)) {                      \
        cala::scalapack::entry<T>({nullptr, n, nrhs, a, ia, ja, desca, ipiv, b, ib, jb, descb, info});      \
    }
#define CALA_PGESV_SPELLINGS(lower, upper, T) \
    CALA_PGESV_ENTRY(lower##_, T) CALA_PGESV_ENTRY(lower, T) CALA_PGESV_ENTRY(upper, T)

CALA_PGESV_SPELLINGS(psgesv, PSGESV, float)
CALA_PGESV_SPELLINGS(pdgesv, PDGESV, double)
CALA_PGESV_SPELLINGS(pcgesv, PCGESV, std::complex<float>)
CALA_PGESV_SPELLINGS(pzgesv, PZGESV, std::complex<double>)

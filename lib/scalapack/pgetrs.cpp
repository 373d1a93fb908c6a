// p?getrs_ of ScaLAPACK, computed by cala.
//
// p?getrs_ (Fortran ABI) -> n·n·nrhs below the threshold: ScaLAPACK, nothing else (decline) ->
// ScaLAPACK's checks (CHK1MAT on A and B, p?getrs's own: lu_args) -> agree over the BLACS grid,
// PCHK2MAT's consistency checks included (context) -> route: nothing | IPIV read into cala's
// pivot vector (lu_pivots: one allreduce), then cala::getrs on MatrixRefs over the caller's
// local arrays (lu/ -> the row interchanges, cala::trsm twice -> kernels: BLIS trsm/gemm)
//
// The factors may be ScaLAPACK's own (its p?getrf, or a p?getrf the shim declined): IPIV is
// read as ScaLAPACK stores it, whoever wrote it. Pivots that are no interchange sequence of
// sub(A), or whose copies differ between process columns, send the call to ScaLAPACK.

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
    static const RoutineId r = routine_id<T>("GETRS");
    return r;
}

template <class T>
using Args = LuSolveArgs<T>;

template <class T>
void call_scalapack(const Args<T>& x) {
    mark_ran(Ran::Scalapack);
    static const auto real = real_routine<PgetrsFn<T>>(routine<T>().symbol);
    real(x.trans, x.n, x.nrhs, x.a, x.ia, x.ja, x.desca, x.ipiv, x.b, x.ib, x.jb, x.descb, x.info, 1);
}

template <class T>
void pgetrs(const Args<T>& x) {
    using detail::cat;
    *x.info = 0;
    const char t = x.trans_upper();
    const int n = *x.n, nrhs = *x.nrhs;

    // 0. Below the threshold: ScaLAPACK's, before anything else (decline.hpp).
    if (const double size = static_cast<double>(n) * n * nrhs; declines(size, {n, nrhs})) {
        if (settings().verbose)
            say_declined(x.desca[SL_CTXT - 1], cat(routine<T>().name, "(", t, ") n=", n, " nrhs=", nrhs), "n*n*nrhs",
                         size);
        return call_scalapack(x);
    }
    const Call c = solve_call(routine<T>().name.c_str(), x.desca, cat("(", t, ") n=", n, " nrhs=", nrhs));

    // 1. ScaLAPACK's checks, in ScaLAPACK's order.
    if (foreign_context(c, x.desca_pos(), x.info)) return;
    std::vector<SameArg> same;  // PCHK2MAT: what must be the same on every process of the grid
    ArgCheck chk = check_lu_solve(x, c.g, same);

    // 2. Where the call goes.
    const Route route = n == 0 || nrhs == 0 ? Route::Nothing : Route::Cala;

    // 3. cala's views of A and B, one allreduce over the grid.
    const SolveOperands ops = settle_solve(c, chk, route, same, x.desca, *x.ia, *x.ja, x.descb, *x.ib, *x.jb, n, nrhs,
                                           x.info, [&] { call_scalapack(x); });
    const Grid2D* grid = ops.grid;
    if (grid == nullptr) return;

    // 4. IPIV as cala's pivots (one more allreduce), then cala::getrs in place.
    const std::optional<std::vector<index_t>> piv =
        read_ipiv(grid_communicator(c.ctxt), n, *x.ia, x.desca, c.g, x.ipiv);
    if (!piv) {
        if (c.speaker()) say(cat(c.head, "ScaLAPACK: IPIV is no pivot sequence of sub(A) cala can apply"));
        return call_scalapack(x);
    }
    const MatrixRef<T> av = view(*grid, *ops.a, x.a), bv = view(*grid, *ops.b, x.b);
    const Op op = t == 'N' ? Op::N : t == 'T' ? Op::T : Op::C;
    if (c.speaker())
        say(cat(c.head, "cala: getrs (row interchanges, cala::trsm with ", t == 'N' ? "L, then U" : "U^op, then L^op",
                "), nb=", av.layout().rows.nb));
    cala_or_scalapack(c.rout, c.g, [&] { getrs(op, av, *piv, bv); }, [&] { call_scalapack(x); });
}

// The C boundary: nothing escapes into Fortran.
template <class T>
void entry(const Args<T>& x) noexcept {
    run_entry(
        routine<T>().name.c_str(),
        [&] { return detail::cat("trans=", x.trans[0], " n=", *x.n, " nrhs=", *x.nrhs); }, [&] { pgetrs(x); },
        [&] { call_scalapack(x); });
}

}  // namespace

}  // namespace cala::scalapack

#define CALA_PGETRS_PARAMS(T)                                                                                   \
    const char *trans, const int *n, const int *nrhs, const T *a, const int *ia, const int *ja, const int *desca, \
        const int *ipiv, T *b, const int *ib, const int *jb, const int *descb, int *info
#define CALA_PGETRS_ENTRY(sym, T)                                                                               \
    extern "C" __attribute__((visibility("default"))) void sym(CALA_PGETRS_PARAMS(T)) {                        \
        cala::scalapack::entry<T>({trans, n, nrhs, const_cast<T*>(a), ia, ja, desca, const_cast<int*>(ipiv), b, \
                                   ib, jb, descb, info});                                                       \
    }
#define CALA_PGETRS_SPELLINGS(lower, upper, T) \
    CALA_PGETRS_ENTRY(lower##_, T) CALA_PGETRS_ENTRY(lower, T) CALA_PGETRS_ENTRY(upper, T)

CALA_PGETRS_SPELLINGS(psgetrs, PSGETRS, float)
CALA_PGETRS_SPELLINGS(pdgetrs, PDGETRS, double)
CALA_PGETRS_SPELLINGS(pcgetrs, PCGETRS, std::complex<float>)
CALA_PGETRS_SPELLINGS(pzgetrs, PZGETRS, std::complex<double>)

// p?trsm_ and p?trmm_ of ScaLAPACK's PBLAS, computed by cala.
//
// p?trsm_ / p?trmm_ (Fortran ABI) -> m·n·k below the threshold: ScaLAPACK, nothing else
// (decline) -> check the arguments as PBLAS does (descriptor) -> agree over the BLACS grid
// (context) -> route: nothing | B := 0 locally (alpha = 0) | ScaLAPACK (no cala layout) |
// p?trsm_ with CALA_DEVICES: resident on the rank's device where the model says the copies pay
// (resident_route.hpp -> cala::trsm on ResidentMatrix copies, lib/resident) |
// cala::trsm / cala::trmm on MatrixRefs over the user's local arrays
// (cholesky/solve/ -> trsm loops | gemm/ -> kernels, BLIS)

#include <cctype>
#include <complex>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "cala/cholesky.hpp"
#include "core/check.hpp"
#include "kernels/blas.hpp"
#include "scalapack/blacs.hpp"
#include "scalapack/context.hpp"
#include "scalapack/decline.hpp"
#include "scalapack/descriptor.hpp"
#include "scalapack/report.hpp"
#include "scalapack/resident_route.hpp"
#include "scalapack/view.hpp"

namespace cala::scalapack {

namespace {

enum class Kind { Trsm, Trmm };

// The routine for T, named on first use.
template <class T, Kind K>
const RoutineId& routine() {
    static const RoutineId r = routine_id<T>(K == Kind::Trsm ? "TRSM" : "TRMM");
    return r;
}

template <class T>
using PtrxmFn = void (*)(const char*, const char*, const char*, const char*, const int*, const int*, const T*,
                         const T*, const int*, const int*, const int*, T*, const int*, const int*, const int*);

// The arguments of one call, as the caller passed them (Fortran: everything by pointer).
template <class T>
struct Args {
    const char *side, *uplo, *transa, *diag;
    const int *m, *n;
    const T* alpha;
    const T* a;
    const int *ia, *ja, *desca;
    T* b;
    const int *ib, *jb, *descb;
};

template <class T, Kind K>
void call_scalapack(const Args<T>& x) {
    mark_ran(Ran::Scalapack);
    static const auto real = real_routine<PtrxmFn<T>>(routine<T, K>().symbol);
    real(x.side, x.uplo, x.transa, x.diag, x.m, x.n, x.alpha, x.a, x.ia, x.ja, x.desca, x.b, x.ib, x.jb, x.descb);
}

char upper(const char* c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c[0]))); }
Op to_op(char t) { return t == 'N' ? Op::N : t == 'T' ? Op::T : Op::C; }

enum class Route { Nothing, Zero, Cala };

// PBLAS's checks of p?trsm's and p?trmm's arguments, in PBLAS's order: SIDE (1), UPLO (2),
// TRANSA (3), DIAG (4), then A (M 5 x M 5 on the left, N 6 x N 6 on the right; IA 9, JA 10,
// DESCA 11) and B (M 5, N 6, IB 13, JB 14, DESCB 15).
template <class T>
ArgCheck check_args(const Args<T>& x, const Desc& da, const Desc& db, const GridPos& g) {
    using detail::cat;
    const char s = upper(x.side), u = upper(x.uplo), t = upper(x.transa), d = upper(x.diag);
    const int m = *x.m, n = *x.n, ctxt = da[CTXT_];
    constexpr int k = ArgCheck::kDescMult;
    ArgCheck chk;
    if (s != 'L' && s != 'R') chk.fail(1 * k, cat("SIDE = '", x.side[0], "'"));
    else if (u != 'U' && u != 'L') chk.fail(2 * k, cat("UPLO = '", x.uplo[0], "'"));
    else if (t != 'N' && t != 'T' && t != 'C') chk.fail(3 * k, cat("TRANSA = '", x.transa[0], "'"));
    else if (d != 'U' && d != 'N') chk.fail(4 * k, cat("DIAG = '", x.diag[0], "'"));
    if (s == 'L') check_matrix(chk, "A", ctxt, g, m, 5, m, 5, *x.ia, *x.ja, da, 11);
    else check_matrix(chk, "A", ctxt, g, n, 6, n, 6, *x.ia, *x.ja, da, 11);
    check_matrix(chk, "B", ctxt, g, m, 5, n, 6, *x.ib, *x.jb, db, 15);
    return chk;
}

// What must be the same on every process of the grid (PBLAS does not check it; see pgemm.cpp).
template <class T>
std::vector<SameArg> same_args(const Args<T>& x, const Desc& da, const Desc& db) {
    constexpr int k = ArgCheck::kDescMult;
    std::vector<SameArg> same = {{upper(x.side), 1 * k},  {upper(x.uplo), 2 * k}, {upper(x.transa), 3 * k},
                                 {upper(x.diag), 4 * k},  {*x.m, 5 * k},         {*x.n, 6 * k},
                                 {scalar_bits(*x.alpha), 7 * k}, {*x.ia, 9 * k}, {*x.ja, 10 * k}};
    same_pblas_descriptor(same, da, 11);
    same.insert(same.end(), {{*x.ib, 13 * k}, {*x.jb, 14 * k}});
    same_pblas_descriptor(same, db, 15);
    return same;
}

template <class T, Kind K>
void ptrxm(const Args<T>& x) {
    using detail::cat;
    const char* const rout = routine<T, K>().name.c_str();
    const Settings& set = settings();
    const char s = upper(x.side), u = upper(x.uplo), t = upper(x.transa), d = upper(x.diag);
    const int m = *x.m, n = *x.n;
    const bool left = s == 'L';
    const int k = left ? m : n;

    // 0. Below the threshold: ScaLAPACK's, before anything else (decline.hpp).
    if (const double size = static_cast<double>(m) * n * k; declines(size, {m, n})) {
        if (set.verbose)
            say_declined(x.desca[CTXT_], cat(rout, "(", s, ",", u, ",", t, ",", d, ") m=", m, " n=", n), "m*n*k",
                         size);
        return call_scalapack<T, K>(x);
    }
    const Desc da = read_descriptor(x.desca), db = read_descriptor(x.descb);
    const int ctxt = da[CTXT_];
    GridPos g;
    Cblacs_gridinfo(ctxt, &g.p, &g.q, &g.row, &g.col);
    const bool speaker = set.verbose && g.row == 0 && g.col == 0;
    const auto call = [&] {
        return cat(rout, "(", s, ",", u, ",", t, ",", d, ") m=", m, " n=", n, " on ", g.p, "x", g.q, " -> ");
    };

    // 1. PBLAS's checks, in PBLAS's order (descriptor.hpp).
    if (g.p == -1) {  // A's context is no grid this process belongs to: nobody to agree with
        ArgCheck chk;
        chk.fail(11 * ArgCheck::kDescMult + 1 + CTXT_, cat("DESCA context ", ctxt, " is not a BLACS grid here"));
        if (set.verbose) say(cat(call(), "illegal argument, info = ", chk.info(), ": ", chk.first));
        report_illegal(ctxt, rout, chk.info());
        return;
    }
    ArgCheck chk = check_args(x, da, db, g);
    const T alpha = *x.alpha;
    check_array(chk, "A", x.a, m > 0 && n > 0 && alpha != T(0), da, g, 8);
    check_array(chk, "B", x.b, m > 0 && n > 0, db, g, 12);

    // 2. Where the call goes (the same on every process when the arguments agree).
    Route route = Route::Cala;
    if (m == 0 || n == 0) route = Route::Nothing;
    else if (alpha == T(0)) route = Route::Zero;
    std::optional<SubMatrix> sa, sb;
    if (chk.ok() && (route == Route::Zero || route == Route::Cala)) sb = sub_matrix(db, g, *x.ib, *x.jb, m, n);
    if (chk.ok() && route == Route::Cala) sa = sub_matrix(da, g, *x.ia, *x.ja, k, k);
    const bool layouts = !chk.ok() || route == Route::Nothing || (sb && (route == Route::Zero || sa));

    // 3. One allreduce over the grid: the first illegal argument on any process, layouts, cache.
    const MPI_Comm comm = grid_communicator(ctxt);
    const Grid2D* grid = route == Route::Cala && layouts ? cached_grid(ctxt, comm, g) : nullptr;
    const Agreement agreed = agree(comm, g, chk.code, layouts, route != Route::Cala || !layouts || grid != nullptr,
                                   same_args(x, da, db));
    if (agreed.code != ArgCheck::kNone) {
        report_agreed(agreed.code, chk, "found on another process of the grid", ctxt, rout, speaker, call(),
                      Checker::Pblas);
        return;
    }
    if (!agreed.cala_layouts) {
        if (speaker)
            say(cat(call(), "ScaLAPACK: an operand has no cala layout (RSRC or CSRC = -1, or a first block wider "
                            "than the block size that the submatrix starts inside)"));
        call_scalapack<T, K>(x);
        return;
    }

    // 4. The work.
    switch (route) {
        case Route::Nothing:
            if (speaker) say(cat(call(), "cala: nothing to do"));
            return;
        case Route::Zero: {
            if (speaker) say(cat(call(), "cala: B := 0 on each process's part (alpha = 0)"));
            const index_t m_loc = sb->rows.dist.local_size(g.row), n_loc = sb->cols.dist.local_size(g.col);
            if (m_loc > 0 && n_loc > 0)
                kernels::scale(m_loc, n_loc, T(0), x.b + sb->rows.local_offset + sb->cols.local_offset * sb->ld,
                               sb->ld);
            return;
        }
        case Route::Cala: break;
    }
    if (!agreed.cached) grid = &make_grid(ctxt, comm, g, agreed);
    const MatrixRef<T> av = view(*grid, *sa, x.a), bv = view(*grid, *sb, x.b);
    const Side side = left ? Side::Left : Side::Right;
    const Uplo uplo = u == 'L' ? Uplo::Lower : Uplo::Upper;
    const Op op = to_op(t);
    const Diag diag = d == 'U' ? Diag::Unit : Diag::NonUnit;
    // p?trsm_ on a GPU node (CALA_DEVICES): resident on the rank's device where the model says
    // the copies pay (resident_route.hpp); its CALA_SHIM=log note says which ran where.
    DeviceRoute dr;
    if constexpr (K == Kind::Trsm) {
        dr = choose_trsm_route<T>(*grid, side, uplo, op, av.layout(), bv.layout());
        if (dr.asked) note_call(cat("where=", dr.where, ": ", dr.reason));
        if (dr.asked && speaker) say(cat(call(), "cala: ", dr.where, ": ", dr.reason));
    }
    if (speaker && !dr.resident)
        say(cat(call(), "cala: ",
                K == Kind::Trsm ? (left ? "trsm (left-side loops)" : "trsm (right side: B transposed, left-side loops)")
                                : "trmm (gemm on the masked triangle)",
                ", nb=", av.layout().rows.nb));
    cala_or_scalapack(
        rout, g,
        [&] {
            if constexpr (K == Kind::Trsm) {
                if (dr.resident) {
                    try {
                        return run_resident_trsm(dr.dev, side, uplo, op, diag, alpha, av, bv);
                    } catch (const RankError&) {  // one rank only: the others cannot follow a fallback
                        throw;
                    } catch (const Error& e) {  // raised on every rank before B was written back
                        if (g.row == 0 && g.col == 0)
                            say(cat(rout, ": resident: ", e.what(), "; the CPU path computes this call"));
                        note_call(cat("where=cpu: the resident run failed: ", e.what()));
                    }
                }
                trsm(side, uplo, op, diag, alpha, av, bv);
            } else {
                trmm(side, uplo, op, diag, alpha, av, bv);
            }
        },
        [&] { call_scalapack<T, K>(x); });
}

// The C boundary: nothing escapes into Fortran.
template <class T, Kind K>
void entry(const Args<T>& x) noexcept {
    run_entry(
        routine<T, K>().name.c_str(),
        [&] {
            return detail::cat("side=", x.side[0], " uplo=", x.uplo[0], " transa=", x.transa[0], " diag=", x.diag[0],
                               " m=", *x.m, " n=", *x.n);
        },
        [&] { ptrxm<T, K>(x); }, [&] { call_scalapack<T, K>(x); });
}

}  // namespace

}  // namespace cala::scalapack

// Every spelling a Fortran or C caller may use (PBLAS is C: no hidden lengths).
#define CALA_PTRXM_PARAMS(T)                                                                                      \
    const char *side, const char *uplo, const char *transa, const char *diag, const int *m, const int *n,        \
        const T *alpha, const T *a, const int *ia, const int *ja, const int *desca, T *b, const int *ib,          \
        const int *jb, const int *descb
#define CALA_PTRXM_ENTRY(sym, T, K)                                                                               \
    extern "C" __attribute__((visibility("default"))) void sym(CALA_PTRXM_PARAMS(T)) {                           \
        cala::scalapack::entry<T, cala::scalapack::Kind::K>(                                                      \
            {side, uplo, transa, diag, m, n, alpha, a, ia, ja, desca, b, ib, jb, descb});                         \
    }
#define CALA_PTRXM_SPELLINGS(lower, upper, T, K) \
    CALA_PTRXM_ENTRY(lower##_, T, K) CALA_PTRXM_ENTRY(lower, T, K) CALA_PTRXM_ENTRY(upper, T, K)

CALA_PTRXM_SPELLINGS(pstrsm, PSTRSM, float, Trsm)
CALA_PTRXM_SPELLINGS(pdtrsm, PDTRSM, double, Trsm)
CALA_PTRXM_SPELLINGS(pctrsm, PCTRSM, std::complex<float>, Trsm)
CALA_PTRXM_SPELLINGS(pztrsm, PZTRSM, std::complex<double>, Trsm)
CALA_PTRXM_SPELLINGS(pstrmm, PSTRMM, float, Trmm)
CALA_PTRXM_SPELLINGS(pdtrmm, PDTRMM, double, Trmm)
CALA_PTRXM_SPELLINGS(pctrmm, PCTRMM, std::complex<float>, Trmm)
CALA_PTRXM_SPELLINGS(pztrmm, PZTRMM, std::complex<double>, Trmm)

// p?symm_ and p?hemm_ of ScaLAPACK's PBLAS, computed by cala.
//
// entry (Fortran ABI) -> check the arguments as PBLAS does (descriptor) -> agree over the BLACS
// grid (settle, context) -> route: nothing | C := beta·C locally (alpha = 0) | ScaLAPACK (small, no cala
// layout, or layouts cala::symm does not take) | cala::symm / cala::hemm (lib/symm: stationary A,
// B's block rows broadcast over row sets, partial C summed at its owner) either on MatrixRefs over
// the user's arrays, sub(B) first redistributed (matrix/) into sub(C)'s layout where the two
// differ, or on a symmetric layout (SBC/TBC) the operands are redistributed onto and C back from:
// the cost model picks (sym_route, sym_run; CALA_SHIM_SYMMETRIC forces one).
//
//   p?symm_ / p?hemm_ (SIDE, UPLO, M, N, ALPHA, A, IA, JA, DESCA, B, IB, JB, DESCB, BETA, C, IC, JC, DESCC)
//
// cala::symm's 2DBC layouts: sub(A)'s rows and columns cut alike (same block size and first
// block), sub(B) laid out like sub(C), and sub(C)'s rows (SIDE = L) or columns (R) distributed
// exactly like sub(A)'s. The shim takes a call when sub(A) and sub(C) meet this (sub(B) it moves
// itself); ScaLAPACK computes the others.

#include <complex>
#include <optional>
#include <string>
#include <vector>

#include "cala/matrix.hpp"
#include "cala/symm.hpp"
#include "core/check.hpp"
#include "core/workspace.hpp"
#include "kernels/blas.hpp"
#include "scalapack/blacs.hpp"
#include "scalapack/context.hpp"
#include "scalapack/decline.hpp"
#include "scalapack/descriptor.hpp"
#include "scalapack/report.hpp"
#include "scalapack/settle.hpp"
#include "scalapack/sym_route.hpp"
#include "scalapack/sym_run.hpp"
#include "scalapack/view.hpp"

namespace cala::scalapack {

namespace {

enum class Kind { Symm, Hemm };

template <class T, Kind K>
const RoutineId& routine() {
    static const RoutineId r = routine_id<T>(K == Kind::Symm ? "SYMM" : "HEMM");
    return r;
}

template <class T>
using PsymmFn = void (*)(const char*, const char*, const int*, const int*, const T*, const T*, const int*, const int*,
                         const int*, const T*, const int*, const int*, const int*, const T*, T*, const int*,
                         const int*, const int*);

template <class T>
struct Args {
    const char *side, *uplo;
    const int *m, *n;
    const T* alpha;
    const T* a;
    const int *ia, *ja, *desca;
    const T* b;
    const int *ib, *jb, *descb;
    const T* beta;
    T* c;
    const int *ic, *jc, *descc;
};

template <class T, Kind K>
void call_scalapack(const Args<T>& x) {
    mark_ran(Ran::Scalapack);
    static const auto real = real_routine<PsymmFn<T>>(routine<T, K>().symbol);
    real(x.side, x.uplo, x.m, x.n, x.alpha, x.a, x.ia, x.ja, x.desca, x.b, x.ib, x.jb, x.descb, x.beta, x.c, x.ic,
         x.jc, x.descc);
}

constexpr int kDescA = 9, kDescB = 13, kDescC = 18;

// PBLAS's checks, in PBLAS's order: SIDE (1), UPLO (2), then A (M 3 x M 3 on the left, N 4 x N 4
// on the right; IA 7, JA 8, DESCA 9), B (M 3 x N 4; IB 11, JB 12, DESCB 13), C (M 3 x N 4; IC 16,
// JC 17, DESCC 18); then the arrays A (6), B (10), C (15) present where used.
template <class T>
ArgCheck check_args(const Args<T>& x, const Desc& da, const Desc& db, const Desc& dc, const GridPos& g) {
    using detail::cat;
    constexpr int km = ArgCheck::kDescMult;
    const char s = option(x.side), u = option(x.uplo);
    const int m = *x.m, n = *x.n, ctxt = da[CTXT_];
    ArgCheck chk;
    if (s != 'L' && s != 'R') chk.fail(1 * km, cat("SIDE = '", x.side[0], "'"));
    else if (u != 'U' && u != 'L') chk.fail(2 * km, cat("UPLO = '", x.uplo[0], "'"));
    if (s == 'L') check_matrix(chk, "A", ctxt, g, m, 3, m, 3, *x.ia, *x.ja, da, kDescA);
    else check_matrix(chk, "A", ctxt, g, n, 4, n, 4, *x.ia, *x.ja, da, kDescA);
    check_matrix(chk, "B", ctxt, g, m, 3, n, 4, *x.ib, *x.jb, db, kDescB);
    check_matrix(chk, "C", ctxt, g, m, 3, n, 4, *x.ic, *x.jc, dc, kDescC);
    const bool reads = m > 0 && n > 0 && *x.alpha != T(0);
    check_array(chk, "A", x.a, reads, da, g, 6);
    check_array(chk, "B", x.b, reads, db, g, 10);
    check_array(chk, "C", x.c, m > 0 && n > 0, dc, g, 15);
    return chk;
}

template <class T>
std::vector<SameArg> same_args(const Args<T>& x, const Desc& da, const Desc& db, const Desc& dc) {
    constexpr int km = ArgCheck::kDescMult;
    std::vector<SameArg> same = {{option(x.side), 1 * km}, {option(x.uplo), 2 * km}, {*x.m, 3 * km},
                                 {*x.n, 4 * km},           {scalar_bits(*x.alpha), 5 * km},
                                 {*x.ia, 7 * km},          {*x.ja, 8 * km}};
    same_pblas_descriptor(same, da, kDescA);
    same.insert(same.end(), {{*x.ib, 11 * km}, {*x.jb, 12 * km}});
    same_pblas_descriptor(same, db, kDescB);
    same.insert(same.end(), {{scalar_bits(*x.beta), 14 * km}, {*x.ic, 16 * km}, {*x.jc, 17 * km}});
    same_pblas_descriptor(same, dc, kDescC);
    return same;
}

// Why cala::symm cannot take sub(A) and sub(C) as they lie; empty when it can. The same on every
// process once the descriptors agree (Dist1Ds are global).
std::string unfit(bool left, const SubMatrix& sa, const SubMatrix& sc) {
    using detail::cat;
    const Dist1D &ar = sa.rows.dist, &ac = sa.cols.dist;
    if (ar.nb != ac.nb || ar.ib != ac.ib)
        return cat("sub(A)'s tiles are not square: row blocks ", ar.nb, " first ", ar.ib, ", column blocks ", ac.nb,
                   " first ", ac.ib);
    const Dist1D& a_side = left ? ar : ac;
    const Dist1D& c_side = left ? sc.rows.dist : sc.cols.dist;
    if (!(a_side == c_side))
        return cat("sub(C)'s ", left ? "rows" : "columns", " are not distributed like sub(A)'s (blocks ", c_side.nb,
                   " first ", c_side.ib, " from process ", c_side.src, " vs ", a_side.nb, " first ", a_side.ib,
                   " from ", a_side.src, ")");
    return {};
}

template <class T, Kind K>
void psymm(const Args<T>& x) {
    using detail::cat;
    const char* const rout = routine<T, K>().name.c_str();
    const char* const fn = K == Kind::Symm ? "symm" : "hemm";
    const char s = option(x.side), u = option(x.uplo);
    const int m = *x.m, n = *x.n;
    const bool left = s == 'L';
    const int ka = left ? m : n;

    // 0. Below the threshold: ScaLAPACK's, before anything else (decline.hpp).
    if (const double size = static_cast<double>(m) * n * ka; declines(size, {m, n})) {
        if (settings().verbose)
            say_declined(x.desca[CTXT_], cat(rout, "(", s, ",", u, ") m=", m, " n=", n), "m*n*k", size);
        return call_scalapack<T, K>(x);
    }
    const Desc da = read_descriptor(x.desca), db = read_descriptor(x.descb), dc = read_descriptor(x.descc);
    Call c{rout, da[CTXT_], {}, settings().verbose, "", Checker::Pblas};
    Cblacs_gridinfo(c.ctxt, &c.g.p, &c.g.q, &c.g.row, &c.g.col);
    const GridPos& g = c.g;
    if (c.verbose) c.head = cat(rout, "(", s, ",", u, ") m=", m, " n=", n, " on ", g.p, "x", g.q, " -> ");

    // 1. PBLAS's checks, in PBLAS's order.
    int info = 0;  // PBLAS routines have no INFO: reported through PXERBLA only
    if (foreign_context(c, kDescA, &info)) return;
    const ArgCheck chk = check_args(x, da, db, dc, g);
    const T alpha = *x.alpha, beta = *x.beta;

    // 2. Where the call goes (PBLAS's quick returns: alpha = 0 leaves beta·C, done locally).
    Route route = Route::Cala;
    if (m == 0 || n == 0 || (alpha == T(0) && beta == T(1))) route = Route::Nothing;
    const bool scale = route == Route::Cala && alpha == T(0);
    std::optional<SubMatrix> sa, sb, sc;
    if (chk.ok() && route == Route::Cala) sc = sub_matrix(dc, g, *x.ic, *x.jc, m, n);
    if (chk.ok() && route == Route::Cala && !scale) {
        sa = sub_matrix(da, g, *x.ia, *x.ja, ka, ka);
        sb = sub_matrix(db, g, *x.ib, *x.jb, m, n);
    }
    const bool layouts = !chk.ok() || route != Route::Cala || (sc && (scale || (sa && sb)));

    // 3. One allreduce over the grid (settle.hpp), then the work.
    const Grid2D* grid =
        settle(c, chk, route, layouts, same_args(x, da, db, dc), "an operand has no cala layout", &info,
               [&] { call_scalapack<T, K>(x); });
    if (grid == nullptr) return;
    if (scale) {
        if (c.speaker()) say(c.head + "cala: C := beta*C on each process's part (alpha = 0)");
        kernels::scale(sc->rows.dist.local_size(g.row), sc->cols.dist.local_size(g.col), beta, local_part(*sc, g, x.c),
                       sc->ld);
        return;
    }
    if (const std::string why = unfit(left, *sa, *sc); !why.empty()) {
        if (c.speaker()) say(cat(c.head, "ScaLAPACK: a layout cala::", fn, " does not take (", why, ")"));
        call_scalapack<T, K>(x);
        return;
    }
    const MatrixRef<T> av = view(*grid, *sa, x.a), bv = view(*grid, *sb, x.b), cv = view(*grid, *sc, x.c);
    const Side side = left ? Side::Left : Side::Right;
    const Uplo uplo = u == 'L' ? Uplo::Lower : Uplo::Upper;
    // 4. In place on 2DBC, or through a symmetric layout (sym_route.hpp): the model decides.
    const SymProblem prob{false, side, uplo, Op::N, av.layout(), bv.layout(), cv.layout(), beta == T(0),
                          grid->order(), sizeof(T), is_complex_v<T>};
    const SymDecision d = route_call(prob);
    const bool move_b = !(bv.layout() == cv.layout());
    if (c.speaker())
        say(cat(c.head, "cala: ", fn, d.pick().layout ? " on a symmetric layout" : "",
                move_b && !d.pick().layout ? " (B redistributed into C's layout)" : "", ", nb=", sa->rows.dist.nb, ", ",
                d.describe()));
    cala_or_scalapack(
        rout, g,
        [&] {
            if (d.pick().layout) {
                symm_on_pattern<T, K == Kind::Hemm>(*grid, symmetric_layouts(prob, *d.pick().layout), side, alpha, av,
                                                    bv, beta, cv);
                return;
            }
            detail::Buffer<T> wbuf;
            MatrixRef<T> b_in = bv;
            if (move_b) {
                b_in = workspace(*grid, sc->rows.dist, sc->cols.dist, wbuf);
                redistribute(Op::N, bv, b_in);
            }
            if constexpr (K == Kind::Hemm) hemm(side, uplo, alpha, av, b_in, beta, cv);
            else symm(side, uplo, alpha, av, b_in, beta, cv);
        },
        [&] { call_scalapack<T, K>(x); });
}

template <class T, Kind K>
void entry(const Args<T>& x) noexcept {
    run_entry(
        routine<T, K>().name.c_str(),
        [&] { return detail::cat("side=", x.side[0], " uplo=", x.uplo[0], " m=", *x.m, " n=", *x.n); },
        [&] { psymm<T, K>(x); }, [&] { call_scalapack<T, K>(x); });
}

}  // namespace

}  // namespace cala::scalapack

// Every spelling a Fortran or C caller may use (PBLAS is C: no hidden lengths).
#define CALA_PSYMM_ENTRY(sym, T, K)                                                                                \
    extern "C" __attribute__((visibility("default"))) void sym(                                                   \
        const char *side, const char *uplo, const int *m, const int *n, const T *alpha, const T *a, const int *ia, \
        const int *ja, const int *desca, const T *b, const int *ib, const int *jb, const int *descb,              \
        const T *beta, T *c, const int *ic, const int *jc, const int *descc) {                                    \
        cala::scalapack::entry<T, cala::scalapack::Kind::K>(                                                      \
            {side, uplo, m, n, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc});               \
    }
#define CALA_PSYMM_SPELLINGS(lower, upper, T, K) \
    CALA_PSYMM_ENTRY(lower##_, T, K) CALA_PSYMM_ENTRY(lower, T, K) CALA_PSYMM_ENTRY(upper, T, K)

CALA_PSYMM_SPELLINGS(pssymm, PSSYMM, float, Symm)
CALA_PSYMM_SPELLINGS(pdsymm, PDSYMM, double, Symm)
CALA_PSYMM_SPELLINGS(pcsymm, PCSYMM, std::complex<float>, Symm)
CALA_PSYMM_SPELLINGS(pzsymm, PZSYMM, std::complex<double>, Symm)
CALA_PSYMM_SPELLINGS(pchemm, PCHEMM, std::complex<float>, Hemm)
CALA_PSYMM_SPELLINGS(pzhemm, PZHEMM, std::complex<double>, Hemm)

// p?ormqr_ (s, d) and p?unmqr_ (c, z) of ScaLAPACK, computed by cala.
//
// p?ormqr_ (Fortran ABI) -> m·n·k below the threshold: ScaLAPACK, nothing else (decline) ->
// ScaLAPACK's checks (CHK1MAT on A and C, WORK(1) := LWMIN, p?ormqr's own, LWORK) -> agree over
// the BLACS grid, PCHK2MAT's consistency checks included (context) -> route: nothing (m, n or
// k = 0, a workspace query) | ScaLAPACK's own (A's blocks not square or sub(A) not starting one,
// sub(C) not starting a block) | TAU read along the process row (qr_tau: one allreduce), then
// cala::ormqr on MatrixRefs over the caller's local arrays (qr/ -> blocked reflectors; kernels:
// LAPACK larft, BLIS gemm/trmm)

#include <complex>
#include <cstddef>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "cala/qr.hpp"
#include "core/check.hpp"
#include "scalapack/blacs.hpp"
#include "scalapack/context.hpp"
#include "scalapack/decline.hpp"
#include "scalapack/descriptor.hpp"
#include "scalapack/qr_tau.hpp"
#include "scalapack/report.hpp"
#include "scalapack/settle.hpp"
#include "scalapack/view.hpp"

namespace cala::scalapack {

namespace {

// The routine for T, named on first use: p?ormqr for real types, p?unmqr for complex ones.
template <class T>
const RoutineId& routine() {
    static const RoutineId r = routine_id<T>(is_complex_v<T> ? "UNMQR" : "ORMQR");
    return r;
}

// ScaLAPACK is Fortran: SIDE's and TRANS's hidden lengths come last.
template <class T>
using PormqrFn = void (*)(const char*, const char*, const int*, const int*, const int*, const T*, const int*,
                          const int*, const int*, const T*, T*, const int*, const int*, const int*, T*, const int*,
                          int*, std::size_t, std::size_t);

template <class T>
struct Args {
    const char *side, *trans;
    const int *m, *n, *k;
    const T* a;
    const int *ia, *ja, *desca;
    const T* tau;
    T* c;
    const int *ic, *jc, *descc;
    T* work;
    const int* lwork;
    int* info;
};

template <class T>
void call_scalapack(const Args<T>& x) {
    mark_ran(Ran::Scalapack);
    static const auto real = real_routine<PormqrFn<T>>(routine<T>().symbol);
    real(x.side, x.trans, x.m, x.n, x.k, x.a, x.ia, x.ja, x.desca, x.tau, x.c, x.ic, x.jc, x.descc, x.work, x.lwork,
         x.info, 1, 1);
}

constexpr int kArgA = 9, kArgC = 14;  // DESCA's and DESCC's positions in the argument list
constexpr int kMult = ArgCheck::kDescMult;

// p?ormqr's checks, in ScaLAPACK's order (see the file's head); `lwmin` receives LWMIN once the
// CHK1MATs pass (WORK(1) is written then, as ScaLAPACK does).
template <class T>
ArgCheck check_args(const Args<T>& x, const GridPos& g, index_t& lwmin) {
    using detail::cat;
    const char s = option(x.side), t = option(x.trans);
    const bool left = s == 'L';
    const int m = *x.m, n = *x.n, k = *x.k, ia = *x.ia, ja = *x.ja, ic = *x.ic, jc = *x.jc;
    const int nq = left ? m : n;
    const int *da = x.desca, *dc = x.descc;
    ArgCheck chk;
    if (left) chk1mat(chk, "A", g, m, 3, k, 5, ia, ja, da, kArgA);
    else chk1mat(chk, "A", g, n, 4, k, 5, ia, ja, da, kArgA);
    chk1mat(chk, "C", g, m, 3, n, 4, ic, jc, dc, kArgC);
    if (!chk.ok()) return chk;
    lwmin = ormqr_lwmin(left, m, n, ia, ic, jc, da, dc, g);
    if (x.work != nullptr) x.work[0] = T(static_cast<real_t<T>>(lwmin));
    const int mba = da[SL_MB - 1], mbc = dc[SL_MB - 1], nbc = dc[SL_NB - 1];
    const int iroffa = (ia - 1) % mba, iroffc = (ic - 1) % mbc, icoffc = (jc - 1) % nbc;
    const char other = is_complex_v<T> ? 'C' : 'T';
    if (!left && s != 'R') chk.fail(1 * kMult, cat("SIDE = '", x.side[0], "'"));
    else if (t != 'N' && t != other) chk.fail(2 * kMult, cat("TRANS = '", x.trans[0], "'"));
    else if (k < 0 || k > nq) chk.fail(5 * kMult, cat("K = ", k, " is not in [0, ", nq, "]"));
    else if (!left && mba != nbc) chk.fail(kArgA * kMult + SL_NB, cat("DESCA MB = ", mba, " differs from C's NB = ", nbc));
    else if (left && iroffa != iroffc) chk.fail(12 * kMult, cat("IC = ", ic, " is not aligned with IA = ", ia));
    else if (left && indxg2p(ia, mba, da[SL_RSRC - 1], g.p) != indxg2p(ic, mbc, dc[SL_RSRC - 1], g.p))
        chk.fail(12 * kMult, cat("sub(C) (IC = ", ic, ") starts in another process row than sub(A)"));
    else if (!left && iroffa != icoffc) chk.fail(13 * kMult, cat("JC = ", jc, " is not aligned with IA = ", ia));
    else if (left && mba != mbc) chk.fail(kArgC * kMult + SL_MB, cat("DESCC MB = ", mbc, " differs from A's MB = ", mba));
    else if (dc[SL_CTXT - 1] != da[SL_CTXT - 1])
        chk.fail(kArgC * kMult + SL_CTXT, cat("DESCC context ", dc[SL_CTXT - 1], " is not A's ", da[SL_CTXT - 1]));
    else if (*x.lwork < lwmin && *x.lwork != -1)
        chk.fail(16 * kMult, cat("LWORK = ", *x.lwork, " < ", lwmin, " (LWMIN)"));
    return chk;
}

template <class T>
void pormqr(const Args<T>& x) {
    using detail::cat;
    *x.info = 0;
    const char s = option(x.side), t = option(x.trans);
    const bool left = s == 'L', query = *x.lwork == -1;
    const int m = *x.m, n = *x.n, k = *x.k, ia = *x.ia, ja = *x.ja;

    // 0. Below the threshold: ScaLAPACK's, before anything else (decline.hpp).
    if (const double size = static_cast<double>(m) * n * k; declines(size, {m, n, k})) {
        if (settings().verbose)
            say_declined(x.desca[SL_CTXT - 1], cat(routine<T>().name, "(", s, ",", t, ") m=", m, " n=", n, " k=", k),
                         "m*n*k", size);
        return call_scalapack(x);
    }
    Call c{routine<T>().name.c_str(), x.desca[SL_CTXT - 1], {}, settings().verbose, ""};
    Cblacs_gridinfo(c.ctxt, &c.g.p, &c.g.q, &c.g.row, &c.g.col);
    if (c.verbose) c.head = cat(c.rout, "(", s, ",", t, ") m=", m, " n=", n, " k=", k, " on ", c.g.p, "x", c.g.q, " -> ");

    // 1. ScaLAPACK's checks, in ScaLAPACK's order.
    if (foreign_context(c, kArgA, x.info)) return;
    index_t lwmin = 0;
    ArgCheck chk = check_args(x, c.g, lwmin);
    const bool work = m > 0 && n > 0 && k > 0 && !query;
    const int nq = left ? m : n;
    check_array(chk, "A", x.a, work, read_descriptor(x.desca), c.g, 6);
    check_array(chk, "C", x.c, work, read_descriptor(x.descc), c.g, 11);
    // PCHK2MAT: what must be the same on every process of the grid.
    std::vector<SameArg> same = {{nq, (left ? 3 : 4) * kMult}, {k, 5 * kMult}, {ia, 7 * kMult}, {ja, 8 * kMult}};
    same_descriptor(same, x.desca, kArgA);
    same.insert(same.end(), {{m, 3 * kMult}, {n, 4 * kMult}, {*x.ic, 12 * kMult}, {*x.jc, 13 * kMult}});
    same_descriptor(same, x.descc, kArgC);
    same.insert(same.end(), {{left ? 'L' : 'R', 1 * kMult}, {t == 'N' ? 'N' : 'T', 2 * kMult}, {k, 5 * kMult},
                             {query ? -1 : 1, 16 * kMult}});

    // 2. Where the call goes. cala::ormqr, with A's blocks square and sub(A) starting one, and sub(C)
    // starting a block along the index Q acts on: its rows for SIDE = L (ScaLAPACK puts them in
    // sub(A)'s process row), its columns for SIDE = R (ScaLAPACK's NB_C = MB_A; any process column).
    const Route route = work ? Route::Cala : Route::Nothing;
    std::optional<SubMatrix> sa, sc;
    const int mba = x.desca[SL_MB - 1], nba = x.desca[SL_NB - 1];
    const bool blocks = mba == nba && (ia - 1) % mba == 0 && (ja - 1) % nba == 0 &&
                        (left ? (*x.ic - 1) % x.descc[SL_MB - 1] == 0 : (*x.jc - 1) % x.descc[SL_NB - 1] == 0);
    if (chk.ok() && route == Route::Cala && blocks) {
        sa = sub_matrix(read_descriptor(x.desca), c.g, ia, ja, nq, k);
        sc = sub_matrix(read_descriptor(x.descc), c.g, *x.ic, *x.jc, m, n);
    }
    const bool layouts = !chk.ok() || route != Route::Cala || (sa && sc);

    // 3. One allreduce over the grid.
    const Grid2D* grid = settle(c, chk, route, layouts, same,
                                "an operand has no cala layout (cala::ormqr takes A's MB = NB, sub(A) starting a block, "
                                "sub(C)'s rows (SIDE = L) or columns (SIDE = R) starting one)",
                                x.info, [&] { call_scalapack(x); });
    if (grid == nullptr) return;

    // 4. TAU along the process row (one allreduce), then cala::ormqr in place, then WORK(1).
    const std::vector<T> tau = read_tau(grid->row_comm().get(), k, ja, x.desca, c.g, x.tau);
    const MatrixRef<T> av = view(*grid, *sa, x.a), cv = view(*grid, *sc, x.c);
    const Side side = left ? Side::Left : Side::Right;
    const Op op = t == 'N' ? Op::N : is_complex_v<T> ? Op::C : Op::T;
    if (c.speaker()) say(cat(c.head, "cala: ormqr (blocked reflectors of geqrf) nb=", nba));
    cala_or_scalapack(
        c.rout, c.g,
        [&] {
            ormqr(side, op, av, tau, cv);
            x.work[0] = T(static_cast<real_t<T>>(lwmin));
        },
        [&] { call_scalapack(x); });
}

// The C boundary: nothing escapes into Fortran.
template <class T>
void entry(const Args<T>& x) noexcept {
    run_entry(
        routine<T>().name.c_str(),
        [&] {
            return detail::cat("side=", x.side[0], " trans=", x.trans[0], " m=", *x.m, " n=", *x.n, " k=", *x.k);
        },
        [&] { pormqr(x); }, [&] { call_scalapack(x); });
}

}  // namespace

}  // namespace cala::scalapack

#define CALA_PORMQR_PARAMS(T)                                                                                      \
    const char *side, const char *trans, const int *m, const int *n, const int *k, const T *a, const int *ia,      \
        const int *ja, const int *desca, const T *tau, T *c, const int *ic, const int *jc, const int *descc, T *work, \
        const int *lwork, int *info
#define CALA_PORMQR_ENTRY(sym, T)                                                                                  \
    extern "C" __attribute__((visibility("default"))) void sym(CALA_PORMQR_PARAMS(T)) {                           \
        cala::scalapack::entry<T>({side, trans, m, n, k, a, ia, ja, desca, tau, c, ic, jc, descc, work, lwork, info}); \
    }
#define CALA_PORMQR_SPELLINGS(lower, upper, T) \
    CALA_PORMQR_ENTRY(lower##_, T) CALA_PORMQR_ENTRY(lower, T) CALA_PORMQR_ENTRY(upper, T)

CALA_PORMQR_SPELLINGS(psormqr, PSORMQR, float)
CALA_PORMQR_SPELLINGS(pdormqr, PDORMQR, double)
CALA_PORMQR_SPELLINGS(pcunmqr, PCUNMQR, std::complex<float>)
CALA_PORMQR_SPELLINGS(pzunmqr, PZUNMQR, std::complex<double>)

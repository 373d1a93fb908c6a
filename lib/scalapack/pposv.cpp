// p?posv_ of ScaLAPACK, computed by cala: p?potrf then p?potrs, as ScaLAPACK's p?posv does.
//
// p?posv_ (Fortran ABI) -> ScaLAPACK's checks (CHK1MAT on A, p?posv's own; the shim also runs
// CHK1MAT on B, which p?posv leaves to p?potrs: descriptor) -> agree over the BLACS grid,
// PCHK2MAT's consistency checks included (context) -> route: nothing | ScaLAPACK (small) |
// cala::potrf, then (info == 0) cala::potrs on MatrixRefs over the caller's local arrays
// (cholesky/ -> right-looking tile loop; cholesky/solve/ -> cala::trsm twice)

#include <cctype>
#include <complex>
#include <cstddef>
#include <exception>
#include <optional>

#include "cala/cholesky.hpp"
#include "core/check.hpp"
#include "scalapack/blacs.hpp"
#include "scalapack/context.hpp"
#include "scalapack/descriptor.hpp"
#include "scalapack/report.hpp"
#include "scalapack/settle.hpp"
#include "scalapack/view.hpp"

namespace cala::scalapack {

namespace {

// The routine for T, named on first use.
template <class T>
const RoutineId& routine() {
    static const RoutineId r = routine_id<T>("POSV");
    return r;
}

// ScaLAPACK is Fortran: UPLO's hidden length comes last.
template <class T>
using PposvFn = void (*)(const char*, const int*, const int*, const T*, const int*, const int*, const int*, T*,
                          const int*, const int*, const int*, int*, std::size_t);

template <class T>
struct Args {
    const char* uplo;
    const int *n, *nrhs;
    const T* a;
    const int *ia, *ja, *desca;
    T* b;
    const int *ib, *jb, *descb;
    int* info;
};

template <class T>
void call_scalapack(const Args<T>& x) {
    mark_ran(Ran::Scalapack);
    static const auto real = real_routine<PposvFn<T>>(routine<T>().symbol);
    real(x.uplo, x.n, x.nrhs, x.a, x.ia, x.ja, x.desca, x.b, x.ib, x.jb, x.descb, x.info, 1);
}

// ScaLAPACK's p?potrs_ on A's factor (when cala factored A but cannot solve).
template <class T>
void call_scalapack_potrs(const Args<T>& x) {
    mark_ran(Ran::Scalapack);
    static const auto real = real_routine<PposvFn<T>>(routine_id<T>("POTRS").symbol);
    real(x.uplo, x.n, x.nrhs, x.a, x.ia, x.ja, x.desca, x.b, x.ib, x.jb, x.descb, x.info, 1);
}

constexpr int kArgA = 7, kArgB = 11;  // DESCA's and DESCB's positions in p?posv's argument list
constexpr int kMult = ArgCheck::kDescMult;

// The process row holding global row i (1-based) of a matrix with this row blocking (INDXG2P).
int owner_row(int i, int mb, int rsrc, int p) { return (rsrc + (i - 1) / mb) % p; }

// p?posv's checks (p?potrs's argument list and checks), in ScaLAPACK's order: CHK1MAT on A (N 2,
// IA 5, JA 6, DESCA 7) and on B
// (N 2, NRHS 3, IB 9, JB 10, DESCB 11), then, when they pass, UPLO (1), IA and JA on a block
// boundary (5, 6), A's MB == NB (DESCA entry 6), sub(B) starting on a block boundary in the
// process row of sub(A) (9), B's MB == A's NB (DESCB entry 6), B in A's context (DESCB entry 2).
template <class T>
ArgCheck check_args(const Args<T>& x, const GridPos& g) {
    using detail::cat;
    const int n = *x.n, nrhs = *x.nrhs, ia = *x.ia, ja = *x.ja, ib = *x.ib;
    ArgCheck chk;
    chk1mat(chk, "A", g, n, 2, n, 2, ia, ja, x.desca, kArgA);
    chk1mat(chk, "B", g, n, 2, nrhs, 3, ib, *x.jb, x.descb, kArgB);
    if (!chk.ok()) return chk;
    const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(x.uplo[0])));
    const int mba = x.desca[SL_MB - 1], nba = x.desca[SL_NB - 1], mbb = x.descb[SL_MB - 1];
    if (u != 'U' && u != 'L') chk.fail(1 * kMult, cat("UPLO = '", x.uplo[0], "'"));
    else if ((ia - 1) % mba != 0) chk.fail(5 * kMult, cat("IA = ", ia, " does not start a block of MB = ", mba));
    else if ((ja - 1) % nba != 0) chk.fail(6 * kMult, cat("JA = ", ja, " does not start a block of NB = ", nba));
    else if (mba != nba) chk.fail(kArgA * kMult + SL_NB, cat("DESCA MB = ", mba, " differs from NB = ", nba));
    else if ((ib - 1) % mbb != 0 ||
             owner_row(ib, mbb, x.descb[SL_RSRC - 1], g.p) != owner_row(ia, mba, x.desca[SL_RSRC - 1], g.p))
        chk.fail(9 * kMult, cat("sub(B) (IB = ", ib, ") does not start a block in the process row of sub(A)"));
    else if (mbb != nba) chk.fail(kArgB * kMult + SL_NB, cat("DESCB MB = ", mbb, " differs from A's NB = ", nba));
    else if (x.descb[SL_CTXT - 1] != x.desca[SL_CTXT - 1])
        chk.fail(kArgB * kMult + SL_CTXT,
                 cat("DESCB context ", x.descb[SL_CTXT - 1], " is not A's context ", x.desca[SL_CTXT - 1]));
    return chk;
}

template <class T>
void pposv(const Args<T>& x) {
    using detail::cat;
    *x.info = 0;
    const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(x.uplo[0])));
    const bool upper = u == 'U';
    const int n = *x.n, nrhs = *x.nrhs;
    Call c{routine<T>().name.c_str(), x.desca[SL_CTXT - 1], {}, settings().verbose, ""};
    Cblacs_gridinfo(c.ctxt, &c.g.p, &c.g.q, &c.g.row, &c.g.col);
    if (c.verbose) c.head = cat(c.rout, "(", u, ") n=", n, " nrhs=", nrhs, " on ", c.g.p, "x", c.g.q, " -> ");

    // 1. ScaLAPACK's checks, in ScaLAPACK's order.
    if (foreign_context(c, kArgA, x.info)) return;
    ArgCheck chk = check_args(x, c.g);
    check_array(chk, "A", x.a, n > 0 && nrhs > 0, read_descriptor(x.desca), c.g, 4);
    check_array(chk, "B", x.b, n > 0 && nrhs > 0, read_descriptor(x.descb), c.g, 8);
    // PCHK2MAT: what must be the same on every process of the grid.
    std::vector<SameArg> same = {{n, 2 * kMult}, {*x.ia, 5 * kMult}, {*x.ja, 6 * kMult}};
    same_descriptor(same, x.desca, kArgA);
    same.insert(same.end(), {{nrhs, 3 * kMult}, {*x.ib, 9 * kMult}, {*x.jb, 10 * kMult}});
    same_descriptor(same, x.descb, kArgB);
    same.push_back({upper ? 'U' : 'L', 1 * kMult});

    // 2. Where the call goes.
    const double size = static_cast<double>(n) * n * n;  // the factorization's
    const Route route =
        n == 0 || nrhs == 0 ? Route::Nothing : size < settings().threshold ? Route::Small : Route::Cala;
    std::optional<SubMatrix> sa, sb;
    if (chk.ok() && route == Route::Cala) {
        sa = sub_matrix(read_descriptor(x.desca), c.g, *x.ia, *x.ja, n, n);
        sb = sub_matrix(read_descriptor(x.descb), c.g, *x.ib, *x.jb, n, nrhs);
    }
    const bool layouts = !chk.ok() || route != Route::Cala || (sa && sb);

    // 3. One allreduce over the grid.
    const Grid2D* grid = settle(c, chk, route, layouts, same, "an operand has no cala layout",
                                cat("n^3 = ", static_cast<long long>(size)), x.info, [&] { call_scalapack(x); });
    if (grid == nullptr) return;

    // 4. The work: cala::potrf, then cala::potrs, in place on the caller's local arrays. Each
    // step that cala declines (cala::Error, raised on every process before any data moved) is
    // ScaLAPACK's: the whole p?posv before the factorization, p?potrs after it.
    const MatrixRef<T> av = view(*grid, *sa, x.a), bv = view(*grid, *sb, x.b);
    const Uplo uplo = upper ? Uplo::Upper : Uplo::Lower;
    if (c.speaker())
        say(cat(c.head, "cala: potrf (",
                plan_potrf(uplo, av.layout(), grid->order(), CholeskyOptions{}, sizeof(T), is_complex_v<T>).describe(),
                "), then potrs (cala::trsm twice)"));
    bool factored = false;
    cala_or_scalapack(
        c.rout, c.g,
        [&] {
            *x.info = static_cast<int>(potrf(uplo, av));
            factored = true;
        },
        [&] { call_scalapack(x); });
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

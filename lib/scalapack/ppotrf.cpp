// p?potrf_ of ScaLAPACK, computed by cala.
//
// p?potrf_ (Fortran ABI) -> n³ below the threshold: ScaLAPACK, nothing else (decline) ->
// ScaLAPACK's checks (CHK1MAT and p?potrf's own: descriptor) -> agree over the BLACS grid,
// PCHK1MAT's consistency checks included (context) -> route: nothing | with CALA_DEVICES, where
// the model says the copies pay: sub(A)'s triangle copied to the rank's device, cala::potrf on a
// ResidentMatrix, the factored triangle copied back (resident_route.hpp) | cala::potrf on a
// MatrixRef over the caller's local array (cholesky/ -> kernels: LAPACK potrf, BLIS trsm/herk/gemm)

#include <cctype>
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
#include "scalapack/view.hpp"

namespace cala::scalapack {

namespace {

// The routine for T, named on first use.
template <class T>
const RoutineId& routine() {
    static const RoutineId r = routine_id<T>("POTRF");
    return r;
}

// ScaLAPACK is Fortran: UPLO's hidden length comes last.
template <class T>
using PpotrfFn = void (*)(const char*, const int*, T*, const int*, const int*, const int*, int*, std::size_t);

template <class T>
struct Args {
    const char* uplo;
    const int* n;
    T* a;
    const int *ia, *ja, *desca;
    int* info;
};

template <class T>
void call_scalapack(const Args<T>& x) {
    mark_ran(Ran::Scalapack);
    static const auto real = real_routine<PpotrfFn<T>>(routine<T>().symbol);
    real(x.uplo, x.n, x.a, x.ia, x.ja, x.desca, x.info, 1);
}

constexpr int kArgA = 6;  // DESCA's position in p?potrf's argument list
constexpr int kMult = ArgCheck::kDescMult;

// p?potrf's checks, in ScaLAPACK's order: CHK1MAT on A (N 2, IA 4, JA 5, DESCA 6), then, when
// it passes, UPLO (1), IA and JA on a block boundary (4, 5), MB == NB (DESCA entry 6).
ArgCheck check_args(char uplo, int n, int ia, int ja, const int* desca, const GridPos& g) {
    using detail::cat;
    ArgCheck chk;
    chk1mat(chk, "A", g, n, 2, n, 2, ia, ja, desca, kArgA);
    if (!chk.ok()) return chk;
    const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(uplo)));
    const int mb = desca[SL_MB - 1], nb = desca[SL_NB - 1];
    if (u != 'U' && u != 'L') chk.fail(1 * kMult, cat("UPLO = '", uplo, "'"));
    else if ((ia - 1) % mb != 0) chk.fail(4 * kMult, cat("IA = ", ia, " does not start a block of MB = ", mb));
    else if ((ja - 1) % nb != 0) chk.fail(5 * kMult, cat("JA = ", ja, " does not start a block of NB = ", nb));
    else if (mb != nb) chk.fail(kArgA * kMult + SL_NB, cat("DESCA MB = ", mb, " differs from NB = ", nb));
    return chk;
}

template <class T>
void ppotrf(const Args<T>& x) {
    using detail::cat;
    *x.info = 0;
    const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(x.uplo[0])));
    const bool upper = u == 'U';
    const int n = *x.n;

    // 0. Below the threshold: ScaLAPACK's, before anything else (decline.hpp).
    if (const double size = static_cast<double>(n) * n * n; declines(size, {n})) {
        if (settings().verbose)
            say_declined(x.desca[SL_CTXT - 1], cat(routine<T>().name, "(", u, ") n=", n), "n^3", size);
        return call_scalapack(x);
    }
    Call c{routine<T>().name.c_str(), x.desca[SL_CTXT - 1], {}, settings().verbose, ""};
    Cblacs_gridinfo(c.ctxt, &c.g.p, &c.g.q, &c.g.row, &c.g.col);
    if (c.verbose) c.head = cat(c.rout, "(", u, ") n=", n, " on ", c.g.p, "x", c.g.q, " -> ");

    // 1. ScaLAPACK's checks, in ScaLAPACK's order.
    if (foreign_context(c, kArgA, x.info)) return;
    ArgCheck chk = check_args(x.uplo[0], n, *x.ia, *x.ja, x.desca, c.g);
    check_array(chk, "A", x.a, n > 0, read_descriptor(x.desca), c.g, 3);
    // PCHK1MAT: what must be the same on every process of the grid.
    std::vector<SameArg> same = {{n, 2 * kMult}, {*x.ia, 4 * kMult}, {*x.ja, 5 * kMult}};
    same_descriptor(same, x.desca, kArgA);
    same.push_back({upper ? 'U' : 'L', 1 * kMult});

    // 2. Where the call goes (the same on every process when the arguments agree).
    const Route route = n == 0 ? Route::Nothing : Route::Cala;
    std::optional<SubMatrix> sa;
    if (chk.ok() && route == Route::Cala) sa = sub_matrix(read_descriptor(x.desca), c.g, *x.ia, *x.ja, n, n);
    const bool layouts = !chk.ok() || route != Route::Cala || sa.has_value();

    // 3. One allreduce over the grid: the first illegal or inconsistent argument, layouts, cache.
    const Grid2D* grid =
        settle(c, chk, route, layouts, same, "A has no cala layout", x.info, [&] { call_scalapack(x); });
    if (grid == nullptr) return;

    // 4. The work: on the rank's device when CALA_DEVICES names one and the model says the copies
    // pay, else cala::potrf in place on the caller's local array.
    const MatrixRef<T> av = view(*grid, *sa, x.a);
    const Uplo uplo = upper ? Uplo::Upper : Uplo::Lower;
    factor_routed<T>(c, uplo, av, x.info, "", [&] {
        if (c.speaker())
            say(cat(c.head, "cala: ",
                    plan_potrf(uplo, av.layout(), grid->order(), CholeskyOptions{}, sizeof(T), is_complex_v<T>)
                        .describe()));
    }, [&] { call_scalapack(x); });
}

// The C boundary: nothing escapes into Fortran.
template <class T>
void entry(const Args<T>& x) noexcept {
    run_entry(
        routine<T>().name.c_str(), [&] { return detail::cat("uplo=", x.uplo[0], " n=", *x.n); }, [&] { ppotrf(x); }, [&] { call_scalapack(x); });
}

}  // namespace

}  // namespace cala::scalapack

// Every spelling a Fortran or C caller may use; a Fortran caller's hidden length of UPLO is
// ignored by the C ABI.
#define CALA_PPOTRF_ENTRY(sym, T)                                                                                \
    extern "C" __attribute__((visibility("default"))) void sym(const char* uplo, const int* n, T* a, const int* ia, \
                                                               const int* ja, const int* desca, int* info) {       \
        cala::scalapack::entry<T>({uplo, n, a, ia, ja, desca, info});                                            \
    }
#define CALA_PPOTRF_SPELLINGS(lower, upper, T) \
    CALA_PPOTRF_ENTRY(lower##_, T) CALA_PPOTRF_ENTRY(lower, T) CALA_PPOTRF_ENTRY(upper, T)

CALA_PPOTRF_SPELLINGS(pspotrf, PSPOTRF, float)
CALA_PPOTRF_SPELLINGS(pdpotrf, PDPOTRF, double)
CALA_PPOTRF_SPELLINGS(pcpotrf, PCPOTRF, std::complex<float>)
CALA_PPOTRF_SPELLINGS(pzpotrf, PZPOTRF, std::complex<double>)

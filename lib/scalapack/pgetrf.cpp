// p?getrf_ of ScaLAPACK, computed by cala.
//
// p?getrf_ (Fortran ABI) -> m·n·min(m, n) below the threshold: ScaLAPACK, nothing else (decline)
// -> ScaLAPACK's checks (CHK1MAT and p?getrf's own: descriptor) -> agree over the BLACS grid,
// PCHK1MAT's consistency checks included (context) -> route: nothing | cala::getrf on a
// MatrixRef over the caller's local array (lu/ -> kernels: LAPACK getrf, BLIS trsm/gemm; a p x 1
// grid's matrix moved onto the 1 x p grid of its ranks and back, LuVariant::OneRow), its
// pivots written into IPIV as ScaLAPACK's p?getrf leaves them (lu_pivots)

#include <complex>
#include <cstddef>
#include <exception>
#include <string>
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
#include "scalapack/view.hpp"

namespace cala::scalapack {

namespace {

// The routine for T, named on first use.
template <class T>
const RoutineId& routine() {
    static const RoutineId r = routine_id<T>("GETRF");
    return r;
}

template <class T>
using PgetrfFn = void (*)(const int*, const int*, T*, const int*, const int*, const int*, int*, int*);

template <class T>
struct Args {
    const int *m, *n;
    T* a;
    const int *ia, *ja, *desca;
    int *ipiv, *info;
};

template <class T>
void call_scalapack(const Args<T>& x) {
    mark_ran(Ran::Scalapack);
    static const auto real = real_routine<PgetrfFn<T>>(routine<T>().symbol);
    real(x.m, x.n, x.a, x.ia, x.ja, x.desca, x.ipiv, x.info);
}

constexpr int kArgA = 6;  // DESCA's position in p?getrf's argument list
constexpr int kMult = ArgCheck::kDescMult;

// p?getrf's checks, in ScaLAPACK's order: CHK1MAT on A (M 1, N 2, IA 4, JA 5, DESCA 6), then,
// when it passes, IA and JA on a block boundary (4, 5), MB == NB (DESCA entry 6).
ArgCheck check_args(int m, int n, int ia, int ja, const int* desca, const GridPos& g) {
    using detail::cat;
    ArgCheck chk;
    chk1mat(chk, "A", g, m, 1, n, 2, ia, ja, desca, kArgA);
    if (chk.ok()) check_lu_block(chk, ia, ja, desca, 4, kArgA);
    return chk;
}

template <class T>
void pgetrf(const Args<T>& x) {
    using detail::cat;
    *x.info = 0;
    const int m = *x.m, n = *x.n;

    // 0. Below the threshold: ScaLAPACK's, before anything else (decline.hpp).
    if (const double size = lu_size(m, n); declines(size, {m, n})) {
        if (settings().verbose)
            say_declined(x.desca[SL_CTXT - 1], cat(routine<T>().name, " m=", m, " n=", n), "m*n*min(m,n)", size);
        return call_scalapack(x);
    }
    Call c{routine<T>().name.c_str(), x.desca[SL_CTXT - 1], {}, settings().verbose, ""};
    Cblacs_gridinfo(c.ctxt, &c.g.p, &c.g.q, &c.g.row, &c.g.col);
    if (c.verbose) c.head = cat(c.rout, " m=", m, " n=", n, " on ", c.g.p, "x", c.g.q, " -> ");

    // 1. ScaLAPACK's checks, in ScaLAPACK's order.
    if (foreign_context(c, kArgA, x.info)) return;
    ArgCheck chk = check_args(m, n, *x.ia, *x.ja, x.desca, c.g);
    check_array(chk, "A", x.a, m > 0 && n > 0, read_descriptor(x.desca), c.g, 3);
    if (chk.ok() && x.ipiv == nullptr && m > 0 && n > 0) chk.fail(7 * kMult, "IPIV is a null pointer");
    // PCHK1MAT: what must be the same on every process of the grid.
    std::vector<SameArg> same = {{m, 1 * kMult}, {n, 2 * kMult}, {*x.ia, 4 * kMult}, {*x.ja, 5 * kMult}};
    same_descriptor(same, x.desca, kArgA);

    // 2. Where the call goes. ScaLAPACK returns at once for a one-row matrix (M_A = 1: IPIV(1) = 1)
    // and for m = 0 or n = 0.
    const bool one_row = x.desca[SL_M - 1] == 1;
    const Route route = one_row || m == 0 || n == 0 ? Route::Nothing : Route::Cala;
    std::optional<SubMatrix> sa;
    if (chk.ok() && route == Route::Cala) sa = sub_matrix(read_descriptor(x.desca), c.g, *x.ia, *x.ja, m, n);
    const bool layouts = !chk.ok() || route != Route::Cala || sa.has_value();

    // 3. One allreduce over the grid: the first illegal or inconsistent argument, layouts, cache.
    const Grid2D* grid =
        settle(c, chk, route, layouts, same, "A has no cala layout", x.info, [&] { call_scalapack(x); });
    if (grid == nullptr) {
        if (route == Route::Nothing && one_row && *x.info == 0) x.ipiv[0] = 1;
        return;
    }

    // 4. The work: cala::getrf in place on the caller's local array, then IPIV.
    const MatrixRef<T> av = view(*grid, *sa, x.a);
    if (c.speaker()) say(cat(c.head, "cala: ", describe_getrf(av.layout(), sizeof(T), is_complex_v<T>)));
    cala_or_scalapack(
        c.rout, c.g,
        [&] {
            std::vector<index_t> piv;
            *x.info = static_cast<int>(getrf(av, piv));
            write_ipiv(piv, *x.ia, x.desca, c.g, x.ipiv);
        },
        [&] { call_scalapack(x); });
}

// The C boundary: nothing escapes into Fortran.
template <class T>
void entry(const Args<T>& x) noexcept {
    run_entry(
        routine<T>().name.c_str(), [&] { return detail::cat("m=", *x.m, " n=", *x.n); }, [&] { pgetrf(x); },
        [&] { call_scalapack(x); });
}

}  // namespace

std::string describe_getrf(const BlockCyclic& a, std::size_t elem_size, bool is_complex) {
    using detail::cat;
    // Never throws: only grid process (0, 0) asks, and the others must not part ways with it.
    try {
        const Cost cost = getrf_cost(a, LuOptions{}, 0, 0, elem_size, is_complex);
        const bool one_row = getrf_variant(a, LuOptions{}, elem_size) == LuVariant::OneRow;
        return cat("getrf (CALU: tournament pivoting, ", one_row ? "on the 1 x p grid of the ranks" : "2D",
                   ", lookahead 1) nb=", a.rows.nb,
                   " words/rank(0,0)<=", cost.words, " msgs=", cost.msgs, " memory=", cost.extra_bytes);
    } catch (const std::exception& e) {
        return cat("getrf (CALU: tournament pivoting) nb=", a.rows.nb, " (no model: ", e.what(), ")");
    }
}

}  // namespace cala::scalapack

// Every spelling a Fortran or C caller may use.
#define CALA_PGETRF_ENTRY(sym, T)                                                                               \
    extern "C" __attribute__((visibility("default"))) void sym(const int* m, const int* n, T* a, const int* ia, \
                                                               const int* ja, const int* desca, int* ipiv,      \
                                                               int* info) {                                     \
        cala::scalapack::entry<T>({m, n, a, ia, ja, desca, ipiv, info});                                      \
    }
#define CALA_PGETRF_SPELLINGS(lower, upper, T) \
    CALA_PGETRF_ENTRY(lower##_, T) CALA_PGETRF_ENTRY(lower, T) CALA_PGETRF_ENTRY(upper, T)

CALA_PGETRF_SPELLINGS(psgetrf, PSGETRF, float)
CALA_PGETRF_SPELLINGS(pdgetrf, PDGETRF, double)
CALA_PGETRF_SPELLINGS(pcgetrf, PCGETRF, std::complex<float>)
CALA_PGETRF_SPELLINGS(pzgetrf, PZGETRF, std::complex<double>)

// p?geqrf_ of ScaLAPACK, computed by cala.
//
// p?geqrf_ (Fortran ABI) -> m·n·min(m, n) below the threshold: ScaLAPACK, nothing else (decline)
// -> ScaLAPACK's checks (CHK1MAT, LWORK against p?geqrf's LWMIN, WORK(1) := LWMIN) -> agree over
// the BLACS grid, PCHK1MAT's consistency checks included (context) -> route: nothing (m = 0,
// n = 0, a workspace query) | ScaLAPACK's own p?geqrf (MB != NB, sub(A) not starting a block:
// ScaLAPACK takes those, cala::geqrf does not) | cala::geqrf on a MatrixRef over the caller's
// local array (qr/ -> TSQR panels, kernels: LAPACK geqrf/larft, BLIS gemm/trmm), its scalars
// written into TAU as ScaLAPACK's p?geqrf leaves them (qr_tau)

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

// The routine for T, named on first use.
template <class T>
const RoutineId& routine() {
    static const RoutineId r = routine_id<T>("GEQRF");
    return r;
}

template <class T>
using PgeqrfFn = void (*)(const int*, const int*, T*, const int*, const int*, const int*, T*, T*, const int*, int*);

template <class T>
struct Args {
    const int *m, *n;
    T* a;
    const int *ia, *ja, *desca;
    T *tau, *work;
    const int* lwork;
    int* info;
};

template <class T>
void call_scalapack(const Args<T>& x) {
    mark_ran(Ran::Scalapack);
    static const auto real = real_routine<PgeqrfFn<T>>(routine<T>().symbol);
    real(x.m, x.n, x.a, x.ia, x.ja, x.desca, x.tau, x.work, x.lwork, x.info);
}

constexpr int kArgA = 6;  // DESCA's position in p?geqrf's argument list
constexpr int kMult = ArgCheck::kDescMult;

template <class T>
void pgeqrf(const Args<T>& x) {
    using detail::cat;
    *x.info = 0;
    const int m = *x.m, n = *x.n, ia = *x.ia, ja = *x.ja, lwork = *x.lwork;
    const bool query = lwork == -1;

    // 0. Below the threshold: ScaLAPACK's, before anything else (decline.hpp).
    if (const double size = static_cast<double>(m) * n * (m < n ? m : n); declines(size, {m, n})) {
        if (settings().verbose)
            say_declined(x.desca[SL_CTXT - 1], cat(routine<T>().name, " m=", m, " n=", n), "m*n*min(m,n)", size);
        return call_scalapack(x);
    }
    Call c{routine<T>().name.c_str(), x.desca[SL_CTXT - 1], {}, settings().verbose, ""};
    Cblacs_gridinfo(c.ctxt, &c.g.p, &c.g.q, &c.g.row, &c.g.col);
    if (c.verbose) c.head = cat(c.rout, " m=", m, " n=", n, " on ", c.g.p, "x", c.g.q, " -> ");

    // 1. ScaLAPACK's checks, in ScaLAPACK's order: CHK1MAT (M 1, N 2, IA 4, JA 5, DESCA 6), then
    // WORK(1) := LWMIN and LWORK (9).
    if (foreign_context(c, kArgA, x.info)) return;
    ArgCheck chk;
    chk1mat(chk, "A", c.g, m, 1, n, 2, ia, ja, x.desca, kArgA);
    index_t lwmin = 0;
    if (chk.ok()) {
        lwmin = geqrf_lwmin(m, n, ia, ja, x.desca, c.g);
        if (x.work != nullptr) x.work[0] = T(static_cast<real_t<T>>(lwmin));
        if (lwork < lwmin && !query) chk.fail(9 * kMult, cat("LWORK = ", lwork, " < ", lwmin, " (LWMIN)"));
    }
    const bool work = m > 0 && n > 0 && !query;
    check_array(chk, "A", x.a, work, read_descriptor(x.desca), c.g, 3);
    // PCHK1MAT: what must be the same on every process of the grid (LWORK = -1 or not included).
    std::vector<SameArg> same = {{m, 1 * kMult}, {n, 2 * kMult}, {ia, 4 * kMult}, {ja, 5 * kMult}};
    same_descriptor(same, x.desca, kArgA);
    same.push_back({query ? -1 : 1, 9 * kMult});

    // 2. Where the call goes. cala::geqrf takes square blocks with sub(A) starting one.
    const Route route = work ? Route::Cala : Route::Nothing;
    const int mb = x.desca[SL_MB - 1], nb = x.desca[SL_NB - 1];
    std::optional<SubMatrix> sa;
    if (chk.ok() && route == Route::Cala && mb == nb && (ia - 1) % mb == 0 && (ja - 1) % nb == 0)
        sa = sub_matrix(read_descriptor(x.desca), c.g, ia, ja, m, n);
    const bool layouts = !chk.ok() || route != Route::Cala || sa.has_value();

    // 3. One allreduce over the grid: the first illegal or inconsistent argument, layouts, cache.
    const Grid2D* grid = settle(c, chk, route, layouts, same,
                                "A has no cala layout (cala::geqrf takes MB = NB, IA and JA starting a block)", x.info,
                                [&] { call_scalapack(x); });
    if (grid == nullptr) return;

    // 4. The work: cala::geqrf in place on the caller's local array, then TAU and WORK(1).
    const MatrixRef<T> av = view(*grid, *sa, x.a);
    if (c.speaker()) {
        std::string model, how = "TSQR panels, Householder reconstruction";
        try {
            const Cost cost = geqrf_cost(av.layout(), QrOptions{}, 0, 0, sizeof(T), is_complex_v<T>);
            model = cat(" words/rank(0,0)=", cost.words, " msgs=", cost.msgs, " memory=", cost.extra_bytes);
            if (geqrf_variant(av.layout(), QrOptions{}, sizeof(T)) == QrVariant::OneRow)
                how = "on the 1 x p grid of the ranks";
            how = cat(how, ", delay ", geqrf_delay(av.layout(), QrOptions{}, sizeof(T)));
        } catch (const std::exception& e) {
            model = cat(" (no model: ", e.what(), ")");
        }
        say(cat(c.head, "cala: geqrf (", how, ", lookahead 1) nb=", nb, model));
    }
    cala_or_scalapack(
        c.rout, c.g,
        [&] {
            std::vector<T> tau;
            geqrf(av, tau);
            write_tau(tau, ja, x.desca, c.g, x.tau);
            x.work[0] = T(static_cast<real_t<T>>(lwmin));
        },
        [&] { call_scalapack(x); });
}

// The C boundary: nothing escapes into Fortran.
template <class T>
void entry(const Args<T>& x) noexcept {
    run_entry(
        routine<T>().name.c_str(), [&] { return detail::cat("m=", *x.m, " n=", *x.n, " lwork=", *x.lwork); },
        [&] { pgeqrf(x); }, [&] { call_scalapack(x); });
}

}  // namespace

}  // namespace cala::scalapack

// Every spelling a Fortran or C caller may use.
#define CALA_PGEQRF_ENTRY(sym, T)                                                                               \
    extern "C" __attribute__((visibility("default"))) void sym(const int* m, const int* n, T* a, const int* ia, \
                                                               const int* ja, const int* desca, T* tau, T* work, \
                                                               const int* lwork, int* info) {                   \
        cala::scalapack::entry<T>({m, n, a, ia, ja, desca, tau, work, lwork, info});                           \
    }
#define CALA_PGEQRF_SPELLINGS(lower, upper, T) \
    CALA_PGEQRF_ENTRY(lower##_, T) CALA_PGEQRF_ENTRY(lower, T) CALA_PGEQRF_ENTRY(upper, T)

CALA_PGEQRF_SPELLINGS(psgeqrf, PSGEQRF, float)
CALA_PGEQRF_SPELLINGS(pdgeqrf, PDGEQRF, double)
CALA_PGEQRF_SPELLINGS(pcgeqrf, PCGEQRF, std::complex<float>)
CALA_PGEQRF_SPELLINGS(pzgeqrf, PZGEQRF, std::complex<double>)

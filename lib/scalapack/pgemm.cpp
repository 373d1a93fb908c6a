// p?gemm_ of ScaLAPACK's PBLAS, computed by cala.
//
// p?gemm_ (Fortran ABI) -> m·n·k below the threshold: ScaLAPACK, nothing else (decline) -> check
// the arguments as PBLAS does (descriptor) -> agree over the BLACS grid (context) -> route:
// nothing | C := beta·C locally | ScaLAPACK (no cala layout) | with CALA_DEVICES, where the model
// says the copies pay: the operands copied to the rank's device, cala::gemm on ResidentMatrix,
// C copied back (resident_route.hpp) | cala::gemm on MatrixRefs over the user's local arrays
// (gemm/ -> kernels::gemm, BLIS)

#include <cctype>
#include <complex>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "cala/gemm.hpp"
#include "cala/model.hpp"
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

// The routine for T, named on first use.
template <class T>
const RoutineId& routine() {
    static const RoutineId r = routine_id<T>("GEMM");
    return r;
}

template <class T>
using PgemmFn = void (*)(const char*, const char*, const int*, const int*, const int*, const T*, const T*, const int*,
                         const int*, const int*, const T*, const int*, const int*, const int*, const T*, T*,
                         const int*, const int*, const int*);

// The arguments of one call, as the caller passed them (Fortran: everything by pointer).
template <class T>
struct Args {
    const char *transa, *transb;
    const int *m, *n, *k;
    const T* alpha;
    const T* a;
    const int *ia, *ja, *desca;
    const T* b;
    const int *ib, *jb, *descb;
    const T* beta;
    T* c;
    const int *ic, *jc, *descc;
};

template <class T>
void call_scalapack(const Args<T>& x) {
    mark_ran(Ran::Scalapack);
    static const auto real = real_routine<PgemmFn<T>>(routine<T>().symbol);
    real(x.transa, x.transb, x.m, x.n, x.k, x.alpha, x.a, x.ia, x.ja, x.desca, x.b, x.ib, x.jb, x.descb, x.beta, x.c,
         x.ic, x.jc, x.descc);
}

Op to_op(char t) { return t == 'N' ? Op::N : t == 'T' ? Op::T : Op::C; }

enum class Route { Nothing, Scale, Cala };

// PBLAS's checks of p?gemm's arguments, in PBLAS's order: TRANSA (1), TRANSB (2), then A (M 3,
// K 5, IA 8, JA 9, DESCA 10), B (K 5, N 4, IB 12, JB 13, DESCB 14), C (M 3, N 4, IC 17, JC 18,
// DESCC 19), each matrix's dimensions as op() has them.
template <class T>
ArgCheck check_args(const Args<T>& x, char ta, char tb, const Desc& da, const Desc& db, const Desc& dc,
                    const GridPos& g) {
    using detail::cat;
    const bool nota = ta == 'N', notb = tb == 'N';
    const int m = *x.m, n = *x.n, k = *x.k, ctxt = da[CTXT_];
    ArgCheck chk;
    if (!nota && ta != 'T' && ta != 'C') chk.fail(1 * ArgCheck::kDescMult, cat("TRANSA = '", x.transa[0], "'"));
    else if (!notb && tb != 'T' && tb != 'C') chk.fail(2 * ArgCheck::kDescMult, cat("TRANSB = '", x.transb[0], "'"));
    check_matrix(chk, "A", ctxt, g, nota ? m : k, nota ? 3 : 5, nota ? k : m, nota ? 5 : 3, *x.ia, *x.ja, da, 10);
    check_matrix(chk, "B", ctxt, g, notb ? k : n, notb ? 5 : 4, notb ? n : k, notb ? 4 : 5, *x.ib, *x.jb, db, 14);
    check_matrix(chk, "C", ctxt, g, m, 3, n, 4, *x.ic, *x.jc, dc, 19);
    return chk;
}

// What must be the same on every process of the grid. PBLAS does not check it: a process that
// passes another M, TRANSA or descriptor (or another ALPHA, which changes the route) would leave
// the others waiting, or crash ScaLAPACK's fallback. The first argument that differs is illegal
// (PBLAS's parameter number; descriptor entries in its 11-entry numbering, CTXT and LLD excluded:
// they may differ between processes).
template <class T>
std::vector<SameArg> same_args(const Args<T>& x, char ta, char tb, const Desc& da, const Desc& db, const Desc& dc) {
    constexpr int k = ArgCheck::kDescMult;
    std::vector<SameArg> same = {{ta, 1 * k},   {tb, 2 * k},        {*x.m, 3 * k},   {*x.n, 4 * k},
                                 {*x.k, 5 * k}, {scalar_bits(*x.alpha), 6 * k}, {*x.ia, 8 * k}, {*x.ja, 9 * k}};
    same_pblas_descriptor(same, da, 10);
    same.insert(same.end(), {{*x.ib, 12 * k}, {*x.jb, 13 * k}});
    same_pblas_descriptor(same, db, 14);
    same.insert(same.end(), {{scalar_bits(*x.beta), 15 * k}, {*x.ic, 17 * k}, {*x.jc, 18 * k}});
    same_pblas_descriptor(same, dc, 19);
    return same;
}

template <class T>
void pgemm(const Args<T>& x) {
    using detail::cat;
    const char* const rout = routine<T>().name.c_str();
    const Settings& set = settings();
    const char ta = static_cast<char>(std::toupper(static_cast<unsigned char>(x.transa[0])));
    const char tb = static_cast<char>(std::toupper(static_cast<unsigned char>(x.transb[0])));
    const bool nota = ta == 'N', notb = tb == 'N';
    const int m = *x.m, n = *x.n, k = *x.k;

    // 0. Below the threshold: ScaLAPACK's, before anything else (decline.hpp).
    if (const double size = static_cast<double>(m) * n * k; declines(size, {m, n, k})) {
        if (set.verbose)
            say_declined(x.desca[CTXT_], cat(rout, "(", ta, ",", tb, ") m=", m, " n=", n, " k=", k), "m*n*k", size);
        return call_scalapack(x);
    }
    const Desc da = read_descriptor(x.desca), db = read_descriptor(x.descb), dc = read_descriptor(x.descc);
    const int ctxt = da[CTXT_];
    GridPos g;
    Cblacs_gridinfo(ctxt, &g.p, &g.q, &g.row, &g.col);
    const bool speaker = set.verbose && g.row == 0 && g.col == 0;
    const auto call = [&] { return cat(rout, "(", ta, ",", tb, ") m=", m, " n=", n, " k=", k, " on ", g.p, "x", g.q,
                                       " -> "); };

    // 1. PBLAS's checks, in PBLAS's order (descriptor.hpp).
    if (g.p == -1) {  // A's context is no grid this process belongs to: nobody to agree with
        ArgCheck chk;
        chk.fail(10 * ArgCheck::kDescMult + 1 + CTXT_, cat("DESCA context ", ctxt, " is not a BLACS grid here"));
        if (set.verbose) say(cat(call(), "illegal argument, info = ", chk.info(), ": ", chk.first));
        report_illegal(ctxt, rout, chk.info());
        return;
    }
    ArgCheck chk = check_args(x, ta, tb, da, db, dc, g);
    const bool product = m > 0 && n > 0 && k > 0 && *x.alpha != T(0);
    check_array(chk, "A", x.a, product, da, g, 7);
    check_array(chk, "B", x.b, product, db, g, 11);
    check_array(chk, "C", x.c, m > 0 && n > 0, dc, g, 16);

    // 2. Where the call goes (the same on every process when the arguments agree).
    const T alpha = *x.alpha, beta = *x.beta;
    Route route = Route::Cala;
    if (m == 0 || n == 0 || ((alpha == T(0) || k == 0) && beta == T(1))) route = Route::Nothing;
    else if (alpha == T(0) || k == 0) route = Route::Scale;
    std::optional<SubMatrix> sa, sb, sc;
    if (chk.ok() && route != Route::Nothing) sc = sub_matrix(dc, g, *x.ic, *x.jc, m, n);
    if (chk.ok() && route == Route::Cala) {
        sa = sub_matrix(da, g, *x.ia, *x.ja, nota ? m : k, nota ? k : m);
        sb = sub_matrix(db, g, *x.ib, *x.jb, notb ? k : n, notb ? n : k);
    }
    // Only the routes cala computes need layouts.
    const bool layouts = !chk.ok() || route == Route::Nothing || (sc && (route == Route::Scale || (sa && sb)));

    // 3. One allreduce over the grid: the first illegal argument on any process, layouts, cache.
    const MPI_Comm comm = grid_communicator(ctxt);
    const Grid2D* grid = route == Route::Cala && layouts ? cached_grid(ctxt, comm, g) : nullptr;
    const Agreement agreed = agree(comm, g, chk.code, layouts, route != Route::Cala || !layouts || grid != nullptr,
                                   same_args(x, ta, tb, da, db, dc));
    if (agreed.code != ArgCheck::kNone) {
        report_agreed(agreed.code, chk, "found on another process of the grid", ctxt, rout, speaker, call(),
                      Checker::Pblas);
        return;
    }
    if (!agreed.cala_layouts) {  // Route::Scale or Route::Cala
        if (speaker)
            say(cat(call(), "ScaLAPACK: an operand has no cala layout (RSRC or CSRC = -1, or a first block wider "
                            "than the block size that the submatrix starts inside)"));
        call_scalapack(x);
        return;
    }

    // 4. The work.
    switch (route) {
        case Route::Nothing:
            if (speaker) say(cat(call(), "cala: nothing to do"));
            return;
        case Route::Scale: {
            if (speaker) say(cat(call(), "cala: C := beta*C on each process's part (alpha = 0 or k = 0)"));
            const index_t m_loc = sc->rows.dist.local_size(g.row), n_loc = sc->cols.dist.local_size(g.col);
            if (m_loc > 0 && n_loc > 0)
                kernels::scale(m_loc, n_loc, beta, x.c + sc->rows.local_offset + sc->cols.local_offset * sc->ld,
                               sc->ld);
            return;
        }
        case Route::Cala: break;
    }
    if (!agreed.cached) grid = &make_grid(ctxt, comm, g, agreed);
    const MatrixRef<T> av = view(*grid, *sa, x.a), bv = view(*grid, *sb, x.b), cv = view(*grid, *sc, x.c);
    const Op op_a = nota ? Op::N : to_op(ta), op_b = notb ? Op::N : to_op(tb);
    // On the rank's device when CALA_DEVICES names one and the model says the copies pay.
    const bool same_ab = av.data() == bv.data() && av.ld() == bv.ld() && av.layout() == bv.layout();
    const DeviceRoute dr = choose_route<T>(*grid, op_a, op_b, av.layout(), bv.layout(), cv.layout(), beta == T(0),
                                           same_ab);
    if (dr.asked) note_call(cat("where=", dr.where, ": ", dr.reason));
    if (dr.asked && speaker) say(cat(call(), "cala: ", dr.where, ": ", dr.reason));
    if (dr.asked && !dr.usable) {  // cala::gemm would read the same CALA_DEVICES and fail
        if (speaker) say(cat(call(), "ScaLAPACK: a rank's device in CALA_DEVICES cannot be opened"));
        call_scalapack(x);
        return;
    }
    // The CPU path: cala::gemm on the caller's arrays (which, as everywhere in cala, also reads
    // CALA_DEVICES as its list of units: docs/scalapack.md, "On a GPU node").
    const auto host = [&] { gemm(op_a, op_b, alpha, av, bv, beta, cv); };
    if (dr.resident) {
        cala_or_scalapack(rout, g, [&] {
            try {
                if (dr.pipelined) run_pipelined(dr.dev, op_a, op_b, alpha, av, bv, beta, cv);
                else run_resident(dr.dev, op_a, op_b, alpha, av, bv, beta, cv, dr.same_ab);
            } catch (const RankError&) {  // one rank only: the others cannot follow a fallback
                throw;
            } catch (const Error& e) {  // raised on every rank before C was written back
                if (g.row == 0 && g.col == 0) say(cat(rout, ": resident: ", e.what(), "; the CPU path computes this call"));
                note_call(cat("where=cpu: the resident run failed: ", e.what()));
                host();
            }
        }, [&] { call_scalapack(x); });
        return;
    }
    if (speaker) {  // every candidate's predicted seconds, the choice and why (lib/model/plan_report.cpp)
        const GemmPlanReport rep = explain_gemm_plan(op_a, op_b, av.layout(), bv.layout(), cv.layout(), grid->order(),
                                                     GemmOptions{}, sizeof(T), is_complex_v<T>);
        say(cat(call(), "cala: ", rep.chosen.describe()));
        for (const std::string& l : rep.lines()) say(l);
    }
    cala_or_scalapack(rout, g, host, [&] { call_scalapack(x); });
}

// The C boundary: nothing escapes into Fortran.
template <class T>
void entry(const Args<T>& x) noexcept {
    run_entry(
        routine<T>().name.c_str(), [&] { return detail::cat("transa=", x.transa[0], " transb=", x.transb[0], " m=", *x.m, " n=", *x.n, " k=", *x.k); }, [&] { pgemm(x); }, [&] { call_scalapack(x); });
}

}  // namespace

}  // namespace cala::scalapack

// Every spelling a Fortran or C caller may use. PBLAS's character arguments carry no hidden
// lengths (PBLAS is C); a Fortran caller's trailing lengths are ignored by the C ABI.
#define CALA_PGEMM_PARAMS(T)                                                                                     \
    const char *transa, const char *transb, const int *m, const int *n, const int *k, const T *alpha, const T *a, \
        const int *ia, const int *ja, const int *desca, const T *b, const int *ib, const int *jb,                 \
        const int *descb, const T *beta, T *c, const int *ic, const int *jc, const int *descc
#define CALA_PGEMM_ENTRY(sym, T)                                                                                 \
    extern "C" __attribute__((visibility("default"))) void sym(CALA_PGEMM_PARAMS(T)) {                          \
        cala::scalapack::entry<T>(                                                                               \
            {transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc});       \
    }
#define CALA_PGEMM_SPELLINGS(lower, upper, T) \
    CALA_PGEMM_ENTRY(lower##_, T) CALA_PGEMM_ENTRY(lower, T) CALA_PGEMM_ENTRY(upper, T)

CALA_PGEMM_SPELLINGS(psgemm, PSGEMM, float)
CALA_PGEMM_SPELLINGS(pdgemm, PDGEMM, double)
CALA_PGEMM_SPELLINGS(pcgemm, PCGEMM, std::complex<float>)
CALA_PGEMM_SPELLINGS(pzgemm, PZGEMM, std::complex<double>)

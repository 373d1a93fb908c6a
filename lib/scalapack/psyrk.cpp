// p?syrk_, p?herk_, p?syr2k_ and p?her2k_ of ScaLAPACK's PBLAS, computed by cala.
//
// entry (Fortran ABI) -> check the arguments as PBLAS does (descriptor) -> agree over the BLACS
// grid (settle, context) -> route: nothing | C's triangle := beta·C locally (alpha = 0 or k = 0) |
// ScaLAPACK (small, or no cala layout) |
//   p?syrk/p?herk with CALA_DEVICES, where the model says the copies pay: resident on the
//     rank's device (resident_route.hpp -> cala::herk / syrk on ResidentMatrix copies, lib/resident);
//   p?syrk/p?herk: cala::syrk / cala::herk (lib/symm) on sub(A) in place, or on op(sub(A))
//     redistributed (matrix/) into a workspace whose rows are distributed like sub(C)'s, or on a
//     symmetric layout (SBC/TBC) op(A) and sub(C) are redistributed onto and C's lower tiles
//     back from: the cost model picks (sym_route, sym_run; CALA_SHIM_SYMMETRIC forces one);
//   p?syr2k/p?her2k (cala has no syr2k): W := alpha·op(A)·op(B)ᵀ (ᴴ) by cala::gemm (gemm/) in
//     sub(C)'s layout, V := Wᵀ (Wᴴ) by redistribute, then C's triangle := beta·C + W + V on
//     each process's part. Since (alpha·op(A)·op(B)ᴴ)ᴴ = conj(alpha)·op(B)·op(A)ᴴ this is her2k's
//     sum; the flops are syr2k's (2n²k), the extra words one n x n transposition.
//
//   p?syrk_ / p?herk_   (UPLO, TRANS, N, K, ALPHA, A, IA, JA, DESCA,              BETA, C, IC, JC, DESCC)
//   p?syr2k_ / p?her2k_ (UPLO, TRANS, N, K, ALPHA, A, IA, JA, DESCA, B, IB, JB, DESCB, BETA, C, IC, JC, DESCC)
// p?herk's ALPHA and BETA and p?her2k's BETA are real.

#include <complex>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cala/gemm.hpp"
#include "cala/matrix.hpp"
#include "cala/symm.hpp"
#include "core/check.hpp"
#include "core/workspace.hpp"
#include "scalapack/blacs.hpp"
#include "scalapack/context.hpp"
#include "scalapack/decline.hpp"
#include "scalapack/descriptor.hpp"
#include "scalapack/report.hpp"
#include "scalapack/resident_route.hpp"
#include "scalapack/settle.hpp"
#include "scalapack/sym_route.hpp"
#include "scalapack/sym_run.hpp"
#include "scalapack/view.hpp"

namespace cala::scalapack {

namespace {

enum class Kind { Syrk, Herk, Syr2k, Her2k };

constexpr bool rank2(Kind k) { return k == Kind::Syr2k || k == Kind::Her2k; }
constexpr bool hermitian(Kind k) { return k == Kind::Herk || k == Kind::Her2k; }

template <class T, Kind K>
const RoutineId& routine() {
    static const RoutineId r = routine_id<T>(K == Kind::Syrk ? "SYRK" : K == Kind::Herk ? "HERK" : K == Kind::Syr2k ? "SYR2K" : "HER2K");
    return r;
}

// The arguments of any of the four (B's null for p?syrk and p?herk). ALPHA and BETA are T or
// real_t<T> as the routine has them: read through alpha() and beta().
template <class T>
struct Args {
    const char *uplo, *trans;
    const int *n, *k;
    const void* alpha;
    const T* a;
    const int *ia, *ja, *desca;
    const T* b;
    const int *ib, *jb, *descb;
    const void* beta;
    T* c;
    const int *ic, *jc, *descc;
};

template <class T, Kind K>
T alpha_of(const Args<T>& x) {
    return K == Kind::Herk ? T(*static_cast<const real_t<T>*>(x.alpha)) : *static_cast<const T*>(x.alpha);
}
template <class T, Kind K>
T beta_of(const Args<T>& x) {
    return hermitian(K) ? T(*static_cast<const real_t<T>*>(x.beta)) : *static_cast<const T*>(x.beta);
}

template <class T, Kind K>
void call_scalapack(const Args<T>& x) {
    mark_ran(Ran::Scalapack);
    using RankK = void (*)(const char*, const char*, const int*, const int*, const void*, const T*, const int*,
                           const int*, const int*, const void*, T*, const int*, const int*, const int*);
    using Rank2K = void (*)(const char*, const char*, const int*, const int*, const void*, const T*, const int*,
                            const int*, const int*, const T*, const int*, const int*, const int*, const void*, T*,
                            const int*, const int*, const int*);
    if constexpr (rank2(K)) {
        static const auto real = real_routine<Rank2K>(routine<T, K>().symbol);
        real(x.uplo, x.trans, x.n, x.k, x.alpha, x.a, x.ia, x.ja, x.desca, x.b, x.ib, x.jb, x.descb, x.beta, x.c, x.ic,
             x.jc, x.descc);
    } else {
        static const auto real = real_routine<RankK>(routine<T, K>().symbol);
        real(x.uplo, x.trans, x.n, x.k, x.alpha, x.a, x.ia, x.ja, x.desca, x.beta, x.c, x.ic, x.jc, x.descc);
    }
}

// Argument numbers: B's arguments (10-13) shift BETA, C, IC, JC and DESCC by 4.
constexpr int kDescA = 9, kDescB = 13;
constexpr int desc_c(Kind k) { return rank2(k) ? 18 : 14; }

// TRANS as PBLAS accepts it: real p?syrk/p?syr2k N, T or C; complex ones N or T; p?herk/p?her2k N or C.
template <class T, Kind K>
bool trans_ok(char t) {
    return t == 'N' || (hermitian(K) ? t == 'C' : t == 'T' || (!is_complex_v<T> && t == 'C'));
}

// PBLAS's checks, in PBLAS's order: UPLO (1), TRANS (2), then A (N 3 x K 4, or K 4 x N 3 when
// transposed; IA 7, JA 8, DESCA 9), B likewise (IB 11, JB 12, DESCB 13), C (N 3 x N 3, DESCC 14
// or 18); then the arrays A (6), B (10), C (11 or 15) present where used.
template <class T, Kind K>
ArgCheck check_args(const Args<T>& x, const Desc& da, const Desc& db, const Desc& dc, const GridPos& g) {
    using detail::cat;
    constexpr int km = ArgCheck::kDescMult;
    const char u = option(x.uplo), t = option(x.trans);
    const int n = *x.n, k = *x.k, ctxt = da[CTXT_];
    ArgCheck chk;
    if (u != 'U' && u != 'L') chk.fail(1 * km, cat("UPLO = '", x.uplo[0], "'"));
    else if (!trans_ok<T, K>(t)) chk.fail(2 * km, cat("TRANS = '", x.trans[0], "'"));
    const bool notran = t == 'N';
    const int rows = notran ? n : k, rpos = notran ? 3 : 4, cols = notran ? k : n, cpos = notran ? 4 : 3;
    check_matrix(chk, "A", ctxt, g, rows, rpos, cols, cpos, *x.ia, *x.ja, da, kDescA);
    if (rank2(K)) check_matrix(chk, "B", ctxt, g, rows, rpos, cols, cpos, *x.ib, *x.jb, db, kDescB);
    check_matrix(chk, "C", ctxt, g, n, 3, n, 3, *x.ic, *x.jc, dc, desc_c(K));
    const bool reads = n > 0 && k > 0 && alpha_of<T, K>(x) != T(0);
    check_array(chk, "A", x.a, reads, da, g, 6);
    if (rank2(K)) check_array(chk, "B", x.b, reads, db, g, 10);
    check_array(chk, "C", x.c, n > 0, dc, g, desc_c(K) - 3);
    return chk;
}

// What must be the same on every process of the grid.
template <class T, Kind K>
std::vector<SameArg> same_args(const Args<T>& x, const Desc& da, const Desc& db, const Desc& dc) {
    constexpr int km = ArgCheck::kDescMult;
    std::vector<SameArg> same = {{option(x.uplo), 1 * km},  {option(x.trans), 2 * km}, {*x.n, 3 * km},
                                 {*x.k, 4 * km},            {scalar_bits(alpha_of<T, K>(x)), 5 * km},
                                 {*x.ia, 7 * km},           {*x.ja, 8 * km}};
    same_pblas_descriptor(same, da, kDescA);
    if (rank2(K)) {
        same.insert(same.end(), {{*x.ib, 11 * km}, {*x.jb, 12 * km}});
        same_pblas_descriptor(same, db, kDescB);
    }
    same.insert(same.end(), {{scalar_bits(beta_of<T, K>(x)), (desc_c(K) - 4) * km},
                             {*x.ic, (desc_c(K) - 2) * km},
                             {*x.jc, (desc_c(K) - 1) * km}});
    same_pblas_descriptor(same, dc, desc_c(K));
    return same;
}

// p?syrk/p?herk by cala::syrk/herk (C's tiles square): sub(A) as it lies when its rows are
// distributed like sub(C)'s (TRANS = N), else op(sub(A)) redistributed into an n x k workspace
// whose rows are (its k columns in C's column block size). A cala::Error comes before C is written.
template <class T, Kind K>
MatrixRef<T> rank_k_operand(const Grid2D& grid, const GridPos& g, char t, index_t k, const MatrixRef<T>& av,
                            const MatrixRef<T>& cv, detail::Buffer<T>& wbuf) {
    if (t == 'N' && av.layout().rows == cv.layout().rows) return av;
    const Dist1D& cc = cv.layout().cols;
    const MatrixRef<T> w = workspace(grid, cv.layout().rows, Dist1D(k, cc.nb, g.q, 0, 0, "workspace columns"), wbuf);
    redistribute(t == 'N' ? Op::N : hermitian(K) ? Op::C : Op::T, av, w);
    return w;
}

template <class T, Kind K>
void rank_k(const Grid2D& grid, const GridPos& g, char u, char t, index_t k, T alpha, T beta, const MatrixRef<T>& av,
            const MatrixRef<T>& cv) {
    const Uplo uplo = u == 'L' ? Uplo::Lower : Uplo::Upper;
    detail::Buffer<T> wbuf;
    const MatrixRef<T> w = rank_k_operand<T, K>(grid, g, t, k, av, cv, wbuf);
    if constexpr (hermitian(K)) herk(uplo, std::real(alpha), w, std::real(beta), cv);
    else syrk(uplo, alpha, w, beta, cv);
}

// p?syrk_ and p?herk_ on the rank's device (CALA_DEVICES; resident_route.hpp), where
// the model says the copies pay against `cpu_seconds`: op(sub(A)) (sub(A) itself when TRANS = N,
// else transposed into C's rows on the host, as the CPU path does) and C's triangle up, the
// triangle back. Returns false where the call is the CPU path's (said in the CALA_SHIM=log note).
template <class T, Kind K>
bool rank_k_resident(const Call& c, const Grid2D& grid, char u, char t, index_t k, T alpha, T beta,
                     const MatrixRef<T>& av, const MatrixRef<T>& cv, double cpu_seconds,
                     const std::function<void()>& scalapack) {
    using detail::cat;
    const GridPos& g = c.g;
    const Uplo uplo = u == 'L' ? Uplo::Lower : Uplo::Upper;
    const BlockCyclic wl = t == 'N' ? av.layout()
                                    : BlockCyclic(cv.layout().rows,
                                                  Dist1D(k, cv.layout().cols.nb, g.q, 0, 0, "workspace columns"));
    const BlockCyclic al = av.layout();
    const DeviceRoute dr = choose_herk_route<T>(grid, uplo, wl, cv.layout(), beta == T(0), cpu_seconds,
                                                t == 'N' ? nullptr : &al, hermitian(K) ? Op::C : Op::T,
                                                hermitian(K) || !is_complex_v<T>);
    if (dr.asked) note_call(cat("where=", dr.where, ": ", dr.reason));
    if (dr.asked && c.speaker()) say(cat(c.head, "cala: ", dr.where, ": ", dr.reason));
    if (!dr.resident) return false;
    cala_or_scalapack(
        c.rout, g,
        [&] {
            try {
                detail::Buffer<T> wbuf;
                const MatrixRef<T> w = t == 'N' ? av : rank_k_operand<T, K>(grid, g, t, k, av, cv, wbuf);
                return run_resident_rank_k<T>(dr.dev, uplo, hermitian(K) || !is_complex_v<T>, alpha, w, beta, cv);
            } catch (const RankError&) {  // one rank only: the others cannot follow a fallback
                throw;
            } catch (const Error& e) {  // raised on every rank before C was written back
                if (g.row == 0 && g.col == 0)
                    say(cat(c.rout, ": resident: ", e.what(), "; the CPU path computes this call"));
                note_call(cat("where=cpu: the resident run failed: ", e.what()));
            }
            rank_k<T, K>(grid, g, u, t, k, alpha, beta, av, cv);
        },
        scalapack);
    return true;
}

template <class T, Kind K>
void psyrk(const Args<T>& x) {
    using detail::cat;
    const char* const rout = routine<T, K>().name.c_str();
    const char u = option(x.uplo), t = option(x.trans);
    const int n = *x.n, k = *x.k;
    const bool notran = t == 'N';

    // 0. Below the threshold: ScaLAPACK's, before anything else (decline.hpp).
    if (const double size = static_cast<double>(n) * n * k; declines(size, {n, k})) {
        if (settings().verbose)
            say_declined(x.desca[CTXT_], cat(rout, "(", u, ",", t, ") n=", n, " k=", k), "n*n*k", size);
        return call_scalapack<T, K>(x);
    }
    const Desc da = read_descriptor(x.desca), dc = read_descriptor(x.descc);
    const Desc db = rank2(K) ? read_descriptor(x.descb) : Desc{};
    Call c{rout, da[CTXT_], {}, settings().verbose, "", Checker::Pblas};
    Cblacs_gridinfo(c.ctxt, &c.g.p, &c.g.q, &c.g.row, &c.g.col);
    const GridPos& g = c.g;
    if (c.verbose) c.head = cat(rout, "(", u, ",", t, ") n=", n, " k=", k, " on ", g.p, "x", g.q, " -> ");

    // 1. PBLAS's checks, in PBLAS's order.
    int info = 0;  // PBLAS routines have no INFO: reported through PXERBLA only
    if (foreign_context(c, kDescA, &info)) return;
    const ArgCheck chk = check_args<T, K>(x, da, db, dc, g);
    const T alpha = alpha_of<T, K>(x), beta = beta_of<T, K>(x);

    // 2. Where the call goes (PBLAS's quick returns: alpha = 0 or k = 0 leaves beta·C, done locally).
    Route route = Route::Cala;
    const bool no_product = alpha == T(0) || k == 0;
    if (n == 0 || (no_product && beta == T(1))) route = Route::Nothing;
    const bool scale = route == Route::Cala && no_product;
    std::optional<SubMatrix> sa, sb, sc;
    const int ra = notran ? n : k, ca = notran ? k : n;
    if (chk.ok() && route == Route::Cala) sc = sub_matrix(dc, g, *x.ic, *x.jc, n, n);
    if (chk.ok() && route == Route::Cala && !scale) sa = sub_matrix(da, g, *x.ia, *x.ja, ra, ca);
    if (chk.ok() && route == Route::Cala && !scale && rank2(K)) sb = sub_matrix(db, g, *x.ib, *x.jb, ra, ca);
    const bool layouts = !chk.ok() || route != Route::Cala || (sc && (scale || (sa && (!rank2(K) || sb))));

    // 3. One allreduce over the grid (settle.hpp), then the work.
    const Grid2D* grid =
        settle(c, chk, route, layouts, same_args<T, K>(x, da, db, dc), "an operand has no cala layout", &info,
               [&] { call_scalapack<T, K>(x); });
    if (grid == nullptr) return;
    if (scale) {
        if (c.speaker()) say(c.head + "cala: C's triangle := beta*C on each process's part (alpha = 0 or k = 0)");
        update_local(*sc, g, u, beta, x.c, [](index_t, index_t) { return T(0); }, hermitian(K));
        return;
    }
    // cala::syrk/herk take C with square tiles only (the same on every process: the descriptors agree)
    const Dist1D &cr = sc->rows.dist, &cc = sc->cols.dist;
    if (!rank2(K) && (cr.nb != cc.nb || cr.ib != cc.ib)) {
        if (c.speaker())
            say(cat(c.head, "ScaLAPACK: a layout cala::", hermitian(K) ? "herk" : "syrk", " does not take (sub(C)'s ",
                    "tiles are not square: row blocks ", cr.nb, " first ", cr.ib, ", column blocks ", cc.nb, " first ",
                    cc.ib, ")"));
        call_scalapack<T, K>(x);
        return;
    }
    const MatrixRef<T> av = view(*grid, *sa, x.a), cv = view(*grid, *sc, x.c);
    if constexpr (!rank2(K)) {
        // In place on 2DBC, or through a symmetric layout (sym_route.hpp): the model decides.
        const Op op = notran ? Op::N : hermitian(K) ? Op::C : Op::T;
        const SymProblem prob{true, Side::Left, u == 'L' ? Uplo::Lower : Uplo::Upper, op, av.layout(), {},
                              cv.layout(), beta == T(0), grid->order(), sizeof(T), is_complex_v<T>};
        const SymDecision d = route_call(prob);
        if (rank_k_resident<T, K>(c, *grid, u, t, k, alpha, beta, av, cv, d.pick().seconds,
                                  [&] { call_scalapack<T, K>(x); }))
            return;
        if (c.speaker()) {
            const char* on = d.pick().layout ? " on a symmetric layout"
                             : prob.moves_a_2dbc() ? " on op(A) redistributed into rows like C's"
                                                   : " (A in place)";
            say(cat(c.head, "cala: ", hermitian(K) ? "herk" : "syrk", on, ", nb=", sc->rows.dist.nb, ", ",
                    d.describe()));
        }
        cala_or_scalapack(
            rout, g,
            [&] {
                if (!d.pick().layout) return rank_k<T, K>(*grid, g, u, t, k, alpha, beta, av, cv);
                detail::Buffer<T> wbuf;
                MatrixRef<T> w = av;
                if (!notran) {
                    w = workspace(*grid, prob.workspace().rows, prob.workspace().cols, wbuf);
                    redistribute(op, av, w);
                }
                syrk_on_pattern<T, hermitian(K)>(*grid, symmetric_layouts(prob, *d.pick().layout), alpha, w, beta, cv);
            },
            [&] { call_scalapack<T, K>(x); });
    } else {
        if (c.speaker())
            say(cat(c.head, "cala: W := alpha*op(A)*op(B)", hermitian(K) ? "^H" : "^T", " (gemm) in C's layout, ",
                    "V := W", hermitian(K) ? "^H" : "^T", " (redistribute), C's triangle := beta*C + W + V"));
        const MatrixRef<T> bv = view(*grid, *sb, x.b);
        const Op tr = hermitian(K) ? Op::C : Op::T;
        detail::Buffer<T> wbuf, vbuf;
        const MatrixRef<T> w = workspace(*grid, sc->rows.dist, sc->cols.dist, wbuf);
        const MatrixRef<T> v = workspace(*grid, sc->rows.dist, sc->cols.dist, vbuf);
        bool fell_back = false;
        cala_or_scalapack(
            rout, g,
            [&] {
                gemm(notran ? Op::N : tr, notran ? tr : Op::N, alpha, av, bv, T(0), w);
                redistribute(tr, w, v);
            },
            [&] {
                fell_back = true;
                call_scalapack<T, K>(x);
            });
        if (fell_back) return;
        const index_t ld = w.ld();
        update_local(
            *sc, g, u, beta, x.c,
            [&](index_t il, index_t jl) { return wbuf.data()[il + jl * ld] + vbuf.data()[il + jl * ld]; },
            hermitian(K));
    }
}

template <class T, Kind K>
void entry(const Args<T>& x) noexcept {
    run_entry(
        routine<T, K>().name.c_str(),
        [&] { return detail::cat("uplo=", x.uplo[0], " trans=", x.trans[0], " n=", *x.n, " k=", *x.k); },
        [&] { psyrk<T, K>(x); }, [&] { call_scalapack<T, K>(x); });
}

}  // namespace

}  // namespace cala::scalapack

// Every spelling a Fortran or C caller may use (PBLAS is C: no hidden lengths).
#define CALA_RANKK_HEAD(T, S)                                                                                      \
    const char *uplo, const char *trans, const int *n, const int *k, const S *alpha, const T *a, const int *ia,    \
        const int *ja, const int *desca
#define CALA_RANKK_TAIL(T, S) const S *beta, T *c, const int *ic, const int *jc, const int *descc
#define CALA_EXPORT extern "C" __attribute__((visibility("default")))
#define CALA_RANKK_ENTRY(sym, T, S, K)                                                                             \
    CALA_EXPORT void sym(CALA_RANKK_HEAD(T, S), CALA_RANKK_TAIL(T, S)) {                                            \
        cala::scalapack::entry<T, cala::scalapack::Kind::K>(                                                       \
            {uplo, trans, n, k, alpha, a, ia, ja, desca, nullptr, nullptr, nullptr, nullptr, beta, c, ic, jc, descc}); \
    }
#define CALA_RANK2K_ENTRY(sym, T, SB, K)                                                                           \
    CALA_EXPORT void sym(CALA_RANKK_HEAD(T, T), const T *b, const int *ib, const int *jb, const int *descb,         \
                         CALA_RANKK_TAIL(T, SB)) {                                                                 \
        cala::scalapack::entry<T, cala::scalapack::Kind::K>(                                                       \
            {uplo, trans, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc});               \
    }
#define CALA_SPELL(M, lower, upper, ...) M(lower##_, __VA_ARGS__) M(lower, __VA_ARGS__) M(upper, __VA_ARGS__)

CALA_SPELL(CALA_RANKK_ENTRY, pssyrk, PSSYRK, float, float, Syrk)
CALA_SPELL(CALA_RANKK_ENTRY, pdsyrk, PDSYRK, double, double, Syrk)
CALA_SPELL(CALA_RANKK_ENTRY, pcsyrk, PCSYRK, std::complex<float>, std::complex<float>, Syrk)
CALA_SPELL(CALA_RANKK_ENTRY, pzsyrk, PZSYRK, std::complex<double>, std::complex<double>, Syrk)
CALA_SPELL(CALA_RANKK_ENTRY, pcherk, PCHERK, std::complex<float>, float, Herk)
CALA_SPELL(CALA_RANKK_ENTRY, pzherk, PZHERK, std::complex<double>, double, Herk)
CALA_SPELL(CALA_RANK2K_ENTRY, pssyr2k, PSSYR2K, float, float, Syr2k)
CALA_SPELL(CALA_RANK2K_ENTRY, pdsyr2k, PDSYR2K, double, double, Syr2k)
CALA_SPELL(CALA_RANK2K_ENTRY, pcsyr2k, PCSYR2K, std::complex<float>, std::complex<float>, Syr2k)
CALA_SPELL(CALA_RANK2K_ENTRY, pzsyr2k, PZSYR2K, std::complex<double>, std::complex<double>, Syr2k)
CALA_SPELL(CALA_RANK2K_ENTRY, pcher2k, PCHER2K, std::complex<float>, float, Her2k)
CALA_SPELL(CALA_RANK2K_ENTRY, pzher2k, PZHER2K, std::complex<double>, double, Her2k)

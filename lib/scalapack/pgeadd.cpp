// p?geadd_, p?tradd_ and p?tran_ / p?tranu_ / p?tranc_ of ScaLAPACK's PBLAS, computed by cala.
//
// entry (Fortran ABI) -> m·n below the threshold: ScaLAPACK, nothing else (decline) -> check the
// arguments as PBLAS does (descriptor) -> agree over the BLACS grid (context) -> route: nothing |
// C := beta·C locally (alpha = 0) | ScaLAPACK (no cala layout) | cala::redistribute(op, sub(A)
// -> a workspace T laid out like sub(C)) (matrix/), then C := beta·C + alpha·T on each
// process's part (the trapezoid only for p?tradd)
//
//   p?geadd_(TRANS, M, N, ALPHA, A, IA, JA, DESCA, BETA, C, IC, JC, DESCC)
//   p?tradd_(UPLO, TRANS, M, N, ALPHA, A, IA, JA, DESCA, BETA, C, IC, JC, DESCC)
//   p?tran_ / p?tranu_ / p?tranc_(M, N, ALPHA, A, IA, JA, DESCA, BETA, C, IC, JC, DESCC)

#include <cctype>
#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cala/matrix.hpp"
#include "core/check.hpp"
#include "core/workspace.hpp"
#include "scalapack/blacs.hpp"
#include "scalapack/context.hpp"
#include "scalapack/decline.hpp"
#include "scalapack/descriptor.hpp"
#include "scalapack/report.hpp"
#include "scalapack/view.hpp"

namespace cala::scalapack {

namespace {

enum class Kind { Geadd, Tradd, TranU, TranC };

const char* stem(Kind k) {
    return k == Kind::Geadd ? "GEADD" : k == Kind::Tradd ? "TRADD" : k == Kind::TranU ? "TRANU" : "TRANC";
}

// PBLAS's names: p?tran_ for real types (s, d), p?tranu_ / p?tranc_ for complex ones.
template <class T, Kind K>
const RoutineId& routine() {
    static const RoutineId r = routine_id<T>(K == Kind::TranU && !is_complex_v<T> ? "TRAN" : stem(K));
    return r;
}

// The arguments of any of the three (absent ones null).
template <class T>
struct Args {
    const char *uplo, *trans;
    const int *m, *n;
    const T* alpha;
    const T* a;
    const int *ia, *ja, *desca;
    const T* beta;
    T* c;
    const int *ic, *jc, *descc;
};

template <class T, Kind K>
void call_scalapack(const Args<T>& x) {
    mark_ran(Ran::Scalapack);
    using Tail = void (*)(const int*, const int*, const T*, const T*, const int*, const int*, const int*, const T*, T*,
                          const int*, const int*, const int*);
    using Geadd = void (*)(const char*, const int*, const int*, const T*, const T*, const int*, const int*,
                           const int*, const T*, T*, const int*, const int*, const int*);
    using Tradd = void (*)(const char*, const char*, const int*, const int*, const T*, const T*, const int*,
                           const int*, const int*, const T*, T*, const int*, const int*, const int*);
    const std::string& sym = routine<T, K>().symbol;
    if constexpr (K == Kind::Geadd) {
        static const auto real = real_routine<Geadd>(sym);
        real(x.trans, x.m, x.n, x.alpha, x.a, x.ia, x.ja, x.desca, x.beta, x.c, x.ic, x.jc, x.descc);
    } else if constexpr (K == Kind::Tradd) {
        static const auto real = real_routine<Tradd>(sym);
        real(x.uplo, x.trans, x.m, x.n, x.alpha, x.a, x.ia, x.ja, x.desca, x.beta, x.c, x.ic, x.jc, x.descc);
    } else {
        static const auto real = real_routine<Tail>(sym);
        real(x.m, x.n, x.alpha, x.a, x.ia, x.ja, x.desca, x.beta, x.c, x.ic, x.jc, x.descc);
    }
}

char upper(const char* c) { return c ? static_cast<char>(std::toupper(static_cast<unsigned char>(c[0]))) : 'N'; }

// Argument numbers of M, N, DESCA, BETA's successor C and DESCC: the character arguments come
// first (p?tradd 2, p?geadd 1, p?tran 0), everything after them is shifted alike.
struct Pos {
    int chars, m, n, desca, descc;
};
constexpr Pos positions(Kind k) {
    const int s = k == Kind::Tradd ? 2 : k == Kind::Geadd ? 1 : 0;
    return {s, s + 1, s + 2, s + 7, s + 12};
}

template <class T, Kind K>
void padd(const Args<T>& x) {
    using detail::cat;
    constexpr Pos pos = positions(K);
    constexpr int km = ArgCheck::kDescMult;
    const char* const rout = routine<T, K>().name.c_str();
    const Settings& set = settings();
    const char u = K == Kind::Tradd ? upper(x.uplo) : 'A';
    const char t = K == Kind::Geadd || K == Kind::Tradd ? upper(x.trans) : K == Kind::TranC ? 'C' : 'T';
    const int m = *x.m, n = *x.n;

    // 0. Below the threshold: ScaLAPACK's, before anything else (decline.hpp).
    if (const double size = static_cast<double>(m) * n; declines(size, {m, n})) {
        if (set.verbose) say_declined(x.desca[CTXT_], cat(rout, "(", u, ",", t, ") m=", m, " n=", n), "m*n", size);
        return call_scalapack<T, K>(x);
    }
    const Desc da = read_descriptor(x.desca), dc = read_descriptor(x.descc);
    const int ctxt = da[CTXT_];
    GridPos g;
    Cblacs_gridinfo(ctxt, &g.p, &g.q, &g.row, &g.col);
    const bool speaker = set.verbose && g.row == 0 && g.col == 0;
    const auto call = [&] { return cat(rout, "(", u, ",", t, ") m=", m, " n=", n, " on ", g.p, "x", g.q, " -> "); };

    // 1. PBLAS's checks, in PBLAS's order.
    if (g.p == -1) {
        ArgCheck chk;
        chk.fail(pos.desca * km + 1 + CTXT_, cat("DESCA context ", ctxt, " is not a BLACS grid here"));
        if (set.verbose) say(cat(call(), "illegal argument, info = ", chk.info(), ": ", chk.first));
        report_illegal(ctxt, rout, chk.info());
        return;
    }
    ArgCheck chk;
    if (K == Kind::Tradd && u != 'U' && u != 'L') chk.fail(1 * km, cat("UPLO = '", x.uplo[0], "'"));
    else if ((K == Kind::Geadd || K == Kind::Tradd) && t != 'N' && t != 'T' && t != 'C')
        chk.fail(pos.chars * km, cat("TRANS = '", x.trans[0], "'"));
    const bool notran = t == 'N';
    if (notran) check_matrix(chk, "A", ctxt, g, m, pos.m, n, pos.n, *x.ia, *x.ja, da, pos.desca);
    else check_matrix(chk, "A", ctxt, g, n, pos.n, m, pos.m, *x.ia, *x.ja, da, pos.desca);
    check_matrix(chk, "C", ctxt, g, m, pos.m, n, pos.n, *x.ic, *x.jc, dc, pos.descc);
    const T alpha = *x.alpha, beta = *x.beta;
    check_array(chk, "A", x.a, m > 0 && n > 0 && alpha != T(0), da, g, pos.desca - 3);
    check_array(chk, "C", x.c, m > 0 && n > 0, dc, g, pos.descc - 3);

    // 2. Where the call goes.
    enum class Route { Nothing, Scale, Cala } route = Route::Cala;
    if (m == 0 || n == 0 || (alpha == T(0) && beta == T(1))) route = Route::Nothing;
    else if (alpha == T(0)) route = Route::Scale;
    std::optional<SubMatrix> sa, sc;
    if (chk.ok() && route != Route::Nothing) sc = sub_matrix(dc, g, *x.ic, *x.jc, m, n);
    if (chk.ok() && route == Route::Cala) sa = sub_matrix(da, g, *x.ia, *x.ja, notran ? m : n, notran ? n : m);
    const bool layouts = !chk.ok() || route == Route::Nothing || (sc && (route == Route::Scale || sa));

    // 3. One allreduce over the grid.
    std::vector<SameArg> same = {{u, 1 * km}, {t, pos.chars * km}, {m, pos.m * km}, {n, pos.n * km},
                                 {scalar_bits(alpha), (pos.n + 1) * km}, {*x.ia, (pos.desca - 2) * km},
                                 {*x.ja, (pos.desca - 1) * km}, {scalar_bits(beta), (pos.desca + 1) * km},
                                 {*x.ic, (pos.descc - 2) * km}, {*x.jc, (pos.descc - 1) * km}};
    for (const auto& [d, p] : {std::pair{&da, pos.desca}, std::pair{&dc, pos.descc}})
        same_pblas_descriptor(same, *d, p);
    const MPI_Comm comm = grid_communicator(ctxt);
    const Grid2D* grid = route == Route::Cala && layouts ? cached_grid(ctxt, comm, g) : nullptr;
    const Agreement agreed = agree(comm, g, chk.code, layouts, route != Route::Cala || !layouts || grid != nullptr,
                                   same);
    if (agreed.code != ArgCheck::kNone) {
        report_agreed(agreed.code, chk, "found on another process of the grid", ctxt, rout, speaker, call(),
                      Checker::Pblas);
        return;
    }
    if (!agreed.cala_layouts) {
        if (speaker) say(cat(call(), "ScaLAPACK: an operand has no cala layout"));
        call_scalapack<T, K>(x);
        return;
    }
    if (route == Route::Nothing) {
        if (speaker) say(cat(call(), "cala: nothing to do"));
        return;
    }

    // 4. The work: T := op(sub(A)) in sub(C)'s layout (redistribute), then the local update of
    // sub(C)'s part of this process (its trapezoid for p?tradd); beta = 0: C is not read.
    detail::Buffer<T> tbuf;
    if (route == Route::Cala) {
        if (!agreed.cached) grid = &make_grid(ctxt, comm, g, agreed);
        if (speaker) say(cat(call(), "cala: redistribute(", t, ") into sub(C)'s layout, then C := beta*C + alpha*T"));
        const MatrixRef<T> av = view(*grid, *sa, x.a);
        const MatrixRef<T> tv = workspace(*grid, sc->rows.dist, sc->cols.dist, tbuf);
        const Op op = t == 'N' ? Op::N : t == 'T' ? Op::T : Op::C;
        bool fell_back = false;
        cala_or_scalapack(rout, g, [&] { redistribute(op, av, tv); }, [&] {
            fell_back = true;
            call_scalapack<T, K>(x);
        });
        if (fell_back) return;
    } else if (speaker) {
        say(cat(call(), "cala: C := beta*C on each process's part (alpha = 0)"));
    }
    const index_t t_ld = std::max<index_t>(sc->rows.dist.local_size(g.row), 1);
    update_local(*sc, g, K == Kind::Tradd ? u : 'A', beta, x.c, [&](index_t il, index_t jl) {
        return route == Route::Cala ? alpha * tbuf.data()[il + jl * t_ld] : T(0);
    });
}

template <class T, Kind K>
void entry(const Args<T>& x) noexcept {
    run_entry(
        routine<T, K>().name.c_str(),
        [&] {
            return detail::cat(K == Kind::Tradd ? detail::cat("uplo=", x.uplo[0], " ") : std::string(),
                               x.trans ? detail::cat("trans=", x.trans[0], " ") : std::string(), "m=", *x.m,
                               " n=", *x.n);
        },
        [&] { padd<T, K>(x); }, [&] { call_scalapack<T, K>(x); });
}

}  // namespace

}  // namespace cala::scalapack

#define CALA_TAIL_PARAMS(T)                                                                                        \
    const int *m, const int *n, const T *alpha, const T *a, const int *ia, const int *ja, const int *desca,        \
        const T *beta, T *c, const int *ic, const int *jc, const int *descc
#define CALA_TAIL_ARGS m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc
#define CALA_EXPORT extern "C" __attribute__((visibility("default")))
#define CALA_GEADD_ENTRY(sym, T)                                                                                   \
    CALA_EXPORT void sym(const char* trans, CALA_TAIL_PARAMS(T)) {                                                 \
        cala::scalapack::entry<T, cala::scalapack::Kind::Geadd>({nullptr, trans, CALA_TAIL_ARGS});                 \
    }
#define CALA_TRADD_ENTRY(sym, T)                                                                                   \
    CALA_EXPORT void sym(const char* uplo, const char* trans, CALA_TAIL_PARAMS(T)) {                               \
        cala::scalapack::entry<T, cala::scalapack::Kind::Tradd>({uplo, trans, CALA_TAIL_ARGS});                    \
    }
#define CALA_TRAN_ENTRY(sym, T, K)                                                                                 \
    CALA_EXPORT void sym(CALA_TAIL_PARAMS(T)) {                                                                    \
        cala::scalapack::entry<T, cala::scalapack::Kind::K>({nullptr, nullptr, CALA_TAIL_ARGS});                   \
    }
#define CALA_SPELL(M, lower, upper, ...) M(lower##_, __VA_ARGS__) M(lower, __VA_ARGS__) M(upper, __VA_ARGS__)

CALA_SPELL(CALA_GEADD_ENTRY, psgeadd, PSGEADD, float)
CALA_SPELL(CALA_GEADD_ENTRY, pdgeadd, PDGEADD, double)
CALA_SPELL(CALA_GEADD_ENTRY, pcgeadd, PCGEADD, std::complex<float>)
CALA_SPELL(CALA_GEADD_ENTRY, pzgeadd, PZGEADD, std::complex<double>)
CALA_SPELL(CALA_TRADD_ENTRY, pstradd, PSTRADD, float)
CALA_SPELL(CALA_TRADD_ENTRY, pdtradd, PDTRADD, double)
CALA_SPELL(CALA_TRADD_ENTRY, pctradd, PCTRADD, std::complex<float>)
CALA_SPELL(CALA_TRADD_ENTRY, pztradd, PZTRADD, std::complex<double>)
CALA_SPELL(CALA_TRAN_ENTRY, pstran, PSTRAN, float, TranU)
CALA_SPELL(CALA_TRAN_ENTRY, pdtran, PDTRAN, double, TranU)
CALA_SPELL(CALA_TRAN_ENTRY, pctranu, PCTRANU, std::complex<float>, TranU)
CALA_SPELL(CALA_TRAN_ENTRY, pztranu, PZTRANU, std::complex<double>, TranU)
CALA_SPELL(CALA_TRAN_ENTRY, pctranc, PCTRANC, std::complex<float>, TranC)
CALA_SPELL(CALA_TRAN_ENTRY, pztranc, PZTRANC, std::complex<double>, TranC)

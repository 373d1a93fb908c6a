// p?symm_, p?hemm_, p?syrk_, p?herk_ through the ABI (linked before -lscalapack-mpich) on every
// route CALA_SHIM_SYMMETRIC can force (auto, 2dbc, sbc, tbc; auto once more on smaller blocks),
// on the squarest grid of the world's ranks. Each call, on every rank:
//   * the result equals a sequential reference within a componentwise (k + 2)·eps bound, with
//     A's unused triangle NaN (not read), hemm's diagonal imaginary parts rogue (taken as zero);
//   * beta = 0 with NaN in sub(C): C not read; everything outside what the routine writes (the
//     rest of the array, the other triangle for the rank-k routines) bitwise untouched;
//   * the words and messages cala's counters saw equal the model of the route decide_symmetric
//     picks (lib/scalapack/sym_route.cpp, built in) -- so the route that ran is the one predicted;
//   * a forced route runs when a pattern of its kind fits P and UPLO = L, else 2DBC.
// Rank 0 prints one "route: <routine> <force> <name>" line per call; sym_route.py checks that
// CALA_SHIM=log's lines name the same routes.

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "cala/comm.hpp"
#include "scalapack/sym_route.hpp"

using cala::BlockCyclic;
using cala::Op;
using cala::Side;
using cala::Uplo;
using namespace cala::scalapack;
using Z = std::complex<double>;

extern "C" {
void Cblacs_get(int, int, int*);
void Cblacs_gridinit(int*, const char*, int, int);
void Cblacs_gridinfo(int, int*, int*, int*, int*);
void Cblacs_gridexit(int);
void descinit_(int*, const int*, const int*, const int*, const int*, const int*, const int*, const int*, const int*,
               int*);
void pdsymm_(const char*, const char*, const int*, const int*, const double*, const double*, const int*, const int*,
             const int*, const double*, const int*, const int*, const int*, const double*, double*, const int*,
             const int*, const int*);
void pzhemm_(const char*, const char*, const int*, const int*, const Z*, const Z*, const int*, const int*, const int*,
             const Z*, const int*, const int*, const int*, const Z*, Z*, const int*, const int*, const int*);
void pdsyrk_(const char*, const char*, const int*, const int*, const double*, const double*, const int*, const int*,
             const int*, const double*, double*, const int*, const int*, const int*);
void pzherk_(const char*, const char*, const int*, const int*, const double*, const Z*, const int*, const int*,
             const int*, const double*, Z*, const int*, const int*, const int*);
}

namespace {

constexpr int G = 45;  // every array G x G in NB x NB blocks (4; 2 in the last pass)
int NB = 4;
constexpr int M = 37, N = 22;      // symm: sub(C) M x N; syrk: sub(C) M x M, k = N
constexpr int IA = 3, IB = 2, JB = 5;  // sub(A) and sub(C) at (3, 3) (inside a block), sub(B) at (2, 5)
int p, q, myrow, mycol, rsrc, csrc, checks, failures;

double value(int seed, int i, int j) { return std::sin(seed * 0.37 + i * 1.3 + j * 0.7); }
template <class T>
T elem(int seed, int i, int j) {
    if constexpr (std::is_same_v<T, Z>) return {value(seed, i, j), value(seed + 50, j, i)};
    else return value(seed, i, j);
}

template <class T>
T cj(T x) {
    if constexpr (std::is_same_v<T, Z>) return std::conj(x);
    else return x;
}
template <class T>
T re(T x) { return T(std::real(x)); }

// A local array of a G x G matrix from (rs, cs), and its global <-> local maps.
template <class T>
struct Local {
    int rs, cs, mloc, nloc, desc[9];
    std::vector<T> a;
    Local(int ctxt, int rs_, int cs_) : rs(rs_), cs(cs_) {
        mloc = count(G, rs, myrow, p), nloc = count(G, cs, mycol, q);
        int info = 0, g = G, nb = NB, lld = std::max(1, mloc);
        descinit_(desc, &g, &g, &nb, &nb, &rs, &cs, &ctxt, &lld, &info);
        a.resize(static_cast<std::size_t>(std::max(1, mloc)) * std::max(1, nloc));
    }
    static int count(int n, int src, int me, int np) {
        int c = 0;
        for (int i = 0; i < n; ++i) c += (i / NB + src) % np == me;
        return c;
    }
    int grow(int il) const { return global(il, rs, myrow, p); }
    int gcol(int jl) const { return global(jl, cs, mycol, q); }
    static int global(int l, int src, int me, int np) {
        return ((l / NB) * np + (me - src + np) % np) * NB + l % NB;
    }
    T& at(int il, int jl) { return a[static_cast<std::size_t>(il + jl * std::max(1, mloc))]; }
    BlockCyclic sub(int i0, int j0, int r, int c) const {
        return BlockCyclic(G, G, NB, NB, p, q, rs, cs).sub(i0, j0, r, c);
    }
};

void check(bool ok, const char* what, const std::string& call) {
    int bad = ok ? 0 : 1, all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    ++checks;
    if (all == 0) return;
    ++failures;
    if (myrow == 0 && mycol == 0) std::printf("sym_route: FAILED %s on %d ranks: %s\n", what, all, call.c_str());
}

// One call: fills A (stored triangle, NaN elsewhere in sub(A)), B and C, runs `call`, checks.
template <class T>
void run_case(int ctxt, bool rank_k, char side, char uplo, char trans, bool zero_beta, SymForce force) {
    constexpr bool cplx = std::is_same_v<T, Z>;
    const bool left = side == 'L', notran = trans == 'N';
    const int ka = rank_k ? N : left ? M : N;  // symm: A ka x ka; syrk: k
    const int cm = M, cn = rank_k ? M : N;
    Local<T> A(ctxt, rsrc, csrc), B(ctxt, 0, 0), C(ctxt, rsrc, csrc);
    const T nan = T(std::nan(""));
    // Logical operands in sub-matrix coordinates: S (symmetric / Hermitian), W (B or A of syrk).
    auto S = [&](int r, int c) {
        if (r < c) return cj(elem<T>(1, c, r));
        return r == c ? re(elem<T>(1, r, c)) : elem<T>(1, r, c);
    };
    auto W = [&](int r, int c) { return elem<T>(2, r, c); };  // rank_k: op(A) is n x k
    for (int jl = 0; jl < A.nloc; ++jl)
        for (int il = 0; il < A.mloc; ++il) {
            const int i = A.grow(il), j = A.gcol(jl), r = i - (IA - 1), c = j - (IA - 1);
            T& x = A.at(il, jl);
            x = elem<T>(9, i, j);  // outside sub(A)
            if (rank_k) {
                const int rows = notran ? cm : N, cols = notran ? N : cm;
                if (r >= 0 && r < rows && c >= 0 && c < cols) {
                    const T w = notran ? W(r, c) : W(c, r);
                    x = notran ? w : cj(w);
                }
            } else if (r >= 0 && r < ka && c >= 0 && c < ka) {
                const bool stored = uplo == 'L' ? r >= c : r <= c;
                x = stored ? S(r, c) : nan;
                if constexpr (cplx)
                    if (r == c) x = Z(x.real(), 7.0);  // hemm reads no imaginary diagonal
            }
        }
    for (int jl = 0; jl < B.nloc; ++jl)
        for (int il = 0; il < B.mloc; ++il) {
            const int r = B.grow(il) - (IB - 1), c = B.gcol(jl) - (JB - 1);
            B.at(il, jl) = r >= 0 && r < cm && c >= 0 && c < cn ? W(r, c) : elem<T>(8, B.grow(il), B.gcol(jl));
        }
    auto in_sub = [&](int r, int c) { return r >= 0 && r < cm && c >= 0 && c < cn; };
    auto written = [&](int r, int c) { return in_sub(r, c) && (!rank_k || (uplo == 'L' ? r >= c : r <= c)); };
    for (int jl = 0; jl < C.nloc; ++jl)
        for (int il = 0; il < C.mloc; ++il) {
            const int r = C.grow(il) - (IA - 1), c = C.gcol(jl) - (IA - 1);
            C.at(il, jl) = in_sub(r, c) && zero_beta ? nan : elem<T>(3, C.grow(il), C.gcol(jl));
        }
    const std::vector<T> c0 = C.a;
    T alpha = T(1.5), beta = T(zero_beta ? 0.0 : 0.5);
    if constexpr (cplx) alpha = Z(1.5, -0.5), beta = zero_beta ? Z(0) : Z(0.5, 0.25);
    const double ralpha = 1.5, rbeta = zero_beta ? 0.0 : 0.5;  // p?herk's real scalars

    SymProblem prob;
    prob.rank_k = rank_k, prob.side = left ? Side::Left : Side::Right;
    prob.uplo = uplo == 'L' ? Uplo::Lower : Uplo::Upper;
    prob.op = notran ? Op::N : cplx ? Op::C : Op::T;
    prob.a = rank_k ? A.sub(IA - 1, IA - 1, notran ? cm : N, notran ? N : cm) : A.sub(IA - 1, IA - 1, ka, ka);
    prob.b = B.sub(IB - 1, JB - 1, cm, cn);
    prob.c = C.sub(IA - 1, IA - 1, cm, cn);
    prob.beta_zero = zero_beta, prob.elem_size = sizeof(T), prob.is_complex = cplx;
    const SymDecision d = decide_symmetric(prob, force, cala::MachineModel::from_env());
    const std::string name = std::string(rank_k ? (cplx ? "PZHERK" : "PDSYRK") : (cplx ? "PZHEMM" : "PDSYMM")) + "(" +
                             (rank_k ? uplo : side) + "," + (rank_k ? trans : uplo) + ") beta=" +
                             (zero_beta ? "0" : "x") + " force=" + to_string(force);
    if (myrow == 0 && mycol == 0) std::printf("route: %s %s\n", name.c_str(), d.pick().name().c_str());

    const int m = cm, n = cn, k = N, ia = IA, ib = IB, jb = JB;
    const char s[2] = {side, 0}, u[2] = {uplo, 0}, t[2] = {trans, 0};
    const cala::Traffic before = cala::traffic();
    if constexpr (cplx) {
        if (rank_k) pzherk_(u, t, &n, &k, &ralpha, A.a.data(), &ia, &ia, A.desc, &rbeta, C.a.data(), &ia, &ia, C.desc);
        else pzhemm_(s, u, &m, &n, &alpha, A.a.data(), &ia, &ia, A.desc, B.a.data(), &ib, &jb, B.desc, &beta,
                     C.a.data(), &ia, &ia, C.desc);
    } else {
        if (rank_k) pdsyrk_(u, t, &n, &k, &alpha, A.a.data(), &ia, &ia, A.desc, &beta, C.a.data(), &ia, &ia, C.desc);
        else pdsymm_(s, u, &m, &n, &alpha, A.a.data(), &ia, &ia, A.desc, B.a.data(), &ib, &jb, B.desc, &beta,
                     C.a.data(), &ia, &ia, C.desc);
    }
    const cala::Traffic moved = cala::traffic() - before;

    // the result, and what must be untouched
    const double eps = std::ldexp(1.0, -52);
    bool close = true, untouched = true;
    for (int jl = 0; jl < C.nloc; ++jl)
        for (int il = 0; il < C.mloc; ++il) {
            const int r = C.grow(il) - (IA - 1), c = C.gcol(jl) - (IA - 1);
            const T got = C.at(il, jl), was = c0[static_cast<std::size_t>(il + jl * std::max(1, C.mloc))];
            if (!written(r, c)) {
                untouched = untouched && (std::isnan(std::real(was)) ? std::isnan(std::real(got))
                                                                        : got == was);
                continue;
            }
            T ref = zero_beta ? T(0) : (rank_k && cplx ? T(rbeta) : beta) * was;
            double mag = zero_beta ? 0.0 : std::abs(beta) * std::abs(was);
            const T al = rank_k && cplx ? T(ralpha) : alpha;
            for (int l = 0; l < (rank_k ? k : ka); ++l) {
                T x, y;
                if (rank_k) x = W(r, l), y = cj(W(c, l));
                else if (left) x = S(r, l), y = W(l, c);
                else x = W(r, l), y = S(l, c);
                ref += al * x * y;
                mag += std::abs(al) * std::abs(x) * std::abs(y);
            }
            if (rank_k && cplx && r == c) ref = re(ref);
            const double err = std::abs(got - ref);
            close = close && std::isfinite(std::real(got)) && err <= 4.0 * (ka + 2) * eps * mag + 1e-300;
        }
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const cala::Cost model = route_cost(prob, d.pick().layout, rank);
    check(close, "result within 4(k+2)eps", name);
    check(untouched, "entries outside what the routine writes untouched", name);
    check(moved.words() == model.words, "words moved == model of the route", name);
    check(moved.msgs() == model.msgs, "messages == model of the route", name);
    // a forced kind runs where a layout of that kind is a candidate (it fits P, UPLO = L)
    auto of_kind = [&](const SymCandidate& x) {
        return x.layout && (x.layout->kind == cala::SymmetricKind::TBC) == (force == SymForce::Tbc);
    };
    bool fits = false;
    for (const SymCandidate& x : d.candidates) fits = fits || of_kind(x);
    const bool symmetric = d.pick().layout.has_value();
    const bool want = force == SymForce::Auto   ? d.chosen == 0 || d.pick().seconds < d.candidates[0].seconds
                      : force == SymForce::TwoD ? !symmetric
                      : fits                    ? of_kind(d.pick())
                                                : !symmetric && !d.note.empty();
    check(want, "the route the force and the model ask for", name);
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int nranks = 0, ctxt = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    p = 1;
    for (int x = 1; x * x <= nranks; ++x)
        if (nranks % x == 0) p = x;
    q = nranks / p;
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, "Row", p, q);
    Cblacs_gridinfo(ctxt, &p, &q, &myrow, &mycol);
    rsrc = std::min(1, p - 1), csrc = std::min(1, q - 1);
    // auto, the three forced routes, then auto again on blocks of 2 (where the model predicts
    // the patterns cheaper on 6 and 8 ranks for most of the calls)
    const SymForce forces[] = {SymForce::Auto, SymForce::TwoD, SymForce::Sbc, SymForce::Tbc, SymForce::Auto};
    for (int pass = 0; pass < 5; ++pass) {
        setenv("CALA_SHIM_SYMMETRIC", to_string(forces[pass]), 1);
        if (pass == 4) NB = 2;
        for (const bool zero : {true, false}) {
            const SymForce f = forces[pass];
            run_case<double>(ctxt, false, 'L', 'L', 'N', zero, f);
            run_case<double>(ctxt, false, 'R', 'L', 'N', zero, f);
            run_case<double>(ctxt, false, 'L', 'U', 'N', zero, f);
            run_case<Z>(ctxt, false, 'L', 'L', 'N', zero, f);
            run_case<double>(ctxt, true, 'L', 'L', 'N', zero, f);
            run_case<double>(ctxt, true, 'L', 'L', 'T', zero, f);
            run_case<double>(ctxt, true, 'L', 'U', 'N', zero, f);
            run_case<Z>(ctxt, true, 'L', 'L', 'C', zero, f);
        }
    }
    if (myrow == 0 && mycol == 0)
        std::printf("sym_route: %d ranks (%d x %d), %d checks, %d failed%s\n", nranks, p, q, checks, failures,
                    failures ? "" : "; all checks passed");
    Cblacs_gridexit(ctxt);
    MPI_Finalize();
    return failures != 0;
}

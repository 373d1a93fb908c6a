#pragma once
// The argument list that p?potrs_ and p?posv_ share (UPLO, N, NRHS, A, IA, JA, DESCA, B, IB, JB,
// DESCB, INFO) and ScaLAPACK's checks of it, in ScaLAPACK's order (p?posv checks what p?potrs
// checks: CHK1MAT on A and B, then p?potrs's own).

#include <cctype>
#include <cstddef>
#include <vector>

#include "core/check.hpp"
#include "scalapack/context.hpp"
#include "scalapack/descriptor.hpp"

namespace cala::scalapack {

// ScaLAPACK is Fortran: UPLO's hidden length comes last.
template <class T>
using SolveFn = void (*)(const char*, const int*, const int*, const T*, const int*, const int*, const int*, T*,
                         const int*, const int*, const int*, int*, std::size_t);

template <class T>
struct SolveArgs {
    const char* uplo;
    const int *n, *nrhs;
    const T* a;
    const int *ia, *ja, *desca;
    T* b;
    const int *ib, *jb, *descb;
    int* info;

    char uplo_upper() const { return static_cast<char>(std::toupper(static_cast<unsigned char>(uplo[0]))); }
    /// Runs ScaLAPACK's routine `fn` on these arguments.
    void call(SolveFn<T> fn) const { fn(uplo, n, nrhs, a, ia, ja, desca, b, ib, jb, descb, info, 1); }
};

inline constexpr int kSolveArgA = 7, kSolveArgB = 11;  // DESCA's and DESCB's positions in the list

// CHK1MAT on A (N 2, IA 5, JA 6, DESCA 7) and on B (N 2, NRHS 3, IB 9, JB 10, DESCB 11), then,
// when they pass, UPLO (1), IA and JA on a block boundary (5, 6), A's MB == NB (DESCA entry 6),
// sub(B) starting on a block boundary in the process row of sub(A) (9), B's MB == A's NB (DESCB
// entry 6), B in A's context (DESCB entry 2); then the arrays A (4) and B (8) present. `same`
// receives what PCHK2MAT requires to be equal on every process of the grid.
template <class T>
ArgCheck check_solve_args(const SolveArgs<T>& x, const GridPos& g, std::vector<SameArg>& same) {
    using detail::cat;
    constexpr int kMult = ArgCheck::kDescMult;
    // The process row holding global row i (1-based) of a matrix with this row blocking (INDXG2P).
    auto owner_row = [&](int i, int mb, int rsrc) { return (rsrc + (i - 1) / mb) % g.p; };
    const int n = *x.n, nrhs = *x.nrhs, ia = *x.ia, ja = *x.ja, ib = *x.ib;
    const char u = x.uplo_upper();
    ArgCheck chk;
    chk1mat(chk, "A", g, n, 2, n, 2, ia, ja, x.desca, kSolveArgA);
    chk1mat(chk, "B", g, n, 2, nrhs, 3, ib, *x.jb, x.descb, kSolveArgB);
    if (chk.ok()) {
        const int mba = x.desca[SL_MB - 1], nba = x.desca[SL_NB - 1], mbb = x.descb[SL_MB - 1];
        if (u != 'U' && u != 'L') chk.fail(1 * kMult, cat("UPLO = '", x.uplo[0], "'"));
        else if ((ia - 1) % mba != 0) chk.fail(5 * kMult, cat("IA = ", ia, " does not start a block of MB = ", mba));
        else if ((ja - 1) % nba != 0) chk.fail(6 * kMult, cat("JA = ", ja, " does not start a block of NB = ", nba));
        else if (mba != nba) chk.fail(kSolveArgA * kMult + SL_NB, cat("DESCA MB = ", mba, " differs from NB = ", nba));
        else if ((ib - 1) % mbb != 0 ||
                 owner_row(ib, mbb, x.descb[SL_RSRC - 1]) != owner_row(ia, mba, x.desca[SL_RSRC - 1]))
            chk.fail(9 * kMult, cat("sub(B) (IB = ", ib, ") does not start a block in the process row of sub(A)"));
        else if (mbb != nba) chk.fail(kSolveArgB * kMult + SL_NB, cat("DESCB MB = ", mbb, " differs from A's NB = ", nba));
        else if (x.descb[SL_CTXT - 1] != x.desca[SL_CTXT - 1])
            chk.fail(kSolveArgB * kMult + SL_CTXT,
                     cat("DESCB context ", x.descb[SL_CTXT - 1], " is not A's context ", x.desca[SL_CTXT - 1]));
    }
    check_array(chk, "A", x.a, n > 0 && nrhs > 0, read_descriptor(x.desca), g, 4);
    check_array(chk, "B", x.b, n > 0 && nrhs > 0, read_descriptor(x.descb), g, 8);
    same = {{n, 2 * kMult}, {ia, 5 * kMult}, {ja, 6 * kMult}};
    same_descriptor(same, x.desca, kSolveArgA);
    same.insert(same.end(), {{nrhs, 3 * kMult}, {ib, 9 * kMult}, {*x.jb, 10 * kMult}});
    same_descriptor(same, x.descb, kSolveArgB);
    same.push_back({u == 'U' ? 'U' : 'L', 1 * kMult});
    return chk;
}

}  // namespace cala::scalapack

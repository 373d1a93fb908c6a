#pragma once
// What p?getrf_, p?getrs_ and p?gesv_ share: the threshold's size, ScaLAPACK's block checks,
// the argument list of the solves (p?getrs: TRANS, N, NRHS, A, IA, JA, DESCA, IPIV, B, IB, JB,
// DESCB, INFO; p?gesv: the same without TRANS) and its checks in ScaLAPACK's order, and the
// CALA_VERBOSE description of cala::getrf.
//
// pgetrf.cpp, pgetrs.cpp, pgesv.cpp -> lu_args (this) -> descriptor, context (SameArg)

#include <cctype>
#include <cstddef>
#include <string>
#include <vector>

#include "cala/lu.hpp"
#include "core/check.hpp"
#include "scalapack/context.hpp"
#include "scalapack/descriptor.hpp"

namespace cala::scalapack {

/// The threshold's measure of an LU factorization: m·n·min(m, n).
inline double lu_size(int m, int n) {
    return static_cast<double>(m) * n * (m < n ? m : n);
}

/// ScaLAPACK's p?getrf/p?getrs/p?gesv checks after CHK1MAT: IA on a block boundary (argument
/// `ia_pos`), JA (ia_pos + 1), MB == NB (entry NB of descriptor argument `desc_pos`).
inline void check_lu_block(ArgCheck& chk, int ia, int ja, const int* desca, int ia_pos, int desc_pos) {
    using detail::cat;
    constexpr int k = ArgCheck::kDescMult;
    const int mb = desca[SL_MB - 1], nb = desca[SL_NB - 1];
    if ((ia - 1) % mb != 0) chk.fail(ia_pos * k, cat("IA = ", ia, " does not start a block of MB = ", mb));
    else if ((ja - 1) % nb != 0) chk.fail((ia_pos + 1) * k, cat("JA = ", ja, " does not start a block of NB = ", nb));
    else if (mb != nb) chk.fail(desc_pos * k + SL_NB, cat("DESCA MB = ", mb, " differs from NB = ", nb));
}

/// "getrf (CALU, 2D, tournament pivoting) nb=... words/rank(0,0)=... msgs=..." from cala's model.
std::string describe_getrf(const BlockCyclic& a, std::size_t elem_size, bool is_complex);

// ScaLAPACK is Fortran: TRANS's hidden length comes last (p?getrs only).
template <class T>
using PgetrsFn = void (*)(const char*, const int*, const int*, const T*, const int*, const int*, const int*,
                          const int*, T*, const int*, const int*, const int*, int*, std::size_t);
template <class T>
using PgesvFn = void (*)(const int*, const int*, T*, const int*, const int*, const int*, int*, T*, const int*,
                         const int*, const int*, int*);

/// p?getrs_'s or p?gesv_'s arguments (trans == nullptr: p?gesv).
template <class T>
struct LuSolveArgs {
    const char* trans;
    const int *n, *nrhs;
    T* a;
    const int *ia, *ja, *desca;
    int* ipiv;
    T* b;
    const int *ib, *jb, *descb;
    int* info;

    /// The position of N in the argument list: 2 (p?getrs), 1 (p?gesv); the others follow.
    int base() const noexcept { return trans != nullptr ? 2 : 1; }
    int desca_pos() const noexcept { return base() + 5; }
    int descb_pos() const noexcept { return base() + 10; }
    char trans_upper() const {
        return static_cast<char>(std::toupper(static_cast<unsigned char>(trans != nullptr ? trans[0] : 'N')));
    }
};

/// CHK1MAT on A (N, N, IA, JA, DESCA) and on B (N, NRHS, IB, JB, DESCB); then, when they pass,
/// TRANS (p?getrs: 1), IA and JA on a block boundary, A's MB == NB, sub(B) starting a block in
/// sub(A)'s process row (IB's position), B's MB == A's NB, B in A's context; then the arrays.
/// `same` receives what PCHK2MAT requires to be equal on every process of the grid.
template <class T>
ArgCheck check_lu_solve(const LuSolveArgs<T>& x, const GridPos& g, std::vector<SameArg>& same) {
    using detail::cat;
    constexpr int k = ArgCheck::kDescMult;
    auto owner_row = [&](int i, int mb, int rsrc) { return (rsrc + (i - 1) / mb) % g.p; };
    const int b0 = x.base(), da = x.desca_pos(), db = x.descb_pos();
    const int n = *x.n, nrhs = *x.nrhs, ia = *x.ia, ja = *x.ja, ib = *x.ib;
    const char t = x.trans_upper();
    ArgCheck chk;
    chk1mat(chk, "A", g, n, b0, n, b0, ia, ja, x.desca, da);
    chk1mat(chk, "B", g, n, b0, nrhs, b0 + 1, ib, *x.jb, x.descb, db);
    if (chk.ok()) {
        const int nba = x.desca[SL_NB - 1], mba = x.desca[SL_MB - 1], mbb = x.descb[SL_MB - 1];
        if (x.trans != nullptr && t != 'N' && t != 'T' && t != 'C') chk.fail(1 * k, cat("TRANS = '", x.trans[0], "'"));
        else {
            check_lu_block(chk, ia, ja, x.desca, b0 + 3, da);
            if (!chk.ok()) {
            } else if ((ib - 1) % mbb != 0 ||
                       owner_row(ib, mbb, x.descb[SL_RSRC - 1]) != owner_row(ia, mba, x.desca[SL_RSRC - 1]))
                chk.fail((b0 + 8) * k, cat("sub(B) (IB = ", ib, ") does not start a block in the process row of sub(A)"));
            else if (mbb != nba) chk.fail(db * k + SL_NB, cat("DESCB MB = ", mbb, " differs from A's NB = ", nba));
            else if (x.descb[SL_CTXT - 1] != x.desca[SL_CTXT - 1])
                chk.fail(db * k + SL_CTXT,
                         cat("DESCB context ", x.descb[SL_CTXT - 1], " is not A's context ", x.desca[SL_CTXT - 1]));
        }
    }
    const bool used = n > 0 && nrhs > 0;
    check_array(chk, "A", x.a, used, read_descriptor(x.desca), g, b0 + 2);
    if (chk.ok() && used && x.ipiv == nullptr) chk.fail((b0 + 6) * k, "IPIV is a null pointer");
    check_array(chk, "B", x.b, used, read_descriptor(x.descb), g, b0 + 7);
    same = {{n, b0 * k}, {ia, (b0 + 3) * k}, {ja, (b0 + 4) * k}};
    same_descriptor(same, x.desca, da);
    same.insert(same.end(), {{nrhs, (b0 + 1) * k}, {ib, (b0 + 8) * k}, {*x.jb, (b0 + 9) * k}});
    same_descriptor(same, x.descb, db);
    if (x.trans != nullptr) same.push_back({t == 'N' || t == 'T' ? t : 'C', 1 * k});
    return chk;
}

}  // namespace cala::scalapack

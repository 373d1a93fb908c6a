#pragma once
// The symmetric route of p?symm_/p?syrk_ (sym_route.hpp) carried out on the caller's arrays:
// the decision said and logged, the operands moved onto the pattern, cala's routine there, C back.
//
// psymm.cpp, psyrk.cpp -> sym_run (this) -> sym_route (decision) + redistribute (matrix/) +
//   cala::symm / syrk on TiledMatrix (symm/)

#include <string>

#include "cala/matrix.hpp"
#include "cala/symm.hpp"
#include "cala/tiled_matrix.hpp"
#include "scalapack/report.hpp"
#include "scalapack/settle.hpp"
#include "scalapack/sym_route.hpp"

namespace cala::scalapack {

/// decide_symmetric with CALA_SHIM_SYMMETRIC and the planner's machine constants; the route and
/// the predictions go to CALA_SHIM=log's line (note_call). Local, the same on every process.
/// A cala::Error from the model (the same on every process) leaves the call on 2DBC, saying why.
inline SymDecision route_call(const SymProblem& p) {
    const SymForce force = symmetric_force();
    SymDecision d;
    try {
        d = decide_symmetric(p, force, MachineModel::from_env());
    } catch (const Error& e) {
        d = SymDecision{{SymCandidate{}}, 0, force, std::string("the model failed (") + e.what() + "): 2dbc"};
    }
    note_call(d.describe());
    return d;
}

/// C := alpha·A·B + beta·C (or B·A) with A's lower triangle: sub(A) (lower tiles), sub(B) and, when
/// C is read, sub(C) redistributed onto `l`, symm/hemm there, sub(C) written back. Collective.
template <class T, bool Hermitian>
void symm_on_pattern(const Grid2D& grid, const SymLayouts& l, Side side, T alpha, const MatrixRef<T>& a,
                     const MatrixRef<T>& b, T beta, const MatrixRef<T>& c) {
    const TiledMatrix<T> at(grid, l.a), bt(grid, l.b), ct(grid, l.c);
    redistribute(a, at);
    redistribute(b, bt);
    if (beta != T(0)) redistribute(c, ct);
    if constexpr (Hermitian) hemm(side, Uplo::Lower, alpha, at, bt, beta, ct);
    else symm(side, Uplo::Lower, alpha, at, bt, beta, ct);
    redistribute(ct, c);
}

/// C's lower triangle := alpha·W·Wᵀ (Wᴴ) + beta·C with W = op(sub(A)) already n x k in `w`:
/// W and sub(C) (always: its diagonal tiles' upper triangles must come back unchanged)
/// redistributed onto `l`, syrk/herk there, the lower tiles of sub(C) written back. Collective.
template <class T, bool Hermitian>
void syrk_on_pattern(const Grid2D& grid, const SymLayouts& l, T alpha, const MatrixRef<T>& w, T beta,
                     const MatrixRef<T>& c) {
    const TiledMatrix<T> at(grid, l.a), ct(grid, l.c);
    redistribute(w, at);
    redistribute(c, ct);
    if constexpr (Hermitian) herk(Uplo::Lower, std::real(alpha), at, std::real(beta), ct);
    else syrk(Uplo::Lower, alpha, at, beta, ct);
    redistribute(ct, c);
}

}  // namespace cala::scalapack

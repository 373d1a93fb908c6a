#pragma once
// What the shim's solves (p?getrs_, p?gesv_, p?potrs_, p?posv_) share between their own checks
// and their work: the Call record of A's context, and, after the checks, cala's views of A
// (n x n) and B (n x nrhs) and the one agreement over the grid (settle).
//
// pgetrs.cpp, pgesv.cpp, ppotrs.cpp, pposv.cpp -> solve_settle (this) -> settle, view

#include <functional>
#include <optional>
#include <span>
#include <string>

#include "scalapack/settle.hpp"
#include "scalapack/view.hpp"

namespace cala::scalapack {

/// The Call of routine `rout` on the context of descriptor `desca`: this process in its grid and,
/// when CALA_VERBOSE is set, the prefix "<rout><what> on pxq -> ".
Call solve_call(const char* rout, const int* desca, const std::string& what);

/// A and B as cala sees them, and the grid to compute on (nullptr: the call is finished).
struct SolveOperands {
    const Grid2D* grid = nullptr;
    std::optional<SubMatrix> a, b;
};

/// After a solve's checks `chk`: the layouts of sub(A) = A(ia:, ja:) (n x n) and sub(B) =
/// B(ib:, jb:) (n x nrhs) where cala computes (route Cala, checks passed), then settle (one
/// agreement; `scalapack` runs when an operand has no cala layout). Collective over the grid.
SolveOperands settle_solve(const Call& c, const ArgCheck& chk, Route route, std::span<const SameArg> same,
                           const int* desca, int ia, int ja, const int* descb, int ib, int jb, int n, int nrhs,
                           int* info, const std::function<void()>& scalapack);

}  // namespace cala::scalapack

#pragma once
// Where the shim computes p?symm_/p?hemm_ and p?syrk_/p?herk_: on the caller's 2DBC layout in
// place, or on a symmetric layout (SBC/TBC, lower half) that fits the grid's P ranks, reached by
// redistributing sub(A) (its lower tiles), sub(B) and sub(C) there and sub(C) back. The cost
// model decides, identically on every process (pure arithmetic on the agreed descriptors).
//
// psymm.cpp, psyrk.cpp -> sym_route (this) -> model: symm_cost, syrk_cost, redistribute_cost,
//   MachineModel (the planner's constants); layout: choose_symmetric_layout
//
// A route is a list of phases (each a redistribute or the symm/syrk itself); its predicted time
// is the sum over phases of the slowest rank's latency·msgs + bytes·max(sent, received)·beta +
// flops·gamma -- the per-rank figure the planners use, taken per phase because every phase ends
// when its last rank does.
//
//   symm, 2DBC:  [B -> C's layout if they differ]  symm(A, B, C) on the caller's grid
//   symm, sym:   A's lower tiles -> lower(sym), B -> paired, [C -> paired if beta != 0],
//                symm on the pattern, paired -> C
//   syrk, 2DBC:  [op(A) -> rows like C's]  syrk(op(A), C)
//   syrk, sym:   [op(A) -> rows like C's if TRANS != N]  -> paired, C -> lower(sym) (always: the
//                diagonal tiles' other triangle must come back as it was), syrk, lower -> C

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cala/cholesky.hpp"
#include "cala/layout.hpp"
#include "cala/model.hpp"
#include "cala/tiled_matrix.hpp"

namespace cala::scalapack {

/// CALA_SHIM_SYMMETRIC: auto (the default: the model decides), 2dbc, sbc, tbc (forced; sbc means
/// basic or extended SBC, whichever fits P). Read at every call; must be the same on every process.
enum class SymForce { Auto, TwoD, Sbc, Tbc };
/// The value of `text` (nullptr or empty: Auto); `*bad` set when it is none of the four.
SymForce parse_symmetric_force(const char* text, bool* bad = nullptr);
/// CALA_SHIM_SYMMETRIC now (an unknown value: Auto, with one line on stderr per process).
SymForce symmetric_force();
const char* to_string(SymForce f) noexcept;

/// A call's operands as the routes see them: the layouts of the submatrices (checked and agreed).
struct SymProblem {
    bool rank_k = false;        ///< syrk/herk; else symm/hemm
    Side side = Side::Left;     ///< symm
    Uplo uplo = Uplo::Lower;    ///< the stored triangle (A for symm, C for syrk)
    Op op = Op::N;              ///< syrk: op(A) = A (N), Aᵀ (T) or Aᴴ (C); `a` is sub(A) as it lies
    BlockCyclic a, b, c;        ///< sub(A), sub(B) (symm), sub(C)
    bool beta_zero = false;     ///< C is not read
    GridOrder order = GridOrder::RowMajor;
    std::size_t elem_size = 8;
    bool is_complex = false;

    int nranks() const noexcept { return c.p() * c.q(); }
    index_t sym_n() const noexcept { return rank_k ? c.m() : side == Side::Left ? c.m() : c.n(); }
    /// syrk: op(A)'s columns (k); symm: B's other dimension.
    index_t other() const noexcept;
    /// The tiles on the symmetric route (sub(A)'s block size for symm, sub(C)'s for syrk).
    index_t sym_nb() const noexcept { return rank_k ? c.rows.nb : a.rows.nb; }
    /// syrk: the n x k workspace op(A) is redistributed into (rows like sub(C)'s).
    BlockCyclic workspace() const;
    /// syrk: op(A) needs that workspace on the 2DBC route.
    bool moves_a_2dbc() const noexcept { return op != Op::N || !(a.rows == c.rows); }
};

/// The symmetric route's layouts for a choice of pattern.
struct SymLayouts {
    SymmetricLayout sym;
    TileLayout a, b, c;  ///< symm: lower, paired, paired; syrk: a paired, c lower (b unused)
};
SymLayouts symmetric_layouts(const SymProblem& p, const SymmetricChoice& choice);

/// One candidate route and what the model predicts for it.
struct SymCandidate {
    std::optional<SymmetricChoice> layout;  ///< nullopt: the caller's 2DBC layout in place
    double seconds = 0;                     ///< predicted
    std::string name() const;               ///< "2dbc", "sbc r=4", "sbc-extended r=4", "tbc c=2"
};

/// What runs: candidates[0] is 2DBC in place, then every symmetric layout on exactly P ranks
/// (choose_symmetric_layout's list); `chosen` indexes them.
struct SymDecision {
    std::vector<SymCandidate> candidates;
    std::size_t chosen = 0;
    SymForce force = SymForce::Auto;  ///< what CALA_SHIM_SYMMETRIC asked for
    std::string note;  ///< why no symmetric candidate, or why a forced route did not run
    const SymCandidate& pick() const { return candidates[chosen]; }
    /// "route=tbc c=2 (tbc) predicted 2dbc=0.0012s sbc-extended r=4=0.00091s tbc c=2=0.00088s"
    std::string describe() const;
};

/// Auto: the candidate with the lowest prediction (2DBC on ties); a forced kind: its best layout
/// if one fits P (else 2DBC, saying so in `note`); Upper: 2DBC only (the layouts hold the lower
/// half). Pure, no MPI: the same on every process for the same problem, force and machine.
SymDecision decide_symmetric(const SymProblem& p, SymForce force, const MachineModel& machine);

/// Exact words, messages and flops of each phase of a route on communicator rank `rank`.
std::vector<Cost> route_phases(const SymProblem& p, const std::optional<SymmetricChoice>& layout, int rank);
/// Their sum.
Cost route_cost(const SymProblem& p, const std::optional<SymmetricChoice>& layout, int rank);

}  // namespace cala::scalapack

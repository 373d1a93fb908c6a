#pragma once
// The steps a routine of the shim (p?potrf_, p?potrs_, p?posv_; p?symm_, p?syrk_ and the other
// symmetric PBLAS routines) shares around its own checks and work: the context check, one
// agreement over the grid, the illegal-argument report and the routing (nothing to do,
// ScaLAPACK's own routine, or cala on a cached grid).
//
// ppotrf.cpp, ppotrs.cpp, pposv.cpp, psymm.cpp, psyrk.cpp -> settle (this) -> context (agree,
// grids) + report (PXERBLA, verbose)

#include <functional>
#include <span>
#include <string>

#include "cala/grid.hpp"
#include "scalapack/context.hpp"
#include "scalapack/descriptor.hpp"
#include "scalapack/report.hpp"

namespace cala::scalapack {

/// One call as its steps see it.
struct Call {
    const char* rout;  ///< the routine as PXERBLA names it
    int ctxt;          ///< the context of the first matrix argument
    GridPos g;         ///< this process in it (p == -1: not in it)
    bool verbose;      ///< CALA_VERBOSE is set
    std::string head;  ///< the CALA_VERBOSE prefix ("PDPOTRF(L) n=8 on 2x2 -> "), when verbose
    Checker who = Checker::Scalapack;  ///< a ScaLAPACK routine's reports, or a PBLAS routine's
    /// CALA_VERBOSE lines about the whole call come from grid process (0, 0).
    bool speaker() const noexcept { return verbose && g.row == 0 && g.col == 0; }
};

/// Where a call the shim did not decline goes (decline.hpp took the small ones already).
enum class Route { Nothing, Cala };

/// The first matrix argument's context is no grid this process belongs to (nobody to agree
/// with): info := the CTXT entry of descriptor argument `desc_pos` (the same code in ScaLAPACK's
/// and PBLAS's numbering), reported; returns true.
bool foreign_context(const Call& c, int desc_pos, int* info);

/// After the local checks `chk`: one agreement over the grid (`layouts`: cala has layouts for
/// the operands here; `same`: PCHKxMAT's arguments), then the first illegal argument reported
/// (info set), or `scalapack()` when an operand has no cala layout (`no_layout` says which), or
/// nothing to do. Returns the grid cala computes the call on, nullptr when the call is finished.
/// Collective over the grid.
const Grid2D* settle(const Call& c, const ArgCheck& chk, Route route, bool layouts, std::span<const SameArg> same,
                     const char* no_layout, int* info, const std::function<void()>& scalapack);

}  // namespace cala::scalapack

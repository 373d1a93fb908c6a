#pragma once
// cala::getrf's plan, shared by the entry point (getrf.cpp) and the cost model (model.cpp): the
// user's grid (TwoD), or for a p x 1 grid the 1 x p grid of the same ranks (OneRow: rank r, the
// user's process row r, is process column r there; the matrix is redistributed in and out), or
// h layers of p x q (Layered: A redistributed onto layer 0 and back).

#include <cstddef>

#include "cala/lu.hpp"
#include "matrix/redist_plan.hpp"

namespace cala::detail {

struct LuPlan {
    LuVariant variant = LuVariant::TwoD;
    /// The layout the engine factors: the user's (TwoD), 1 x p (OneRow), or each layer's p x q
    /// (Layered: layer 0's ranks are ranks 0 .. p·q - 1 of A's communicator, layer h's the next).
    BlockCyclic work;
    int h = 1;  ///< layers (Layered)
    bool convert() const noexcept { return variant != LuVariant::TwoD; }
};

/// Layered: the layer block row i starts on (its home), (i mod h·p) / p: on its own process row
/// (i mod p) there.
inline int lu_home(const LuPlan& plan, index_t i) {
    const int p = plan.work.p();
    return static_cast<int>(i % (static_cast<index_t>(plan.h) * p)) / p;
}

/// Layered: where A lives between the move in (and out) and each layer's share: block row i on
/// layer lu_home(i), as a virtual (h·p) x q grid over ranks (layer·p + row)·q + col.
Placement lu_compact_placement(const LuPlan& plan);

/// The plan for a layout and options that getrf accepts (lu_layout_error, lu_options_error);
/// the same on every rank given the same CALA_MAX_MEMORY_MB.
LuPlan lu_plan(const BlockCyclic& a, const LuOptions& o, std::size_t elem_size);

}  // namespace cala::detail

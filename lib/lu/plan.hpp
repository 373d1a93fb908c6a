#pragma once
// cala::getrf's plan, shared by the entry point (getrf.cpp) and the cost model (model.cpp): the
// user's grid (TwoD), or for a p x 1 grid the 1 x p grid of the same ranks (OneRow: rank r, the
// user's process row r, is process column r there; the matrix is redistributed in and out).

#include <cstddef>

#include "cala/lu.hpp"

namespace cala::detail {

struct LuPlan {
    LuVariant variant = LuVariant::TwoD;
    BlockCyclic work;  ///< the layout the engine factors: the user's (TwoD) or 1 x p (OneRow)
    bool convert() const noexcept { return variant == LuVariant::OneRow; }
};

/// The plan for a layout and options that getrf accepts (lu_layout_error, lu_options_error);
/// the same on every rank given the same CALA_MAX_MEMORY_MB.
LuPlan lu_plan(const BlockCyclic& a, const LuOptions& o, std::size_t elem_size);

}  // namespace cala::detail

#pragma once
// Internal: the plan of a resident gemm, shared by the driver (gemm.cpp) and its cost model
// (model.cpp): cala::gemm's 2D stationary-C plan (gemm/plan.hpp) on its panel path.

#include "cala/resident.hpp"
#include "gemm/plan.hpp"

namespace cala::detail {

/// The GemmOptions a resident gemm plans and checks with.
inline GemmOptions resident_gemm_options(const ResidentGemmOptions& o) {
    GemmOptions g;
    g.variant = Variant::StationaryC;
    g.lookahead = o.lookahead;
    g.panel_width = o.panel_width;
    return g;
}

/// Stationary C, which operands move and into which layouts as cala::gemm's plan says, panels
/// of GemmOptions::panel_width (0: 512; on a 1 x 1 grid all of k, one device gemm); on_devices set, so that the model counts
/// the panel path (one broadcast per k-block; no owner runs, whole rows or node-shared gather).
inline GemmPlan resident_plan(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
                              const ResidentGemmOptions& o) {
    GemmPlan plan = plan_gemm_2d(op_a, op_b, a, b, c, Variant::StationaryC, resident_gemm_options(o));
    const bool one_rank = c.p() == 1 && c.q() == 1;
    const index_t k = op_a == Op::N ? a.n() : a.m();
    plan.panel_width = o.panel_width > 0 ? o.panel_width : one_rank ? std::max<index_t>(k, 1) : 512;
    plan.lookahead = o.lookahead;
    plan.on_devices = true;
    plan.devices = {};
    return plan;
}

/// Device elements process (row, col) of a resident gemm holds beside its operands: the moved
/// operands' local arrays and the engine's slots.
index_t resident_workspace(const GemmPlan& plan, const BlockCyclic& c, int row, int col);

}  // namespace cala::detail

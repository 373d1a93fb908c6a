#pragma once
// Internal: the plan of a resident gemm, shared by the driver (gemm.cpp) and its cost model
// (model.cpp): cala::gemm's 2D plan (gemm/plan.hpp) of the chosen variant on its panel path.

#include <optional>

#include "cala/model.hpp"
#include "cala/resident.hpp"
#include "gemm/plan.hpp"
#include "gemm/plan3d.hpp"

namespace cala::detail {

/// The GemmOptions a resident gemm plans and checks with (the host gemm's, where all three live
/// in host memory).
inline GemmOptions resident_gemm_options(const ResidentGemmOptions& o) {
    GemmOptions g;
    g.variant = o.variant;
    g.lookahead = o.lookahead;
    g.panel_width = o.panel_width;
    g.grid3d = o.grid3d;
    g.block_size = o.block_size;
    g.memory_limit_bytes = o.memory_limit_bytes;
    return g;
}


/// The variant a resident gemm runs: ResidentGemmOptions::variant, or for Auto the one that
/// moves the fewest words in all (choose_gemm_variant, the host planner's 2D choice); stationary
/// C on one rank, where nothing travels.
inline Variant resident_variant(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
                                const ResidentGemmOptions& o) {
    if (o.variant != Variant::Auto) return o.variant;
    if (c.p() == 1 && c.q() == 1) return Variant::StationaryC;
    return choose_gemm_variant(op_a, op_b, a, b, c, resident_gemm_options(o));
}

/// Variant v (stationary C for herk and syrk, whose products keep to C's triangle), which operands
/// move and into which layouts as cala::gemm's plan says, panels of GemmOptions::panel_width
/// along the looped dimension (k for C, n for A, m for B; 0: 512, or all of it on a 1 x 1 grid,
/// one device gemm); on_devices set, so that the model counts the panel path (one broadcast or
/// reduction per block; no owner runs, whole rows or node-shared gather).
inline GemmPlan resident_plan(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
                              const ResidentGemmOptions& o, Variant v) {
    GemmPlan plan = plan_gemm_2d(op_a, op_b, a, b, c, v, resident_gemm_options(o));
    const bool one_rank = c.p() == 1 && c.q() == 1;
    const index_t looped = v == Variant::StationaryA ? c.n() : v == Variant::StationaryB ? c.m() : op_a == Op::N ? a.n() : a.m();
    plan.panel_width = o.panel_width > 0 ? o.panel_width : one_rank ? std::max<index_t>(looped, 1) : 512;
    plan.lookahead = o.lookahead;
    plan.on_devices = true;
    plan.devices = {};
    return plan;
}

inline GemmPlan resident_plan(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
                              const ResidentGemmOptions& o) {
    return resident_plan(op_a, op_b, a, b, c, o, resident_variant(op_a, op_b, a, b, c, o));
}

/// Device elements process (row, col) of a resident gemm holds beside its operands: the moved
/// operands' local arrays and the engine's slots.
index_t resident_workspace(const GemmPlan& plan, const BlockCyclic& c, int row, int col);

/// What a resident gemm runs: a 2.5D / 3D plan (ResidentGemmOptions::grid3d, or plan_grid and
/// the host planner choosing a p x q x c grid: the host's Plan3D from decide_gemm, so the same
/// variant, grid and block size as cala::gemm with those options, its layers on the resident
/// engines), else the 2D plan on C's grid (resident_plan; with plan_grid, the planner's variant).
/// Throws cala::Error (the same on every rank) where no plan fits memory_limit_bytes.
struct ResidentGemmPlan {
    std::optional<Plan3D> three;
    GemmPlan two;
};
ResidentGemmPlan plan_resident_gemm(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
                                    GridOrder order, const ResidentGemmOptions& o, std::size_t elem_size,
                                    bool is_complex);

}  // namespace cala::detail

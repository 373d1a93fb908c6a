#pragma once
// Internal: the decision cala::gemm and the cost model share.

#include <vector>

#include "cala/model.hpp"
#include "gemm/plan3d.hpp"

namespace cala::detail {

struct GemmDecision {
    bool three_d = false;  ///< false: 2D SUMMA on the user's grid
    Variant variant = Variant::StationaryC;
    Shape3 g;
    index_t nb = 0;
    GemmPlanInfo info;
};

/// Every candidate scored is appended to `scored` when given (in the order scored).
/// Throws cala::Error (identically on every rank) when no plan fits the memory limit.
/// `require_3d`: only 2.5D/3D plans (the Gemm3D entry point).
GemmDecision decide_gemm(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
                         GridOrder order, const GemmOptions& o, std::size_t elem_size, bool is_complex,
                         bool require_3d = false, const MachineModel& machine = MachineModel::from_env(),
                         std::vector<GemmCandidate>* scored = nullptr);

std::int64_t memory_limit(const GemmOptions& o);
index_t auto_block(index_t m, index_t n, index_t k, Shape3 g);

}  // namespace cala::detail

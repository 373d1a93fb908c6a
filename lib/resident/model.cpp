// Cost model of the resident gemm: the 2D stationary-C SUMMA model of cala::gemm
// (summa_loop_cost on the panel path: the plan has on_devices set) plus the operand moves
// (redist_summary), exactly as gemm_cost counts them. NCCL broadcasts count as MPI's.

#include "cala/resident.hpp"
#include "model/check.hpp"
#include "model/costs.hpp"
#include "resident/plan.hpp"
#include "model/planner.hpp"
#include "resident/summa3d.hpp"
#include "resident/summa_c.hpp"

namespace cala {

detail::ResidentGemmPlan detail::plan_resident_gemm(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b,
                                                    const BlockCyclic& c, GridOrder order, const ResidentGemmOptions& o,
                                                    std::size_t elem_size, bool is_complex) {
    const bool forced = o.grid3d.p != 0 || o.grid3d.q != 0 || o.grid3d.c != 0;
    if (!forced && !o.plan_grid) return {std::nullopt, resident_plan(op_a, op_b, a, b, c, o)};
    const GemmOptions go = resident_gemm_options(o);
    const GemmDecision d = decide_gemm(op_a, op_b, a, b, c, order, go, elem_size, is_complex);
    if (!d.three_d) return {std::nullopt, resident_plan(op_a, op_b, a, b, c, o, d.variant)};
    const index_t k = op_a == Op::N ? a.n() : a.m();
    Plan3D plan = plan_gemm_3d(op_a, op_b, c.m(), c.n(), k, d.variant, d.g, d.nb, go);
    plan.resident = true;
    return {plan, {}};
}

index_t detail::resident_workspace(const GemmPlan& plan, const BlockCyclic& c, int row, int col) {
    index_t n = resident_slots(plan, c, row, col);
    for (const Operand* x : {&plan.a, &plan.b})
        if (x->moves) n += local_elems(x->layout, row, col);
    return n;
}

Cost resident_gemm_cost(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
                        const ResidentGemmOptions& opts, int row, int col, std::size_t elem_size, bool is_complex,
                        GridOrder order) {
    detail::check_gemm_layouts("resident_gemm_cost", op_a, op_b, a, b, c, detail::resident_gemm_options(opts));
    detail::check_process("resident_gemm_cost", c, row, col);
    const index_t m = c.m(), n = c.n(), k = op_a == Op::N ? a.n() : a.m();
    Cost cost;
    if (m == 0 || n == 0 || k == 0) return cost;  // no communication: C := beta·C on the device
    const auto chosen = detail::plan_resident_gemm(op_a, op_b, a, b, c, order, opts, elem_size, is_complex);
    if (chosen.three) {  // the host's 2.5D model on the same plan (layer loops on the panel path)
        const int rank = order == GridOrder::RowMajor ? row * c.q() + col : col * c.p() + row;
        cost = detail::gemm3d_cost(*chosen.three, a, b, c, order, rank, elem_size, is_complex);
        cost.stream_words = 0;
        cost.extra_bytes = detail::resident_workspace_3d(*chosen.three, rank) * static_cast<std::int64_t>(elem_size);
        return cost;
    }
    const auto& plan = chosen.two;
    for (const auto& [x, user] : {std::pair{&plan.a, &a}, std::pair{&plan.b, &b}}) {
        if (!x->moves) continue;
        const auto s = detail::redist_summary(x->redist_op, *user, x->layout, row, col);
        cost.words += s.words;
        cost.words_recv += s.recv_others;
        cost.msgs += s.msgs;
    }
    const auto loop = detail::summa_loop_cost(plan, c, row, col);
    cost.words += loop.words;
    cost.words_recv += loop.words_recv;
    cost.msgs += loop.msgs;
    cost.flops = (is_complex ? 4.0 : 1.0) * loop.local_flops;
    cost.extra_bytes = detail::resident_workspace(plan, c, row, col) * static_cast<std::int64_t>(elem_size);
    return cost;
}

}  // namespace cala

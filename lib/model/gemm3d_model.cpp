// Exact per-rank cost of summa_3d (lib/gemm/summa3d.cpp), step by step in the same order:
// bring A, bring B (replicated ones: to layer 0, then a fiber broadcast), the layer's SUMMA loop,
// the fiber reduce-scatter (stationary C), and the return to the user's layout.

#include <algorithm>

#include "model/costs.hpp"

namespace cala::detail {

Placement user_placement(const BlockCyclic& l, GridOrder order) {
    Placement pl{l, std::vector<int>(static_cast<std::size_t>(l.p()) * l.q())};
    for (int r = 0; r < l.p(); ++r)
        for (int c = 0; c < l.q(); ++c)
            pl.ranks[static_cast<std::size_t>(r) * l.q() + c] = order == GridOrder::RowMajor ? r * l.q() + c : c * l.p() + r;
    return pl;
}

namespace {
}  // namespace

Cost gemm3d_cost(const Plan3D& plan, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
                 GridOrder order, int rank, std::size_t elem_size, bool is_complex, bool multiply_only) {
    const Shape3 g = plan.g;
    const bool active = rank < g.p * g.q * g.c;
    const int h = active ? rank / (g.p * g.q) : 0, r = active ? rank % (g.p * g.q) / g.q : 0,
              col = active ? rank % g.q : 0;
    Cost cost;
    std::int64_t live = 0, peak = 0;
    auto add = [&](const RedistTraffic& t, std::int64_t store) {
        cost.words += t.words;
        cost.words_recv += t.recv_others;
        cost.msgs += t.msgs;
        cost.stream_words += redist_passes(t);
        peak = std::max(peak, live + store + t.send_total + t.recv_others);
        live += store;
    };
    // Bring A and B.
    std::int64_t brought = 0;
    for (const auto& [x, user, layer] :
         {std::tuple{&plan.a, &a, plan.a_layer(h)}, std::tuple{&plan.b, &b, plan.b_layer(h)}}) {
        const RedistGeometry geo(x->redist_op, *user, x->virt);
        const std::int64_t store = active ? local_elems(layer, r, col) : 0;
        if (multiply_only) {  // already in place
            live += store;
            brought += store;
            continue;
        }
        add(redist_traffic(geo, user_placement(*user, order), spread_placement(x->virt, x->spread, g), rank), store);
        if (x->replicated && g.c > 1 && store > 0) {  // fiber broadcast from layer 0
            cost.words += store, cost.msgs += 1;
            if (h != 0) cost.words_recv += store;
        }
        brought += store;
    }
    // The layer's SUMMA loop into its partial (or final) C.
    if (active) {
        const BlockCyclic cl = plan.c_layer(h);
        const std::int64_t cs = local_elems(cl, r, col);
        const LoopCost loop = summa_loop_cost(plan.layer_plan(h), cl, r, col);
        cost.words += loop.words;
        cost.words_recv += loop.words_recv;
        cost.msgs += loop.msgs;
        cost.flops = (is_complex ? 4.0 : 1.0) * loop.local_flops;
        cost.stream_words += loop.stream;
        peak = std::max(peak, live + cs + loop.slots);
        live += cs - (multiply_only ? 0 : brought);  // one-shot use frees the operands after the loop
        if (plan.c_spread == Spread::ColsReduced) {
            const std::int64_t rs = local_elems(plan.c_virt, r, h * g.q + col);
            peak = std::max(peak, live + rs);
            const index_t m_loc = cl.rows.local_size(r);
            for (index_t bk = col, t = 0; bk < cl.cols.num_blocks(); bk += g.q, ++t)
                if (g.c > 1 && m_loc > 0) {
                    cost.words += m_loc * cl.cols.block_size(bk), cost.msgs += 1;
                    if (t % g.c == h) {  // reduced here: MPI's sum and the add, two passes
                        cost.words_recv += m_loc * cl.cols.block_size(bk);
                        cost.stream_words += 2.0 * m_loc * cl.cols.block_size(bk);
                    }
                }
            live += rs - cs;
        }
    } else if (!multiply_only) {
        live -= brought;
    }
    // Return to the user's layout (the result's buffer is live throughout).
    const RedistGeometry geo(Op::N, plan.c_virt, c);
    const RedistTraffic t =
        redist_traffic(geo, spread_placement(plan.c_virt, plan.c_spread, g), user_placement(c, order), rank);
    cost.words += t.words;
    cost.words_recv += t.recv_others;
    cost.msgs += t.msgs;
    cost.stream_words += redist_passes(t);
    peak = std::max(peak, live + t.send_total + t.recv_others);
    cost.extra_bytes = (peak - (multiply_only ? brought : 0)) * static_cast<std::int64_t>(elem_size);
    return cost;
}

}  // namespace cala::detail

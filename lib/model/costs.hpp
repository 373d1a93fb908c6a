#pragma once
// Internal pieces of the cost model shared by the 2D and 3D gemm models.

#include "cala/model.hpp"
#include "gemm/plan.hpp"
#include "gemm/plan3d.hpp"

namespace cala::detail {

/// The SUMMA loop on one p x q grid for process (row, col): words and messages of its
/// broadcasts and reductions, the elements of its panel slots, its local flops (real count) and
/// the elements its local GEMMs pack from memory.
struct LoopCost {
    std::int64_t words = 0, words_recv = 0, msgs = 0, slots = 0;
    double local_flops = 0;
    double stream = 0;  ///< elements of op(A) its local GEMMs pack (packed_a_elements)
};
LoopCost summa_loop_cost(const GemmPlan& plan, const BlockCyclic& c, int row, int col);

/// Exact cost on communicator rank `rank` of summa_3d for user layouts a, b, c on a user grid
/// of the given order (ranks of the user's grid and of the 3D grid number the same processes).
/// `multiply_only`: the cost of Gemm3D::multiply with A and B already in place (no conversion;
/// workspace counted above what the stored operands already take).
Cost gemm3d_cost(const Plan3D& plan, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
                 GridOrder order, int rank, std::size_t elem_size, bool is_complex, bool multiply_only = false);

/// Traffic of a same-grid redistribution for process (row, col); ranks in row-major order.
RedistTraffic redist_summary(Op op, const BlockCyclic& src, const BlockCyclic& dst, int row, int col);

/// Elements a rank's side of a redistribution passes through memory: every element it sends
/// packed once, every element it receives (its own share included) unpacked once.
inline double redist_passes(const RedistTraffic& t) {
    const std::int64_t own = t.send_total - (t.words - t.recv_others);  // packed, not sent to others
    return double(t.send_total + t.recv_others + own);
}

/// Elements process (row, col) holds of a matrix with layout l.
inline std::int64_t local_elems(const BlockCyclic& l, int row, int col) {
    return l.rows.local_size(row) * l.cols.local_size(col);
}

/// Placement of a user layout on a grid of the given order (rank = r·q + c or c·p + r).
Placement user_placement(const BlockCyclic& l, GridOrder order);

}  // namespace cala::detail

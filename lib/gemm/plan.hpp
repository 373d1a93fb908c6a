#pragma once
// Which operands a SUMMA variant moves, and into which layouts. Pure arithmetic, shared by the
// driver (lib/gemm/gemm.cpp) and the cost model (lib/model/gemm_model.cpp).
//
//   variant  stays  needs
//   C        C      A' = op(A) with C's rows;  B' = op(B) with C's columns; k blocked alike
//   A        A'     A' = op(A) with C's rows;  Bt (n x k), op(B) = kop(Bt), Bt's columns = A''s
//                   columns, Bt's rows blocked like C's columns
//   B        B'     B' = op(B) with C's cols;  At (k x m), op(A) = kop(At), At's rows = B''s
//                   rows, At's columns blocked like C's rows
// An operand "moves" (is redistributed, counted in traffic) only when the user's layout and op
// do not already give what the variant needs; otherwise the kernel reads the user's memory.

#include <algorithm>
#include <utility>
#include <vector>

#include "cala/device.hpp"
#include "cala/gemm.hpp"
#include "cala/layout.hpp"

namespace cala::detail {

struct Operand {
    bool moves = false;    ///< redistributed with redist_op into `layout`
    Op redist_op = Op::N;  ///< op applied by the redistribution
    Op kernel_op = Op::N;  ///< op the kernel applies to the stored operand (A/B-stationary only)
    BlockCyclic layout;    ///< layout the kernel reads
};

struct GemmPlan {
    Variant variant = Variant::StationaryC;
    Operand a, b;         ///< C: A', B'.  A: A', Bt.  B: At, B'.
    index_t panel_width;  ///< target width of one step along the looped dimension
    int lookahead;
    std::int64_t whole_rows_max = 0;  ///< GemmOptions::whole_rows_max_elements
    bool node_shared = false;         ///< GemmOptions::node_shared_memory
    index_t node_shared_min_reuse = 0;  ///< GemmOptions::node_shared_min_reuse
    bool on_devices = false;   ///< local updates through the chunked engine on `devices`
    DeviceGemmOptions devices;
};

/// Device options of a gemm: GemmOptions::devices, else CALA_DEVICES; none when both are empty.
bool gemm_devices(const GemmOptions& opts, DeviceGemmOptions& out);

GemmPlan plan_gemm_2d(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
                      Variant v, const GemmOptions& opts);

/// Consecutive block ranges [b0, b1) of d, each at least `width` wide (except the last).
std::vector<std::pair<index_t, index_t>> panel_groups(const Dist1D& d, index_t width);
/// Widest group, in indices.
index_t max_group_width(const Dist1D& d, const std::vector<std::pair<index_t, index_t>>& groups);

/// Column range [g0, g1) of a group of blocks [b0, b1) of d.
inline std::pair<index_t, index_t> group_span(const Dist1D& d, std::pair<index_t, index_t> grp) {
    return {d.block_start(grp.first), d.block_start(grp.second - 1) + d.block_size(grp.second - 1)};
}

/// Stationary C broadcasts A' by owner runs (summa_c.cpp): on a grid with q > 1, not on devices,
/// when op(B)'s rows travel anyway (p > 1) or packing them costs less than copying the own
/// blocks of A' (p == 1 and C has fewer columns than rows). The same on every rank.
inline bool owner_runs(const GemmPlan& plan, const BlockCyclic& c) {
    return plan.variant == Variant::StationaryC && c.q() > 1 && !plan.on_devices && (c.p() > 1 || c.n() < c.m());
}

/// Stationary C on a p x 1 grid (p > 1, not on devices) broadcasts every process row's whole
/// local op(B) at once and multiplies A''s columns in owner order (summa_c.cpp): A' is wholly
/// local there, so nothing else travels. Its workspace is a copy of the rank's A' and all of
/// op(B): used only while that stays within GemmOptions::whole_rows_max_elements; larger
/// products keep the panel path, whose workspace is a few panels. The same on every rank.
inline bool whole_rows(const GemmPlan& plan, const BlockCyclic& c) {
    if (plan.variant != Variant::StationaryC || c.q() != 1 || c.p() < 2 || plan.on_devices) return false;
    index_t m_max = 0;
    for (int r = 0; r < c.p(); ++r) m_max = std::max(m_max, c.rows.local_size(r));
    const index_t k = plan.b.layout.rows.n;
    return plan.whole_rows_max > 0 && m_max + c.n() <= plan.whole_rows_max / std::max<index_t>(k, 1);
}

/// Elements of the operand a node-shared gather holds (node_shared below): all of op(B) on a
/// p x 1 grid, all of A' on a 1 x q grid; 0 on other grids.
inline index_t node_shared_elements(const GemmPlan& plan, const BlockCyclic& c) {
    const index_t k = plan.b.layout.rows.n;
    if (c.q() == 1 && c.p() > 1) return k * c.n();
    if (c.p() == 1 && c.q() > 1) return c.m() * k;
    return 0;
}

/// Each rank's share of it (SharedRegion::share): ceil(elements / ranks).
inline index_t node_shared_share(const GemmPlan& plan, const BlockCyclic& c) {
    const index_t ranks = index_t(c.p()) * c.q();
    return (node_shared_elements(plan, c) + ranks - 1) / ranks;
}

/// Stationary C on a p x 1 or 1 x q grid gathers the operand split along k into memory all ranks
/// map, when they share a node (summa_c.cpp; the driver asks the communicator, the model assumes
/// it): while each rank's share of it stays within GemmOptions::whole_rows_max_elements and
/// every rank has GemmOptions::node_shared_min_reuse rows (p x 1) or columns (1 x q) of C. Else
/// whole rows (p x 1) or owner runs (1 x q). The same on every rank.
inline bool node_shared(const GemmPlan& plan, const BlockCyclic& c) {
    if (!plan.node_shared || plan.variant != Variant::StationaryC || plan.on_devices) return false;
    if (node_shared_elements(plan, c) == 0 || plan.whole_rows_max <= 0 || node_shared_share(plan, c) > plan.whole_rows_max)
        return false;
    const Dist1D& reuse = c.q() == 1 ? c.rows : c.cols;  // C's dimension split over the ranks
    for (int r = 0; r < reuse.nprocs; ++r)
        if (reuse.local_size(r) < plan.node_shared_min_reuse) return false;
    return true;
}

/// How many pieces a local GEMM k deep is cut into along k so that MPI progresses between them
/// (gemm_with_progress): pieces of at least 256, at most 4; one piece when nothing is in flight.
index_t progress_chunks(index_t k, bool pending);

/// Elements of op(A) the BLAS kernel packs from memory for the local GEMM C(m x n) += op(A)(m x k)
/// op(B): once per 4096 columns of C (BLIS's n_c panel; pieces along k do not add to it). With
/// few columns of C, as in a tall-skinny product, that packing is not hidden behind the flops;
/// the cost model charges it (MachineModel::seconds_per_stream_byte).
double packed_a_elements(index_t m, index_t n, index_t k);

}  // namespace cala::detail

// Cost model of cala::gemm on a 2D grid: the plan's redistributions (exact counts from the
// redistribution geometry) plus the SUMMA loop, per rank and summed over ranks.

#include <algorithm>

#include "cala/model.hpp"
#include "core/check.hpp"
#include "gemm/plan.hpp"
#include "matrix/redist_plan.hpp"
#include "model/check.hpp"
#include "model/costs.hpp"
#include "model/planner.hpp"

namespace cala {

detail::RedistTraffic detail::redist_summary(Op op, const BlockCyclic& src, const BlockCyclic& dst, int row, int col) {
    const RedistGeometry geo(op, src, dst);
    Placement ps{src, {}}, pd{dst, {}};
    for (int i = 0; i < src.p() * src.q(); ++i) ps.ranks.push_back(i), pd.ranks.push_back(i);
    return redist_traffic(geo, ps, pd, row * src.q() + col);
}

namespace {

using detail::local_elems;
using detail::redist_summary;

// Processes of d holding at least one index: one message each where a whole local part travels.
index_t holders(const Dist1D& d) {
    index_t n = 0;
    for (int o = 0; o < d.nprocs; ++o) n += d.local_size(o) > 0 ? 1 : 0;
    return n;
}

}  // namespace

namespace detail {

LoopCost summa_loop_cost(const GemmPlan& plan, const BlockCyclic& c, int row, int col) {
    // One broadcast piece and/or one reduction piece per block of the looped dimension; each
    // counts as one message of its size on every rank of the communicator.
    const Variant v = plan.variant;
    const int p = c.p(), q = c.q();
    const Dist1D& looped = v == Variant::StationaryC ? plan.a.layout.cols : v == Variant::StationaryA ? c.cols : c.rows;
    const auto groups = panel_groups(looped, plan.panel_width);
    const index_t ng = static_cast<index_t>(groups.size());
    const index_t wmax = max_group_width(looped, groups);
    const index_t slots = std::min<index_t>(plan.lookahead + 1, ng);
    const index_t m_loc = c.rows.local_size(row), n_loc = c.cols.local_size(col);
    index_t x_loc = 0, y_loc = 0;  // per-index piece sizes along the two communicators
    bool x_on = false, y_on = false;
    LoopCost out;
    switch (v) {
        case Variant::StationaryC: {  // A' pieces along rows (m_loc x w), B' pieces along columns (w x n_loc)
            x_loc = m_loc, x_on = q > 1 && m_loc > 0;
            y_loc = n_loc, y_on = p > 1 && n_loc > 0;
            out.local_flops = 2.0 * m_loc * n_loc * looped.n;
            break;
        }
        case Variant::StationaryA: {  // Bt pieces along columns (k_loc x w), partial C along rows (m_loc x w)
            const index_t k_loc = plan.a.layout.cols.local_size(col);
            x_loc = k_loc, x_on = p > 1 && k_loc > 0;
            y_loc = m_loc, y_on = q > 1 && m_loc > 0;
            out.local_flops = 2.0 * m_loc * c.n() * k_loc;
            break;
        }
        default: {  // StationaryB: At pieces along rows (k_loc x w), partial C along columns (w x n_loc)
            const index_t k_loc = plan.b.layout.rows.local_size(row);
            x_loc = k_loc, x_on = q > 1 && k_loc > 0;
            y_loc = n_loc, y_on = p > 1 && n_loc > 0;
            out.local_flops = 2.0 * c.m() * n_loc * k_loc;
            break;
        }
    }
    const index_t nblocks = looped.num_blocks();
    out.words = (x_on ? x_loc * looped.n : 0) + (y_on ? y_loc * looped.n : 0);
    // Received: a broadcast piece unless this rank is its root; a reduced piece when it is (its
    // elements then pass through memory twice more: MPI's sum, then the add into C).
    for (index_t l = 0; l < nblocks; ++l) {
        const index_t w = looped.block_size(l);
        switch (v) {
            case Variant::StationaryC:
                if (x_on && plan.a.layout.cols.block_owner(l) != col) out.words_recv += x_loc * w;
                if (y_on && plan.b.layout.rows.block_owner(l) != row) out.words_recv += y_loc * w;
                break;
            case Variant::StationaryA:
                if (x_on && plan.b.layout.rows.block_owner(l) != row) out.words_recv += x_loc * w;
                if (y_on && c.cols.block_owner(l) == col) out.words_recv += y_loc * w, out.stream += 2.0 * y_loc * w;
                break;
            default:
                if (x_on && plan.a.layout.cols.block_owner(l) != col) out.words_recv += x_loc * w;
                if (y_on && c.rows.block_owner(l) == row) out.words_recv += y_loc * w, out.stream += 2.0 * y_loc * w;
                break;
        }
    }
    // Node-shared gather (stationary C on p x 1 or 1 x q, plan.hpp): counted as one broadcast of
    // each owner's whole part; the workspace is this rank's share of the gathered operand, the
    // copies its own part put in place and the local GEMM's packing.
    if (node_shared(plan, c)) {
        const bool rows = q == 1;
        const Dist1D& kd = rows ? plan.b.layout.rows : plan.a.layout.cols;
        out.msgs = (rows ? y_on : x_on) ? holders(kd) : 0;
        out.stream += packed_a_elements(m_loc, n_loc, looped.n) +
                      2.0 * static_cast<double>(rows ? n_loc : m_loc) * static_cast<double>(kd.local_size(rows ? row : col));
        out.slots = node_shared_share(plan, c);
        return out;
    }
    // By owner runs (stationary C, plan.hpp): one piece of A' per process column holding blocks
    // of a group; op(B)'s rows, on one process row, packed into a slot of their own.
    const bool runs = owner_runs(plan, c);
    index_t x_msgs = nblocks;
    if (runs) {
        x_msgs = 0;
        for (const auto& grp : groups) {
            std::vector<bool> holds(static_cast<std::size_t>(q), false);
            for (index_t l = grp.first; l < grp.second; ++l) holds[static_cast<std::size_t>(looped.block_owner(l))] = true;
            x_msgs += std::count(holds.begin(), holds.end(), true);
        }
    }
    index_t y_msgs = nblocks;
    // Whole rows (stationary C on p x 1, plan.hpp): one broadcast per process row holding op(B)
    // rows, all of op(B) in the slots, and A''s columns copied once into owner order.
    const bool rows_at_once = whole_rows(plan, c);
    if (rows_at_once) y_msgs = holders(plan.b.layout.rows);
    out.msgs = (x_on ? x_msgs : 0) + (y_on ? y_msgs : 0);
    if (rows_at_once) {
        for (int o = 0; o < p; ++o) out.stream += packed_a_elements(m_loc, n_loc, plan.b.layout.rows.local_size(o));
        // A' into owner order, the own op(B) rows packed.
        out.stream += 2.0 * static_cast<double>(m_loc) * static_cast<double>(looped.n) +
                      2.0 * static_cast<double>(n_loc) * static_cast<double>(plan.b.layout.rows.local_size(row));
        // A' in owner order, and every row's op(B), this rank's own included.
        out.slots = (m_loc > 0 ? m_loc * looped.n : 0) + (n_loc > 0 ? n_loc * looped.n : 0);
        return out;
    }
    // The local GEMM of each group.
    for (index_t g = 0; g < ng; ++g) {
        const auto [g0, g1] = group_span(looped, groups[g]);
        const index_t w = g1 - g0;
        switch (v) {
            case Variant::StationaryC: out.stream += packed_a_elements(m_loc, n_loc, w); break;
            case Variant::StationaryA: out.stream += packed_a_elements(m_loc, w, x_loc); break;
            default:
                out.stream += p > 1 ? packed_a_elements(n_loc, w, x_loc) : packed_a_elements(w, n_loc, x_loc);
                break;
        }
    }
    out.slots = (x_on ? slots * x_loc * wmax : 0) + (y_on || (runs && n_loc > 0) ? slots * y_loc * wmax : 0);
    return out;
}

}  // namespace detail

Cost redistribute_cost(Op op, const BlockCyclic& src, const BlockCyclic& dst, int row, int col) {
    detail::check_redistribute_layouts("redistribute_cost", op, src, dst);
    detail::check_process("redistribute_cost", src, row, col);
    const auto s = redist_summary(op, src, dst, row, col);
    return {s.words, s.recv_others, s.msgs, 0.0, 0};
}

std::int64_t redistribute_total_words(Op op, const BlockCyclic& src, const BlockCyclic& dst) {
    detail::check_redistribute_layouts("redistribute_total_words", op, src, dst);
    // Elements that stay on their rank, from per-dimension histograms (no loop over ranks).
    const detail::RedistGeometry geo(op, src, dst);
    const int p = src.p(), q = src.q();
    std::int64_t staying = 0;
    if (!geo.transposed) {
        std::int64_t sr = 0, sc = 0;
        for (const auto& s : geo.rows) sr += s.sproc == s.dproc ? s.g1 - s.g0 : 0;
        for (const auto& s : geo.cols) sc += s.sproc == s.dproc ? s.g1 - s.g0 : 0;
        staying = sr * sc;
    } else {
        // (i, j) stays iff src row owner of i == dst row owner of j and src col owner of j ==
        // dst col owner of i: count pairs through [p][q] tables.
        std::vector<std::int64_t> hi(static_cast<std::size_t>(p) * q, 0), hj(hi.size(), 0);
        for (const auto& s : geo.rows) hi[static_cast<std::size_t>(s.sproc) * q + s.dproc] += s.g1 - s.g0;
        for (const auto& s : geo.cols) hj[static_cast<std::size_t>(s.dproc) * q + s.sproc] += s.g1 - s.g0;
        for (std::size_t i = 0; i < hi.size(); ++i) staying += hi[i] * hj[i];
    }
    return 2 * (src.m() * src.n() - staying);
}

Cost gemm_cost(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c, Variant v,
               const GemmOptions& opts, int row, int col, std::size_t elem_size, bool is_complex) {
    detail::check_gemm_layouts("gemm_cost", op_a, op_b, a, b, c, opts);
    detail::check_process("gemm_cost", c, row, col);
    if (v < Variant::Auto || v > Variant::StationaryB)
        throw Error(detail::cat("gemm_cost: variant is ", static_cast<int>(v), ", not a Variant"));
    const index_t m = c.m(), n = c.n(), k = op_a == Op::N ? a.n() : a.m();
    Cost cost;
    if (m == 0 || n == 0 || k == 0) return cost;  // no communication: C := beta·C locally
    if (v == Variant::Auto) v = choose_gemm_variant(op_a, op_b, a, b, c, opts);
    const auto plan = detail::plan_gemm_2d(op_a, op_b, a, b, c, v, opts);

    // Redistributions, A's operand first (as the driver does), tracking workspace.
    std::int64_t live = 0, peak = 0;
    auto move = [&](const detail::Operand& x, const BlockCyclic& user) {
        if (!x.moves) return;
        const auto s = redist_summary(x.redist_op, user, x.layout, row, col);
        cost.words += s.words;
        cost.words_recv += s.recv_others;
        cost.msgs += s.msgs;
        cost.stream_words += detail::redist_passes(s);
        const std::int64_t store = local_elems(x.layout, row, col);
        peak = std::max(peak, live + store + s.send_total + s.recv_others);
        live += store;
    };
    move(plan.a, a);
    move(plan.b, b);

    const auto loop = detail::summa_loop_cost(plan, c, row, col);
    cost.words += loop.words;
    cost.words_recv += loop.words_recv;
    cost.msgs += loop.msgs;
    peak = std::max(peak, live + loop.slots);
    const double local_flops = loop.local_flops;
    cost.stream_words += loop.stream;
    cost.extra_bytes = peak * static_cast<std::int64_t>(elem_size);
    cost.flops = (is_complex ? 4.0 : 1.0) * local_flops;
    return cost;
}

Cost gemm_cost(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
               const GemmOptions& opts, GridOrder order, int rank, std::size_t elem_size, bool is_complex) {
    detail::check_gemm_layouts("gemm_cost", op_a, op_b, a, b, c, opts);
    detail::check_rank("gemm_cost", c, rank);
    const index_t m = c.m(), n = c.n(), k = op_a == Op::N ? a.n() : a.m();
    if (m == 0 || n == 0 || k == 0) return {};
    const bool plain_2d = opts.variant != Variant::Auto && opts.grid3d.c == 0 && detail::memory_limit(opts) == 0;
    const auto d = plain_2d ? detail::GemmDecision{false, opts.variant, {}, 0, {}}
                            : detail::decide_gemm(op_a, op_b, a, b, c, order, opts, elem_size, is_complex);
    if (d.three_d)
        return detail::gemm3d_cost(detail::plan_gemm_3d(op_a, op_b, m, n, k, d.variant, d.g, d.nb, opts), a, b, c,
                                   order, rank, elem_size, is_complex);
    const int row = order == GridOrder::RowMajor ? rank / c.q() : rank % c.p();
    const int col = order == GridOrder::RowMajor ? rank % c.q() : rank / c.p();
    return gemm_cost(op_a, op_b, a, b, c, d.variant, opts, row, col, elem_size, is_complex);
}

std::int64_t gemm_total_words(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
                              Variant v, const GemmOptions& opts) {
    detail::check_gemm_layouts("gemm_total_words", op_a, op_b, a, b, c, opts);
    const index_t m = c.m(), n = c.n(), k = op_a == Op::N ? a.n() : a.m();
    if (m == 0 || n == 0 || k == 0) return 0;
    const auto plan = detail::plan_gemm_2d(op_a, op_b, a, b, c, v, opts);
    const std::int64_t p = c.p(), q = c.q();
    std::int64_t words = 0;
    if (plan.a.moves) words += redistribute_total_words(plan.a.redist_op, a, plan.a.layout);
    if (plan.b.moves) words += redistribute_total_words(plan.b.redist_op, b, plan.b.layout);
    switch (plan.variant) {
        case Variant::StationaryA: return words + (p > 1 ? p * n * k : 0) + (q > 1 ? q * m * n : 0);
        case Variant::StationaryB: return words + (q > 1 ? q * k * m : 0) + (p > 1 ? p * m * n : 0);
        default: return words + (q > 1 ? q * m * k : 0) + (p > 1 ? p * k * n : 0);
    }
}

Variant choose_gemm_variant(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
                            const GemmOptions& opts) {
    detail::check_gemm_layouts("choose_gemm_variant", op_a, op_b, a, b, c, opts);
    Variant best = Variant::StationaryC;
    std::int64_t best_words = gemm_total_words(op_a, op_b, a, b, c, best, opts);
    for (Variant v : {Variant::StationaryA, Variant::StationaryB}) {
        const std::int64_t w = gemm_total_words(op_a, op_b, a, b, c, v, opts);
        if (w < best_words) best = v, best_words = w;
    }
    return best;
}

}  // namespace cala

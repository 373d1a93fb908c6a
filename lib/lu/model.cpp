// getrf_cost and getrs_cost: the schedule of geometry.hpp walked for one process, counted with
// comm.hpp's convention (a broadcast: 1 message each side; a reduce: 1 each side; a point-to-point
// message: 1 each side; nothing over one rank or of zero words). The interchanges move only the
// rows that change place, so their traffic follows the pivots (exchange_counts); without the
// pivots every step is counted at its most: kb rows each way between D's owner and every other
// process row.

#include <algorithm>
#include <cstdlib>
#include <span>
#include <string>

#include "cala/cholesky.hpp"
#include "cala/lu.hpp"
#include "comm/node_slots.hpp"
#include "core/check.hpp"
#include "lu/engine.hpp"
#include "lu/geometry.hpp"
#include "lu/plan.hpp"
#include "model/one_row.hpp"
#include "model/check.hpp"
#include "model/costs.hpp"

namespace cala {

namespace detail {
std::string lu_options_error(const char* fn, const LuOptions& o);
std::string lu_layout_error(const char* fn, const BlockCyclic& l);
std::string lu_grid_error(const char* fn, const BlockCyclic& a, const LuOptions& o);
}  // namespace detail

namespace {

// Pivots given to a cost function: none, or k interchanges of rows of an m-row matrix.
std::string ipiv_error(const char* fn, std::span<const index_t> ipiv, index_t m, index_t k) {
    using detail::cat;
    if (ipiv.empty()) return {};
    if (static_cast<index_t>(ipiv.size()) != k) return cat(fn, ": ipiv has ", ipiv.size(), " entries, not ", k);
    for (index_t i = 0; i < k; ++i) {
        const index_t v = ipiv[static_cast<std::size_t>(i)];
        if (v < i || v >= m) return cat(fn, ": ipiv[", i, "] = ", v, " is not in [", i, ", ", m, ")");
    }
    return {};
}

struct Tally {
    Cost c;
    // One collective or message of w words on a communicator of s ranks; root: this rank sends.
    void bcast(std::int64_t w, int s, bool root) {
        if (s <= 1 || w == 0) return;
        c.msgs += 1;
        c.words += w;
        if (!root) c.words_recv += w;
    }
    void reduce(std::int64_t w, int s, bool root) {
        if (s <= 1 || w == 0) return;
        c.msgs += 1;
        c.words += w;
        if (root) c.words_recv += w;
    }
    void send(std::int64_t w) {
        if (w == 0) return;
        c.msgs += 1;
        c.words += w;
    }
    void recv(std::int64_t w) {
        if (w == 0) return;
        c.msgs += 1;
        c.words += w;
        c.words_recv += w;
    }
    void allreduce(std::int64_t w, int s) {
        if (s <= 1 || w == 0) return;
        c.msgs += 2;
        c.words += 2 * w;
        c.words_recv += w;
    }
};

// The interchanges of step [k0, k0 + kb) on w local columns of process row `row` (exchange_rows):
// the rows that move, given the pivots; without them (ipiv empty), an upper bound: kb rows each
// way between D's owner and every other process row.
void exchange(Tally& t, const Dist1D& rows, std::span<const index_t> ipiv, index_t k0, index_t kb, index_t w,
              int row) {
    const int p = rows.nprocs, pr = rows.owner(k0);
    if (p <= 1 || w == 0 || kb == 0) return;
    detail::ExchangeCounts x;
    if (ipiv.empty()) {
        x.to_d.assign(static_cast<std::size_t>(p), kb);
        x.from_d.assign(static_cast<std::size_t>(p), kb);
    } else {
        x = detail::exchange_counts(rows, k0, kb, detail::step_moves(ipiv, k0, kb));
    }
    for (int r = 0; r < p; ++r) {
        if (r == pr || (row != pr && r != row)) continue;
        const index_t to_d = x.to_d[static_cast<std::size_t>(r)], from_d = x.from_d[static_cast<std::size_t>(r)];
        if (row == pr) {
            t.send(from_d * w);
            t.recv(to_d * w);
        } else {
            t.send(to_d * w);
            t.recv(from_d * w);
        }
    }
}

}  // namespace

namespace {

// The engine on layout a (the plan's work layout), process (row, col) of its grid, layer `layer` of
// `layers` (Layered: the fiber sums and the slices of L21 and U12).
Cost engine_cost(const BlockCyclic& a, const LuOptions& opts, int row, int col, std::size_t elem_size, bool is_complex,
                 std::span<const index_t> ipiv, int layer = 0, int layers = 1) {
    const detail::LuGeom g{a.rows, a.cols};
    const int p = g.p(), q = g.q();
    const index_t m_loc = g.rows.local_size(row), n_loc = g.cols.local_size(col);
    const double fm = is_complex ? 8.0 : 2.0;  // flops per multiply-add
    const auto es = static_cast<std::int64_t>(elem_size);
    Tally t;
    std::int64_t peak = 0, fsum = 0;  // fsum: the layered fiber sums' buffer, kept through the run
    for (index_t l = 0; l < g.steps(); ++l) {
        const index_t k0 = g.start(l), kb = g.width(l);
        const int pr = g.ro(l), pc = g.co(l);
        const std::int64_t words = kb * (kb + 2);
        const index_t mr = m_loc - g.row_from(k0, row);
        const index_t mrest = m_loc - g.row_from(k0 + kb, row), nrest = n_loc - g.col_from(k0 + kb, col);
        const index_t sw = detail::lu_slice(kb, layer, layers).second;
        std::int64_t live = words;
        if (col == pc) t.allreduce(mr * kb, layers);  // layered: the panel summed over the layers
        if (row == pr) t.allreduce(kb * nrest, layers);  // and the U block row
        if (col == pc && row == pr) t.bcast(words, layers, layer == 0);  // layer 0's pivots and L11\U11
        if (layers > 1) fsum = std::max<std::int64_t>(fsum, std::max(col == pc ? mr * kb : 0, row == pr ? kb * nrest : 0));
        if (col == pc) {
            // T: the tree (each message kb x (kb+2)), local getrf and one getrf per merge.
            const auto role = g.tree_role(l, row);
            for (int i = 0; i < role.receives; ++i) t.bcast(words, p, false);
            if (role.send_to >= 0) t.bcast(words, p, true);
            const double kk = double(kb);
            t.c.flops += fm / 2 * (double(mr) * kk * kk - kk * kk * kk / 3);
            t.c.flops += role.receives * fm / 2 * (2 * kk * kk * kk - kk * kk * kk / 3);
            live += 4 * words + mr * kb + 2 * kb * kb;
            // I, first half: down column pc.
            t.bcast(words, p, row == pr);
            t.c.flops += fm / 2 * double(mrest) * kk * kk;
        }
        // I, second half: along every row, L11\U11 only to row pr (kb x (kb+2) + 1), the
        // interchanges and the zero pivot to the others (2·kb + 1).
        t.bcast(row == pr ? words + 1 : 2 * kb + 1, q, col == pc);
        // X: the panel's columns (in the panel step), then those right of the panel (L's wait for
        // the end).
        if (col == pc) exchange(t, g.rows, ipiv, k0, kb, kb, row);
        exchange(t, g.rows, ipiv, k0, kb, nrest, row);
        if (row == pr) t.c.flops += fm / 2 * double(kb) * double(kb) * double(nrest);
        t.bcast(mrest * sw, q, col == pc);
        t.bcast(sw * nrest, p, row == pr);
        t.c.flops += fm * double(mrest) * double(nrest) * double(sw);
        live = std::max<std::int64_t>(live, words + 2 * kb * n_loc);
        live = std::max<std::int64_t>(live, words + mrest * kb + kb * nrest);
        peak = std::max(peak, live);
    }
    // p > 1: L's columns take the later steps' interchanges at the end (the engine's permute_left):
    // given the pivots, the rows each group of blocks moves between process rows, one message per
    // peer and direction; without them, per block at most 2·(the later steps' widths) rows of
    // mine each way, to each of the p - 1 other rows.
    if (p > 1 && !ipiv.empty()) {
        detail::for_each_deferred_group(g, col, ipiv, [&](const std::vector<index_t>& blocks,
                                                          const std::vector<detail::Moves>& moves) {
            std::vector<index_t> out(static_cast<std::size_t>(p), 0), in(static_cast<std::size_t>(p), 0);
            for (std::size_t i = 0; i < blocks.size(); ++i) {
                const detail::PermuteCounts x = detail::permute_counts(g.rows, row, moves[i]);
                for (int r = 0; r < p; ++r) {
                    out[static_cast<std::size_t>(r)] += x.send[static_cast<std::size_t>(r)] * g.width(blocks[i]);
                    in[static_cast<std::size_t>(r)] += x.recv[static_cast<std::size_t>(r)] * g.width(blocks[i]);
                }
            }
            index_t tout = 0, tin = 0;
            for (int r = 0; r < p; ++r) {
                t.send(out[static_cast<std::size_t>(r)]);
                t.recv(in[static_cast<std::size_t>(r)]);
                tout += out[static_cast<std::size_t>(r)];
                tin += in[static_cast<std::size_t>(r)];
            }
            peak = std::max<std::int64_t>(peak, 2 * std::max(tout, tin));
        });
    } else if (p > 1) {
        for (index_t b = 0; b + 1 < g.steps(); ++b) {
            if (g.co(b) != col) continue;
            const index_t below = m_loc - g.row_from(g.start(b + 1), row);
            const index_t k = std::min(below, 2 * (g.kmax() - g.start(b + 1)));
            if (k == 0) continue;
            t.c.msgs += 2 * (p - 1);
            t.c.words += 2 * k * g.width(b);
            t.c.words_recv += k * g.width(b);
            peak = std::max<std::int64_t>(peak, 2 * k * g.width(b));
        }
    }
    // Node-shared slots (LuOptions::node_shared_memory, 1 x q on one node): this rank's share of
    // them on top, a bound of either path (the model does not know where the ranks run).
    if (opts.node_shared_memory && p == 1 && q > 1 && layers == 1) {
        index_t w = 0;
        for (index_t l = 0; l < g.steps(); ++l) w = std::max(w, g.width(l));
        const index_t line = std::max<std::int64_t>(1, 64 / es);
        const index_t top = (w * (w + 2) + 1 + line - 1) / line * line;
        peak += (detail::NodeSlots::share_bytes(top + m_loc * w, es, q) + es - 1) / es;
    }
    t.c.extra_bytes = (peak + fsum) * es;
    return t.c;
}

}  // namespace

namespace {

BlockCyclic layer_layout(const BlockCyclic& a, int p, int q) {
    return BlockCyclic(a.m(), a.n(), a.rows.nb, a.cols.nb, p, q);
}

std::int64_t memory_limit(const LuOptions& o) {
    if (o.memory_limit_bytes > 0) return o.memory_limit_bytes;
    const char* e = std::getenv("CALA_MAX_MEMORY_MB");
    return e ? static_cast<std::int64_t>(std::atof(e) * 1048576.0) : 0;
}

// A Layered plan on rank `rank` of A's ranks (its grid in `order`): A onto layer 0 and back, the
// engine on layer rank / (p·q); ranks beyond p·q·h only take part in the moves.
Cost layered_cost(const BlockCyclic& a, const detail::LuPlan& plan, const LuOptions& o, GridOrder order, int rank,
                  std::size_t elem_size, bool is_complex, std::span<const index_t> ipiv) {
    using namespace detail;
    const Placement user = user_placement(a, order), compact = lu_compact_placement(plan);
    const RedistTraffic in = redist_traffic(RedistGeometry(Op::N, a, compact.layout), user, compact, rank);
    const RedistTraffic out = redist_traffic(RedistGeometry(Op::N, compact.layout, a), compact, user, rank);
    const auto es = static_cast<std::int64_t>(elem_size);
    Cost c;
    const std::int64_t buffers = std::max(in.send_total + in.recv_others, out.send_total + out.recv_others) * es;
    const int p = plan.work.p(), q = plan.work.q();
    if (rank < p * q * plan.h) {
        const int r = (rank / q) % p, col = rank % q;
        const int layer = rank / (p * q);
        c = engine_cost(plan.work, o, r, col, elem_size, is_complex, ipiv, layer, plan.h);
        c.extra_bytes = (local_elems(compact.layout, layer * p + r, col) + local_elems(plan.work, r, col)) * es +
                        std::max(buffers, c.extra_bytes);
    } else {
        c.extra_bytes = buffers;
    }
    c.words += in.words + out.words;
    c.words_recv += in.recv_others + out.recv_others;
    c.msgs += in.msgs + out.msgs;
    // Ranks beyond the grid: info and the pivots broadcast from rank 0 to all of A's ranks.
    if (const int all = a.p() * a.q(); all > p * q * plan.h) {
        Tally t;
        t.bcast(1, all, rank == 0);
        t.bcast(std::min(a.m(), a.n()), all, rank == 0);
        c.words += t.c.words, c.words_recv += t.c.words_recv, c.msgs += t.c.msgs;
    }
    return c;
}

// The planner's layered grid: every h >= 2 dividing A's ranks, the squarest p x q of the rest;
// the fewest words on the busiest rank (the model without pivots: the interchanges at their most)
// under the memory limit, the fewer layers on a tie. One rank: 1 x 1 x 1.
detail::LuPlan layered_plan(const BlockCyclic& a, const LuOptions& o, std::size_t elem_size) {
    const int P = a.p() * a.q();
    if (o.grid3d.p > 0) return {LuVariant::Layered, layer_layout(a, o.grid3d.p, o.grid3d.q), o.grid3d.c};
    if (P == 1) return {LuVariant::Layered, layer_layout(a, 1, 1), 1};
    const std::int64_t limit = memory_limit(o);
    detail::LuPlan best;
    std::int64_t best_words = -1;
    for (int h = 2; h <= P; ++h) {
        if (P % h != 0) continue;
        const int pq = P / h;
        int p = 1;
        for (int d = 1; d * d <= pq; ++d)
            if (pq % d == 0) p = d;
        const detail::LuPlan plan{LuVariant::Layered, layer_layout(a, p, pq / p), h};
        std::int64_t words = 0, mem = 0;
        for (int rank = 0; rank < P; ++rank) {
            const Cost c = layered_cost(a, plan, o, GridOrder::RowMajor, rank, elem_size, false, {});
            words = std::max(words, c.words), mem = std::max(mem, c.extra_bytes);
        }
        if (limit > 0 && mem > limit) continue;
        if (best_words < 0 || words < best_words) best = plan, best_words = words;
    }
    if (best_words < 0)
        throw Error(detail::cat("getrf: no layered grid over ", P, " ranks fits memory_limit_bytes = ", limit));
    return best;
}

}  // namespace

namespace detail {

std::string lu_grid_error(const char* fn, const BlockCyclic& a, const LuOptions& o) {
    const Shape3D& g = o.grid3d;
    if (g.p == 0 && g.q == 0 && g.c == 0) return {};
    if (o.variant != LuVariant::Layered)
        return cat(fn, ": grid3d ", g.p, " x ", g.q, " x ", g.c, " given, but the variant is ", to_string(o.variant),
                   " (grid3d is for Layered)");
    if (g.p < 1 || g.q < 1 || g.c < 1) return cat(fn, ": grid3d ", g.p, " x ", g.q, " x ", g.c, " has a side below 1");
    if (static_cast<std::int64_t>(g.p) * g.q * g.c > static_cast<std::int64_t>(a.p()) * a.q())
        return cat(fn, ": grid3d ", g.p, " x ", g.q, " x ", g.c, " needs more than A's ", a.p() * a.q(), " ranks");
    return {};
}

Placement lu_compact_placement(const LuPlan& plan) {
    const int p = plan.work.p(), q = plan.work.q(), h = plan.h;
    const BlockCyclic l(plan.work.m(), plan.work.n(), plan.work.rows.nb, plan.work.cols.nb, h * p, q);
    Placement pl{l, std::vector<int>(static_cast<std::size_t>(h * p * q))};
    for (int k = 0; k < h * p * q; ++k) pl.ranks[static_cast<std::size_t>(k)] = k;  // (layer·p + row)·q + col
    return pl;
}

LuPlan lu_plan(const BlockCyclic& a, const LuOptions& o, std::size_t elem_size) {
    if (o.variant == LuVariant::Layered) return layered_plan(a, o, elem_size);
    const auto [variant, work] = one_row_plan(a, o.variant, o.memory_limit_bytes, elem_size);
    return LuPlan{variant, work};
}

}  // namespace detail

LuVariant getrf_variant(const BlockCyclic& a, const LuOptions& opts, std::size_t elem_size) {
    detail::throw_if(detail::lu_layout_error("getrf_variant", a));
    detail::throw_if(detail::lu_options_error("getrf_variant", opts));
    detail::throw_if(detail::lu_grid_error("getrf_variant", a, opts));
    return detail::lu_plan(a, opts, elem_size).variant;
}

Shape3D getrf_grid(const BlockCyclic& a, const LuOptions& opts, std::size_t elem_size) {
    detail::throw_if(detail::lu_layout_error("getrf_grid", a));
    detail::throw_if(detail::lu_options_error("getrf_grid", opts));
    detail::throw_if(detail::lu_grid_error("getrf_grid", a, opts));
    const detail::LuPlan plan = detail::lu_plan(a, opts, elem_size);
    if (plan.variant == LuVariant::OneRow) return {a.p(), a.q(), 1};
    return {plan.work.p(), plan.work.q(), plan.h};
}

Cost getrf_cost(const BlockCyclic& a, const LuOptions& opts, GridOrder order, int rank, std::size_t elem_size,
                bool is_complex, std::span<const index_t> ipiv) {
    detail::throw_if(detail::lu_layout_error("getrf_cost", a));
    detail::throw_if(detail::lu_options_error("getrf_cost", opts));
    detail::throw_if(detail::lu_grid_error("getrf_cost", a, opts));
    if (rank < 0 || rank >= a.p() * a.q())
        throw Error(detail::cat("getrf_cost: rank ", rank, " is not one of A's ", a.p() * a.q()));
    detail::throw_if(ipiv_error("getrf_cost", ipiv, a.m(), std::min(a.m(), a.n())));
    const detail::LuPlan plan = detail::lu_plan(a, opts, elem_size);
    if (plan.variant == LuVariant::Layered) return layered_cost(a, plan, opts, order, rank, elem_size, is_complex, ipiv);
    const int row = order == GridOrder::RowMajor ? rank / a.q() : rank % a.p();
    const int col = order == GridOrder::RowMajor ? rank % a.q() : rank / a.p();
    return getrf_cost(a, opts, row, col, elem_size, is_complex, ipiv);
}

Cost getrf_cost(const BlockCyclic& a, const LuOptions& opts, int row, int col, std::size_t elem_size, bool is_complex,
                std::span<const index_t> ipiv) {
    detail::throw_if(detail::lu_layout_error("getrf_cost", a));
    detail::throw_if(detail::lu_options_error("getrf_cost", opts));
    detail::throw_if(detail::lu_grid_error("getrf_cost", a, opts));
    detail::check_process("getrf_cost", a, row, col);
    detail::throw_if(ipiv_error("getrf_cost", ipiv, a.m(), std::min(a.m(), a.n())));
    const detail::LuPlan plan = detail::lu_plan(a, opts, elem_size);
    if (plan.variant == LuVariant::Layered)
        return layered_cost(a, plan, opts, GridOrder::RowMajor, row * a.q() + col, elem_size, is_complex, ipiv);
    if (!plan.convert()) return engine_cost(a, opts, row, col, elem_size, is_complex, ipiv);
    // OneRow: process row `row` is process column `row` of the 1 x p grid.
    return detail::with_one_row(engine_cost(plan.work, opts, 0, row, elem_size, is_complex, ipiv),
                                detail::one_row_cost(a, plan.work, row, elem_size));
}

Cost getrs_cost(Op op, const BlockCyclic& a, const BlockCyclic& b, int row, int col, std::size_t elem_size,
                bool is_complex, std::span<const index_t> ipiv) {
    using detail::cat;
    if (op != Op::N && op != Op::T && op != Op::C) throw Error(cat("getrs_cost: op is ", static_cast<int>(op), ", not an Op"));
    detail::throw_if(detail::lu_layout_error("getrs_cost", a));
    detail::throw_if(detail::same_grid_error("getrs_cost", "A", a, {{"B", &b}}));
    if (a.m() != a.n()) throw Error(cat("getrs_cost: A is ", a.m(), " x ", a.n(), ", not square"));
    if (b.m() != a.n()) throw Error(cat("getrs_cost: B has ", b.m(), " rows but A is ", a.n(), " x ", a.n()));
    if (b.rows.nb != a.rows.nb || b.rows.ib != a.rows.ib)
        throw Error("getrs_cost: B's row blocks must line up with A's");
    detail::check_process("getrs_cost", a, row, col);
    detail::throw_if(ipiv_error("getrs_cost", ipiv, a.n(), a.n()));
    if (a.n() == 0 || b.n() == 0) return {};
    const detail::LuGeom g{a.rows, a.cols};
    const index_t w = b.cols.local_size(col);
    Tally t;
    // The interchanges at once (getrs: their composite, one message per pair of process rows);
    // without the pivots, at most min(my rows, 2·n) rows each way to each of the p − 1 others.
    std::int64_t moved = 0;
    if (const int p = b.rows.nprocs; p > 1 && !ipiv.empty()) {
        detail::DeferredMoves dm(g, ipiv);
        for (index_t s = g.steps() - 2; s >= -1; --s) dm.back_to(s);
        const detail::PermuteCounts x = detail::permute_counts(b.rows, row, dm.moves());
        index_t out = 0, in = 0;
        for (int r = 0; r < p; ++r) {
            t.send(x.send[static_cast<std::size_t>(r)] * w);
            t.recv(x.recv[static_cast<std::size_t>(r)] * w);
            out += x.send[static_cast<std::size_t>(r)];
            in += x.recv[static_cast<std::size_t>(r)];
        }
        moved = std::max(out, in) * w;
    } else if (p > 1) {
        const index_t k = std::min(b.rows.local_size(row), 2 * g.kmax());
        if (k > 0 && w > 0) {
            t.c.msgs += 2 * (p - 1);
            t.c.words += 2 * k * w;
            t.c.words_recv += k * w;
        }
        moved = k * w;
    }
    const Uplo first = op == Op::N ? Uplo::Lower : Uplo::Upper;
    const Uplo second = op == Op::N ? Uplo::Upper : Uplo::Lower;
    const Cost c1 = trsm_cost(first, op, a, b, TrsmOptions{}, row, col, elem_size, is_complex);
    const Cost c2 = trsm_cost(second, op, a, b, TrsmOptions{}, row, col, elem_size, is_complex);
    Cost c = t.c;
    for (const Cost* x : {&c1, &c2}) {
        c.words += x->words;
        c.words_recv += x->words_recv;
        c.msgs += x->msgs;
        c.flops += x->flops;
        c.stream_words += x->stream_words;
    }
    c.extra_bytes = std::max({c1.extra_bytes, c2.extra_bytes, 2 * moved * static_cast<std::int64_t>(elem_size)});
    return c;
}

}  // namespace cala

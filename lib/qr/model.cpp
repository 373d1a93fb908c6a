// Exact cost of cala::geqrf and cala::ormqr per rank: the engines' schedules (geometry.hpp,
// engine.cpp, panel.cpp) counted with the Traffic convention of comm.hpp.
//
// geqrf, step l, w = w(l), m_r = panel rows of process row r, n_t = trailing local columns:
//   TSQR (np > 1, column co(l)): w zero-column flags summed down the column; per tree edge,
//        rows_from·w words up and the same down (a panel with an exactly zero column instead
//        gathers its rows on the root and sends them back: geqrf_cost_gathered);
//        [L\U | T] broadcast down the column: 2w² words
//   row broadcast (q > 1, m_r > 0): w² + m_r·w words from co(l)
//   update (np > 1): allreduce of w·n_t down the column (split in two on column co(l+1) with
//        lookahead: w·nb(l+1), then w·(n_t − nb(l+1)))
//   end: allreduce of the min(m, n) taus over the grid (P > 1)
// ormqr(Side::Left): Gram w² down A's panel column (np > 1), [T | V rows] along the rows, W
// (w·n_loc) down the columns; ormqr(Side::Right): ormqr_right_cost below.

#include <algorithm>

#include "cala/qr.hpp"
#include "model/check.hpp"
#include "model/one_row.hpp"
#include "qr/geometry.hpp"
#include "qr/model.hpp"

namespace cala {

namespace detail {
namespace {

struct Tally {
    Cost c;
    void send(std::int64_t w) {
        if (w > 0) c.words += w, c.msgs += 1;
    }
    void receive(std::int64_t w) {
        if (w > 0) c.words += w, c.words_recv += w, c.msgs += 1;
    }
    void both(std::int64_t w) { send(w), receive(w); }
};

void check_aligned(const char* fn, const BlockCyclic& a) {
    if (a.rows.nb != a.cols.nb || (a.m() > 0 && a.n() > 0 && a.rows.ib != a.cols.ib))
        throw Error(std::string(fn) + ": A must have square blocks aligned with its diagonal");
}

// ormqr(Side::Right), panel l (ormqr_right.cpp), w = w(l), m_r = panel rows of process row r, m_c =
// C's local rows, b_r' = right_parts(l, col)[r']:
//   Gram (column co(l), p > 1): allreduce of w² down the column
//   [T | V rows] (q > 1): w² + m_r·w from co(l) along every row
//   V gathered (p > 1): per r' with b_r' > 0, a broadcast of b_r'·w down the process column
//   W (min(q, mt − l) > 1, m_c > 0): allreduce of m_c·w along the row
Cost ormqr_right_cost(Op op, const BlockCyclic& a, const BlockCyclic& c, index_t k, int row, int col,
                      std::size_t elem_size, bool is_complex) {
    (void)op;
    Tally t;
    if (k == 0 || c.m() == 0 || c.n() == 0) return t.c;
    check_aligned("ormqr_cost", a);
    const QrGeom g{a.rows, a.cols, k};
    const int r = row, p = g.p(), q = g.q();
    const index_t mc = c.rows.local_size(row);
    const double fm = is_complex ? 4.0 : 1.0;
    for (index_t l = 0; l < g.kt(); ++l) {
        const index_t w = g.w(l), mr = g.panel_rows(l, r);
        if (col == g.co(l)) {
            if (p > 1) t.both(w * w);
            t.c.flops += fm * 2.0 * double(mr) * w * w;
        }
        if (q > 1) {
            if (col == g.co(l)) t.send(w * w + mr * w);
            else t.receive(w * w + mr * w);
        }
        const std::vector<index_t> parts = right_parts(g, c.cols, l, col);
        index_t nv = 0;
        for (int i = 0; i < p; ++i) {
            nv += parts[i];
            if (p > 1 && i == r) t.send(parts[i] * w);
            else if (p > 1) t.receive(parts[i] * w);
        }
        if (std::min<index_t>(q, g.mt() - l) > 1 && mc > 0) t.both(mc * w);
        t.c.flops += fm * (4.0 * double(mc) * w * nv + 2.0 * double(mc) * w * w);
    }
    t.c.extra_bytes = right_work(g, c.cols, mc, row, col) * static_cast<std::int64_t>(elem_size);
    return t.c;
}

}  // namespace
}  // namespace detail

detail::QrPlan detail::qr_plan(const BlockCyclic& a, const QrOptions& o, std::size_t elem_size) {
    const auto [variant, work] = one_row_plan(a, o.variant, o.memory_limit_bytes, elem_size);
    return QrPlan{variant, work};
}

QrVariant geqrf_variant(const BlockCyclic& a, const QrOptions& opts, std::size_t elem_size) {
    detail::check_aligned("geqrf_variant", a);
    return detail::qr_plan(a, opts, elem_size).variant;
}

int geqrf_delay(const BlockCyclic& a, const QrOptions& opts, std::size_t elem_size) {
    const BlockCyclic w = detail::qr_plan(a, opts, elem_size).work;
    return detail::qr_delay(detail::QrGeom{w.rows, w.cols, std::min(w.m(), w.n())}, opts.delay);
}

Cost geqrf_cost(const BlockCyclic& a, const QrOptions& opts, int row, int col, std::size_t elem_size,
                bool is_complex) {
    return detail::geqrf_cost_gathered(a, opts, row, col, elem_size, is_complex, {});
}

namespace {

Cost engine_cost(const BlockCyclic& a, const QrOptions& opts, int row, int col, std::size_t elem_size, bool is_complex,
                 const std::vector<index_t>& gathered);

}  // namespace

Cost detail::geqrf_cost_gathered(const BlockCyclic& a, const QrOptions& opts, int row, int col, std::size_t elem_size,
                                 bool is_complex, const std::vector<index_t>& gathered) {
    detail::check_process("geqrf_cost", a, row, col);
    detail::check_aligned("geqrf_cost", a);
    detail::check_at_least("geqrf_cost", "lookahead", opts.lookahead, 0);
    detail::check_at_least("geqrf_cost", "delay", opts.delay, 0);
    detail::check_at_least("geqrf_cost", "memory_limit_bytes", opts.memory_limit_bytes, 0);
    const QrPlan plan = qr_plan(a, opts, elem_size);
    if (!plan.convert()) return engine_cost(a, opts, row, col, elem_size, is_complex, gathered);
    // OneRow: process row `row` is process column `row` of the 1 x p grid, one process row there.
    return with_one_row(engine_cost(plan.work, opts, 0, row, elem_size, is_complex, {}),
                        one_row_cost(a, plan.work, row, elem_size));
}

namespace {

Cost engine_cost(const BlockCyclic& a, const QrOptions& opts, int row, int col, std::size_t elem_size, bool is_complex,
                 const std::vector<index_t>& gathered) {
    const index_t k = std::min(a.m(), a.n());
    detail::Tally t;
    if (k == 0) return t.c;
    const detail::QrGeom g{a.rows, a.cols, k};
    const int r = row, c = col, p = g.p(), q = g.q();
    const int d = detail::qr_delay(g, opts.delay);
    const double fm = is_complex ? 4.0 : 1.0;
    index_t gather_mem = 0;
    for (index_t l = 0; l < g.kt(); ++l) {
        const index_t w = g.w(l), mr = g.panel_rows(l, r);
        const int np = g.np(l);
        if (c == g.co(l)) {
            if (np > 1) {
                const int me = g.part(l, r);
                t.both(w);  // the zero-column flags
                if (std::find(gathered.begin(), gathered.end(), l) != gathered.end()) {
                    // Rows gathered on the root and sent back (panel.cpp, gathered_panel).
                    if (me == 0) {
                        for (int u = 1; u < np; ++u) t.both(g.panel_rows(l, (g.ro(l) + u) % p) * w);
                        gather_mem = std::max(gather_mem, 3 * (a.m() - g.c0(l)) * w);
                    } else if (me < np) {
                        t.both(mr * w);
                        gather_mem = std::max(gather_mem, mr * w);
                    }
                } else {
                    for (const auto& e : g.tree(l))
                        if (e.from == me || e.to == me) t.both(e.rows_from * w);
                }
                if (r == g.ro(l)) t.send(2 * w * w);
                else t.receive(2 * w * w);
                // Leaf geqrf, Q formed (ormqr), V = Q·U⁻¹.
                if (mr > 0) t.c.flops += fm * (4.0 * double(mr) * w * w + double(mr) * w * w);
            } else if (mr > 0) {
                t.c.flops += fm * 2.0 * double(mr) * w * g.bs(l);
            }
            if (q > 1 && mr > 0) t.send(w * w + mr * w);
        } else if (q > 1 && mr > 0) {
            t.receive(w * w + mr * w);
        }
        // Delayed updates (engine.cpp): inside a group only the group's columns; at its last panel
        // the columns right of it with the whole group (its T built first), all on every rank.
        const index_t l0 = detail::qr_group_first(d, l), l1 = detail::qr_group_last(g, d, l);
        const index_t nt = g.trail(l, c);
        const index_t ni = l < l1 ? g.trail0(l1, c) - g.trail0(l, c) : nt;
        if (l == l1 && l0 < l1) {
            const index_t mr0 = g.panel_rows(l0, r);
            double kw = 0;
            for (index_t x = l0; x <= l1; ++x) {
                const double wx = double(g.w(x)), mx = double(g.panel_rows(x, r));
                if (kw > 0 && mx > 0) t.c.flops += fm * 2.0 * (kw * wx * mx + kw * wx * wx + kw * kw * wx);
                kw += wx;
            }
            if (mr0 > 0) t.c.flops += fm * (4.0 * double(mr0) * kw * ni + 2.0 * kw * kw * ni);
        } else if (mr > 0) {
            t.c.flops += fm * (4.0 * double(mr) * w * ni + 2.0 * double(w) * w * ni);
        }
        if (np > 1 && nt > 0) {
            if (opts.lookahead > 0 && l + 1 < g.kt() && c == g.co(l + 1)) {
                t.both(w * g.bs(l + 1));
                t.both(w * (nt - g.bs(l + 1)));
            } else {
                t.both(w * nt);
            }
        }
    }
    if (std::int64_t(p) * q > 1) t.both(k);
    t.c.extra_bytes = (detail::qr_work(g, r, c, d).total() + gather_mem) * static_cast<std::int64_t>(elem_size);
    return t.c;
}

}  // namespace

Cost ormqr_cost(Side side, Op op, const BlockCyclic& a, const BlockCyclic& c, index_t k, const QrOptions& opts,
                int row, int col, std::size_t elem_size, bool is_complex) {
    detail::check_process("ormqr_cost", c, row, col);
    detail::check_at_least("ormqr_cost", "lookahead", opts.lookahead, 0);
    detail::check_at_least("ormqr_cost", "k", k, 0);
    if (k > std::min(a.m(), a.n())) throw Error("ormqr_cost: k exceeds the reflectors A can hold");
    if (side == Side::Right) return detail::ormqr_right_cost(op, a, c, k, row, col, elem_size, is_complex);
    (void)op;
    detail::Tally t;
    if (k == 0 || c.m() == 0 || c.n() == 0) return t.c;
    detail::check_aligned("ormqr_cost", a);
    const detail::QrGeom g{a.rows, a.cols, k};
    const int r = row, q = g.q();
    const index_t nc = c.cols.local_size(col), nb = g.cols.nb;
    const double fm = is_complex ? 4.0 : 1.0;
    for (index_t l = 0; l < g.kt(); ++l) {
        const index_t w = g.w(l), mr = g.panel_rows(l, r);
        const bool reduce = g.np(l) > 1;
        if (col == g.co(l)) {
            if (reduce) t.both(w * w);
            if (q > 1 && mr > 0) t.send(w * w + mr * w);
            t.c.flops += fm * 2.0 * double(mr) * w * w;
        } else if (q > 1 && mr > 0) {
            t.receive(w * w + mr * w);
        }
        if (reduce && nc > 0) t.both(w * nc);
        if (mr > 0) t.c.flops += fm * (4.0 * double(mr) * w * nc + 2.0 * double(w) * w * nc);
    }
    const index_t mloc = g.rows.local_size(r);
    t.c.extra_bytes = (mloc * nb + 2 * nb * nb + 2 * nb * std::max<index_t>(nc, 1)) * static_cast<std::int64_t>(elem_size);
    return t.c;
}

}  // namespace cala

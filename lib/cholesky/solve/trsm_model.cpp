// Exact cost of cala::trsm and cala::potrs per rank: the plan's redistributions (from the
// redistribution geometry, as gemm's model does) plus the tile loops of trsm_2d*.cpp.

#include <algorithm>
#include <initializer_list>

#include "cala/cholesky.hpp"
#include "cholesky/solve/trsm_plan.hpp"
#include "matrix/redist_plan.hpp"
#include "core/check.hpp"
#include "model/check.hpp"
#include "model/costs.hpp"

namespace cala {

namespace {

using detail::local_elems;
using detail::redist_summary;

// A tile loop on rank (row, col): one panel broadcast per block along the process row (when
// q > 1 and the rank has panel rows), one block row per block along the process column (when
// p > 1 and the rank has columns of B): the solved rows broadcast from the owner row (op = N),
// or the partial sums reduced to it (op = T/C). The same words either way; the owner receives
// the reduction where the others receive the broadcast.
Cost loop_cost(bool lower, Op op, const BlockCyclic& a, const BlockCyclic& b, int row, int col) {
    Cost c;
    const Dist1D& R = a.rows;
    const index_t nblk = R.num_blocks(), m_loc = R.local_size(row), n_loc = b.cols.local_size(col);
    const int p = a.p(), q = a.q();
    for (index_t k = 0; k < nblk; ++k) {
        const index_t w = R.block_size(k);
        const bool owner = R.block_owner(k) == row;
        const index_t before = R.local_before(R.block_start(k), row), after = before + (owner ? w : 0);
        const index_t h = lower ? m_loc - before : after;    // panel rows
        const index_t upd = lower ? m_loc - after : before;  // rows updated (N) or summed (T/C)
        if (q > 1 && h > 0) {
            c.msgs += 1;
            c.words += h * w;
            if (a.cols.block_owner(k) != col) c.words_recv += h * w;
        }
        if (p > 1 && n_loc > 0) {
            c.msgs += 1;
            c.words += w * n_loc;
            if (owner == (op != Op::N)) c.words_recv += w * n_loc;
        }
        if (owner) c.flops += static_cast<double>(w) * w * n_loc;
        c.flops += 2.0 * upd * w * n_loc;
    }
    return c;
}

void add_traffic(Cost& c, const detail::RedistTraffic& s) {
    c.words += s.words;
    c.words_recv += s.recv_others;
    c.msgs += s.msgs;
}

// Conversions and loops in the driver's order (trsm.cpp, solve_run), tracking workspace.
Cost solve_cost(std::initializer_list<Op> ops, bool lower, const BlockCyclic& a, const BlockCyclic& b,
                const TrsmOptions& opts, int row, int col, std::size_t elem_size, bool is_complex) {
    Cost cost;
    if (a.n() == 0 || b.n() == 0) return cost;
    const auto plan = detail::plan_trsm(a, b, opts);
    std::int64_t live = 0, peak = 0;  // workspace in elements
    if (plan.move_a) {
        const auto s = redist_summary(Op::N, a, plan.a_layout, row, col);
        add_traffic(cost, s);
        live += local_elems(plan.a_layout, row, col);
        peak = std::max(peak, live + s.send_total + s.recv_others);
    }
    if (plan.move_b) {
        const auto s = redist_summary(Op::N, b, plan.b_layout, row, col);
        add_traffic(cost, s);
        live += local_elems(plan.b_layout, row, col);
        peak = std::max(peak, live + s.send_total + s.recv_others);
    }
    double flops = 0;
    for (Op op : ops) {
        const auto buf = detail::trsm_buffers(plan.a_layout, plan.b_layout, op, plan.lookahead, row, col);
        peak = std::max(peak, live + buf.panel_elems + buf.x_elems);
        const Cost loop = loop_cost(lower, op, plan.a_layout, plan.b_layout, row, col);
        cost.words += loop.words;
        cost.words_recv += loop.words_recv;
        cost.msgs += loop.msgs;
        flops += loop.flops;
    }
    cost.flops = (is_complex ? 4.0 : 1.0) * flops;
    if (plan.move_b) {
        const auto s = redist_summary(Op::N, plan.b_layout, b, row, col);
        add_traffic(cost, s);
        peak = std::max(peak, live + s.send_total + s.recv_others);
    }
    cost.extra_bytes = peak * static_cast<std::int64_t>(elem_size);
    return cost;
}

// The arguments of trsm_cost and potrs_cost, with cala::trsm's messages.
void check_solve(const char* fn, Uplo uplo, Op op, const BlockCyclic& a, const BlockCyclic& b, const TrsmOptions& o,
                 int row, int col) {
    using detail::cat;
    if (uplo != Uplo::Lower && uplo != Uplo::Upper) throw Error(cat(fn, ": uplo is ", static_cast<int>(uplo), ", not a Uplo"));
    if (op != Op::N && op != Op::T && op != Op::C) throw Error(cat(fn, ": op is ", static_cast<int>(op), ", not an Op"));
    detail::throw_if(detail::same_grid_error(fn, "A", a, {{"B", &b}}));
    if (a.m() != a.n()) throw Error(cat(fn, ": A is ", a.m(), " x ", a.n(), ", not square"));
    if (b.m() != a.n()) throw Error(cat(fn, ": B has ", b.m(), " rows but A is ", a.n(), " x ", a.n()));
    if (o.lookahead < 0 || o.lookahead > 64) throw Error(cat(fn, ": lookahead is ", o.lookahead, ", must be in [0, 64]"));
    detail::check_process(fn, a, row, col);
}

}  // namespace

Cost trsm_cost(Uplo uplo, Op op, const BlockCyclic& a, const BlockCyclic& b, const TrsmOptions& opts, int row,
               int col, std::size_t elem_size, bool is_complex) {
    check_solve("trsm_cost", uplo, op, a, b, opts, row, col);
    return solve_cost({op}, uplo == Uplo::Lower, a, b, opts, row, col, elem_size, is_complex);
}

Cost trsm_cost(Side side, Uplo uplo, Op op, const BlockCyclic& a, const BlockCyclic& b, const TrsmOptions& opts,
               int row, int col, std::size_t elem_size, bool is_complex) {
    using detail::cat;
    if (side == Side::Left) return trsm_cost(uplo, op, a, b, opts, row, col, elem_size, is_complex);
    if (side != Side::Right) throw Error(cat("trsm_cost: side is ", static_cast<int>(side), ", not a Side"));
    if (b.n() != a.n())
        throw Error(cat("trsm_cost: B has ", b.n(), " columns but A is ", a.n(), " x ", a.n(), " (right side)"));
    const auto r = detail::right_problem(op, a, b);
    check_solve("trsm_cost", uplo, r.op, a, r.bt_layout, opts, row, col);
    detail::check_process("trsm_cost", b, row, col);
    if (a.n() == 0 || b.m() == 0) return {};
    // Into the transposed copy, the left-side solve there, and back; the copy lives throughout.
    const std::int64_t live = local_elems(r.bt_layout, row, col);
    const auto in = redist_summary(r.move, b, r.bt_layout, row, col);
    const auto out = redist_summary(r.move, r.bt_layout, b, row, col);
    Cost cost = solve_cost({r.op}, uplo == Uplo::Lower, a, r.bt_layout, opts, row, col, elem_size, is_complex);
    const auto es = static_cast<std::int64_t>(elem_size);
    std::int64_t peak = live * es + cost.extra_bytes;
    peak = std::max(peak, (live + in.send_total + in.recv_others) * es);
    peak = std::max(peak, (live + out.send_total + out.recv_others) * es);
    add_traffic(cost, in);
    add_traffic(cost, out);
    cost.extra_bytes = peak;
    return cost;
}

Cost potrs_cost(Uplo uplo, const BlockCyclic& a, const BlockCyclic& b, const TrsmOptions& opts, int row, int col,
                std::size_t elem_size, bool is_complex) {
    check_solve("potrs_cost", uplo, Op::N, a, b, opts, row, col);
    const bool lower = uplo == Uplo::Lower;
    return lower ? solve_cost({Op::N, Op::C}, true, a, b, opts, row, col, elem_size, is_complex)
                 : solve_cost({Op::C, Op::N}, false, a, b, opts, row, col, elem_size, is_complex);
}

}  // namespace cala

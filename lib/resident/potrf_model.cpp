// Cost model of the resident Cholesky: the schedule of potrf_geom.hpp counted with the traffic
// convention of cala/comm.hpp (an ibcast of w words over s > 1 ranks: the root sends one message
// of w words, every other rank receives one). NCCL broadcasts count as MPI's.

#include "cala/resident.hpp"
#include "cholesky/plan.hpp"
#include "cholesky/planner.hpp"
#include "core/check.hpp"
#include "model/costs.hpp"
#include "resident/potrf_25d.hpp"
#include "resident/potrf_geom.hpp"

namespace cala {

Cost resident_potrf_cost(Uplo uplo, const BlockCyclic& a, const ResidentPotrfOptions& opts, int row, int col,
                         std::size_t elem_size, bool is_complex, GridOrder order) {
    using detail::cat;  // (lookahead and transport change no message)
    if (a.m() != a.n()) throw Error(cat("resident_potrf_cost: A must be square, got ", a.m(), " x ", a.n()));
    if (row < 0 || row >= a.p() || col < 0 || col >= a.q())
        throw Error(cat("resident_potrf_cost: process (", row, ", ", col, ") is outside the ", a.p(), " x ", a.q(),
                        " grid"));
    if (opts.variant != CholeskyVariant::TwoD && a.m() > 0 && a.p() * a.q() > 1) {
        const CholeskyOptions co{.variant = opts.variant, .lookahead = opts.lookahead, .grid3d = opts.grid3d,
                                 .block_size = opts.block_size, .memory_limit_bytes = opts.memory_limit_bytes};
        detail::check_potrf_model("resident_potrf_cost", uplo, a, co, elem_size);
        const CholeskyOptions r = detail::resolve_potrf(uplo, a, order, co, elem_size, is_complex);
        if (r.variant != CholeskyVariant::TwoD) {  // layered: the host's model on the same plan
            const detail::CholPlan plan = detail::make_chol_plan(uplo, a, a.p() * a.q(), r);
            const int rank = order == GridOrder::RowMajor ? row * a.q() + col : col * a.p() + row;
            Cost cost = detail::potrf_plan_cost(plan, uplo, a, order, rank, elem_size, is_complex);
            cost.extra_bytes = detail::resident_potrf_workspace_25d(plan, rank) * static_cast<std::int64_t>(elem_size);
            return cost;
        }
    }
    const BlockCyclic wl = detail::res_potrf_layout(a);
    const auto g = detail::res_potrf_geom(uplo == Uplo::Upper, wl, row, col);
    Cost cost;
    const double fm = is_complex ? 4.0 : 1.0;
    auto bcast = [&](std::int64_t w, bool root) {
        if (w <= 0) return;
        cost.words += w;
        cost.msgs += 1;
        if (!root) cost.words_recv += w;
    };
    if (a.p() * a.q() == 1) {  // one device potrf, nothing travels
        const double n = double(a.m());
        cost.flops = fm * n * n * n / 3.0;
        return cost;
    }
    for (index_t l = 0; l < g.mt(); ++l) {
        const index_t b = g.size(l);
        if (g.r == g.ro(l) && g.c == g.co(l)) cost.flops += fm * double(b) * b * b / 3.0;
        if (g.diag_travels(l)) bcast(b * b, g.r == g.ro(l));
        if (g.c == g.co(l)) cost.flops += fm * double(g.nrows(l)) * b * b;
        if (g.row_travels(l)) bcast(g.nrows(l) * b, g.c == g.co(l));
        if (g.vp() > 1)
            for (int rp = 0; rp < g.vp(); ++rp) bcast(g.rows_of(g.column_tiles(l, rp, g.c)) * b, rp == g.r);
        for (index_t j = l + 1; j < g.mt(); ++j) {  // my tiles (i, j), i >= j
            if (g.co(j) != g.c) continue;
            for (index_t i = j; i < g.mt(); ++i) {
                if (g.ro(i) != g.r) continue;
                const double bi = double(g.size(i)), bj = double(g.size(j));
                cost.flops += fm * (i == j ? bj * (bj + 1) * b : 2.0 * bi * bj * b);
            }
        }
    }
    std::int64_t work = 0;
    if (!(wl == a)) {  // into the working layout and back, staged (redistribute's traffic)
        for (const auto& s : {detail::redist_summary(Op::N, a, wl, row, col), detail::redist_summary(Op::N, wl, a, row, col)}) {
            cost.words += s.words;
            cost.words_recv += s.recv_others;
            cost.msgs += s.msgs;
        }
        work = detail::local_elems(wl, row, col);
    }
    cost.extra_bytes = (g.slots().total() + work) * static_cast<std::int64_t>(elem_size);
    return cost;
}

}  // namespace cala

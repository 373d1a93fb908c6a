#include "cholesky/plan.hpp"

#include <algorithm>

namespace cala::detail {

bool chol_aligned(const BlockCyclic& l) {
    return l.rows.n == l.cols.n && l.rows.nb == l.cols.nb && l.rows.ib == l.cols.ib;
}

int chol_delay(const CholeskyOptions& opts, index_t nb, int h) {
    if (h > 1 || !opts.devices.empty()) return 1;
    if (opts.delay > 0) return opts.delay;
    return nb >= 256 ? 1 : static_cast<int>(std::clamp<index_t>(256 / std::max<index_t>(nb, 1), 1, 4));
}

CholPlan make_chol_plan(Uplo uplo, const BlockCyclic& a, int nranks, const CholeskyOptions& opts) {
    CholPlan pl;
    const index_t n = a.m();
    const bool layered = opts.variant == CholeskyVariant::Repl || opts.variant == CholeskyVariant::ReplPart;
    if (layered) {
        pl.variant = opts.variant;
        pl.p = opts.grid3d.p, pl.q = opts.grid3d.q, pl.h = opts.grid3d.c;
    } else {
        pl.variant = CholeskyVariant::TwoD;
        pl.p = a.p(), pl.q = a.q(), pl.h = 1;
    }
    (void)nranks;
    const index_t nb = opts.block_size > 0 ? opts.block_size : std::max<index_t>(1, a.cols.nb);
    pl.op = uplo == Uplo::Upper ? Op::C : Op::N;
    pl.convert = layered || uplo == Uplo::Upper || !chol_aligned(a) || (opts.block_size > 0 && opts.block_size != a.cols.nb);
    pl.work = pl.convert ? BlockCyclic(n, n, nb, nb, pl.p, pl.q) : a;
    pl.geom.rows = pl.work.rows;
    pl.geom.cols = pl.work.cols;
    pl.geom.h = pl.h;
    pl.geom.part = pl.variant == CholeskyVariant::ReplPart;
    pl.geom.delay = chol_delay(opts, nb, pl.h);
    pl.node_shared = opts.node_shared_memory && pl.h == 1 && pl.p == 1 && pl.q > 1;
    return pl;
}

BlockCyclic chol_compact_layout(const CholPlan& plan) {
    const index_t n = plan.work.m(), nb = plan.work.rows.nb;
    return BlockCyclic(n, n, nb, nb, plan.h * plan.p, plan.q);
}

Placement chol_compact_placement(const CholPlan& plan) {
    Placement pl{chol_compact_layout(plan), std::vector<int>(static_cast<std::size_t>(plan.h * plan.p * plan.q))};
    for (int vr = 0; vr < plan.h * plan.p; ++vr)
        for (int c = 0; c < plan.q; ++c) {
            const int layer = vr / plan.p, r = vr % plan.p;
            pl.ranks[static_cast<std::size_t>(vr) * plan.q + c] = (layer * plan.p + r) * plan.q + c;
        }
    return pl;
}

}  // namespace cala::detail

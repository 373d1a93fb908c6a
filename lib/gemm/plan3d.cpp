#include "gemm/plan3d.hpp"

#include <algorithm>

namespace cala::detail {

Placement spread_placement(const BlockCyclic& virt, Spread s, const Shape3& g) {
    Placement pl{virt, std::vector<int>(static_cast<std::size_t>(virt.p()) * virt.q())};
    auto rank = [&](int h, int r, int col) { return (h * g.p + r) * g.q + col; };
    for (int vr = 0; vr < virt.p(); ++vr)
        for (int vc = 0; vc < virt.q(); ++vc) {
            int h = 0, r = vr, col = vc;
            switch (s) {
                case Spread::ColsByLayer: h = vc % g.c, col = vc / g.c; break;
                case Spread::RowsByLayer: h = vr % g.c, r = vr / g.c; break;
                case Spread::ColsReduced: h = vc / g.q, col = vc % g.q; break;
                case Spread::Layer0: break;
            }
            pl.ranks[static_cast<std::size_t>(vr) * virt.q() + vc] = rank(h, r, col);
        }
    return pl;
}

index_t layer_extent(index_t n, index_t nb, int c, int h) {
    const Dist1D d(n, nb, c);  // blocks dealt to layers cyclically: the layer's share of n
    return d.local_size(h);
}

namespace {

Dist1D dist(index_t n, index_t nb, int nprocs) { return Dist1D(n, nb, nprocs); }

// Layer h's share of a dimension spread by layer: blocks h, h+c, ... as a plain distribution.
Dist1D layer_part(const Dist1D& virt_or_plain, int per_layer, int c, int h, bool spread) {
    if (!spread) return virt_or_plain;
    return Dist1D(layer_extent(virt_or_plain.n, virt_or_plain.nb, c, h), virt_or_plain.nb, per_layer);
}

}  // namespace

Plan3D plan_gemm_3d(Op op_a, Op op_b, index_t m, index_t n, index_t k, Variant v, Shape3 g, index_t nb,
                    const GemmOptions& opts) {
    const int p = g.p, q = g.q, c = g.c;
    Plan3D pl;
    pl.variant = v, pl.g = g, pl.nb = nb, pl.opts = opts;
    switch (v) {
        case Variant::StationaryA:  // A' replicated; Bt (n x k) and C split by layer along n
            pl.a = {op_a, Op::N, BlockCyclic(dist(m, nb, p), dist(k, nb, q)), Spread::Layer0, true};
            pl.b = {op_b == Op::N ? Op::T : Op::N, op_b == Op::N ? Op::T : op_b,
                    BlockCyclic(dist(n, nb, c * p), dist(k, nb, q)), Spread::RowsByLayer, false};
            pl.c_virt = BlockCyclic(dist(m, nb, p), dist(n, nb, c * q));
            pl.c_spread = Spread::ColsByLayer;
            break;
        case Variant::StationaryB:  // B' replicated; At (k x m) and C split by layer along m
            pl.a = {op_a == Op::N ? Op::T : Op::N, op_a == Op::N ? Op::T : op_a,
                    BlockCyclic(dist(k, nb, p), dist(m, nb, c * q)), Spread::ColsByLayer, false};
            pl.b = {op_b, Op::N, BlockCyclic(dist(k, nb, p), dist(n, nb, q)), Spread::Layer0, true};
            pl.c_virt = BlockCyclic(dist(m, nb, c * p), dist(n, nb, q));
            pl.c_spread = Spread::RowsByLayer;
            break;
        default:  // StationaryC: k split by layer, partial C reduce-scattered over fibers
            pl.variant = Variant::StationaryC;
            pl.a = {op_a, Op::N, BlockCyclic(dist(m, nb, p), dist(k, nb, c * q)), Spread::ColsByLayer, false};
            pl.b = {op_b, Op::N, BlockCyclic(dist(k, nb, c * p), dist(n, nb, q)), Spread::RowsByLayer, false};
            pl.c_virt = BlockCyclic(dist(m, nb, p), dist(n, nb, c * q));
            pl.c_spread = Spread::ColsReduced;
            break;
    }
    return pl;
}

BlockCyclic Plan3D::a_layer(int h) const {
    const auto& v = a.virt;
    if (a.replicated) return v;
    return {layer_part(v.rows, g.p, g.c, h, a.spread == Spread::RowsByLayer),
            layer_part(v.cols, g.q, g.c, h, a.spread == Spread::ColsByLayer)};
}

BlockCyclic Plan3D::b_layer(int h) const {
    const auto& v = b.virt;
    if (b.replicated) return v;
    return {layer_part(v.rows, g.p, g.c, h, b.spread == Spread::RowsByLayer),
            layer_part(v.cols, g.q, g.c, h, b.spread == Spread::ColsByLayer)};
}

BlockCyclic Plan3D::c_layer(int h) const {
    if (c_spread == Spread::ColsReduced)  // every layer holds a whole partial C
        return BlockCyclic(c_virt.rows, Dist1D(c_virt.n(), nb, g.q));
    return {layer_part(c_virt.rows, g.p, g.c, h, c_spread == Spread::RowsByLayer),
            layer_part(c_virt.cols, g.q, g.c, h, c_spread == Spread::ColsByLayer)};
}

GemmPlan Plan3D::layer_plan(int h) const {
    GemmPlan lp;
    lp.variant = variant;
    lp.a = {false, Op::N, a.kernel_op, a_layer(h)};
    lp.b = {false, Op::N, b.kernel_op, b_layer(h)};
    lp.panel_width = opts.panel_width > 0 ? opts.panel_width : 512;
    lp.lookahead = opts.lookahead;
    if (resident) {  // the resident plan's conventions (lib/resident/plan.hpp)
        const BlockCyclic cl = c_layer(h);
        const index_t looped = variant == Variant::StationaryA   ? cl.n()
                               : variant == Variant::StationaryB ? cl.m()
                                                                 : lp.a.layout.n();
        if (opts.panel_width <= 0 && g.p == 1 && g.q == 1) lp.panel_width = std::max<index_t>(looped, 1);
        lp.on_devices = true;
        return lp;
    }
    lp.on_devices = gemm_devices(opts, lp.devices);
    return lp;
}

}  // namespace cala::detail

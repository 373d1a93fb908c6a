// 2.5D / 3D SUMMA on resident operands: the host path's schedule (lib/gemm/summa3d.cpp) with the
// data on the device.
//
//   1. A and B into the layered placements of the plan: each rank's local array to host memory,
//      redistribute_placed over the 3D grid's communicator, replicated operands broadcast along
//      the fibers from layer 0, then onto the device                           (staged, counted)
//   2. layer h: the resident 2D engine of the variant (summa_c | summa_a | summa_b) on its p x q
//      grid into a partial (C) or final (A, B) block of C in device memory   (panels: NCCL | MPI)
//   3. stationary C: the partial products to host memory, local column block t reduced over the
//      fiber onto layer t mod c                                               (MPI ireduce)
//   4. the result back into C's layout, C := result + beta·C, onto the device (staged, counted)
//
// Traffic is summa_3d's message for message, with the layer loop on the panel path; the model
// is gemm3d_cost on the same Plan3D (Plan3D::resident).

#include "resident/summa3d.hpp"

#include <algorithm>

#include "core/workspace.hpp"
#include "matrix/redistribute_impl.hpp"
#include "model/costs.hpp"
#include "resident/summa_ab.hpp"
#include "resident/summa_c.hpp"

namespace cala::detail {

namespace {

struct Where {
    bool active;
    int h, r, col;
};

Where where(const Plan3D& plan, int rank) {
    const Shape3 g = plan.g;
    if (rank >= g.p * g.q * g.c) return {false, 0, 0, 0};
    return {true, rank / (g.p * g.q), rank % (g.p * g.q) / g.q, rank % g.q};
}

// The user's operand moved into operand x's placement on this rank's layer (layout ll), in
// device memory; replicated operands go to layer 0 and are broadcast along the fibers.
template <class T>
std::unique_ptr<DeviceArray<T>> bring(const Operand3D& x, const BlockCyclic& ll, const Plan3D& plan, const Grid3D& g3,
                                      const Side<T>& user, device::Device& dev) {
    const index_t m = g3.active() ? ll.rows.local_size(g3.row()) : 0, n = g3.active() ? ll.cols.local_size(g3.col()) : 0;
    const Buffer<T> src = to_host(dev, static_cast<const T*>(user.data), user.ld, user.m_loc(), user.n_loc());
    Buffer<T> dst(m * n);
    redistribute_placed(x.redist_op, g3.comm(), placement_of(*user.grid, user.layout), src.data(),
                        std::max<index_t>(user.m_loc(), 1), spread_placement(x.virt, x.spread, plan.g), dst.data(),
                        std::max<index_t>(m, 1), false, T(0));
    if (x.replicated && plan.g.c > 1 && g3.active()) g3.fiber_comm().ibcast(dst.data(), dst.size(), 0).wait();
    auto store = std::make_unique<DeviceArray<T>>(dev, m * n);
    to_device(dev, store->data(), std::max<index_t>(m, 1), dst.data(), m, n);
    return store;
}

// Every layer's partial C (host copy `part` of layer layout cl) reduced over the fibers: local
// column block t to layer t mod c, into the compact storage of plan.c_virt (as summa_3d's).
template <class T>
Buffer<T> reduce_scatter(const Plan3D& plan, const Grid3D& g3, const BlockCyclic& cl, const Buffer<T>& part) {
    const int c = plan.g.c, col = g3.col();
    const index_t m_loc = cl.rows.local_size(g3.row()), ld = std::max<index_t>(m_loc, 1);
    const Dist1D& vcols = plan.c_virt.cols;
    Buffer<T> out(plan.c_virt.rows.local_size(g3.row()) * vcols.local_size(g3.layer() * plan.g.q + col));
    std::vector<Request> reqs;
    for (index_t b = col, t = 0; b < cl.cols.num_blocks(); b += plan.g.q, ++t) {
        const int root = static_cast<int>(t % c);
        const index_t w = cl.cols.block_size(b), g0 = cl.cols.block_start(b);
        const T* send = part.data() + cl.cols.to_local(g0) * ld;
        T* recv = g3.layer() == root ? out.data() + vcols.to_local(g0) * ld : nullptr;
        reqs.push_back(g3.fiber_comm().ireduce_sum(send, recv, m_loc * w, root));
    }
    wait_all(reqs);
    return out;
}

}  // namespace

index_t resident_workspace_3d(const Plan3D& plan, int rank) {
    const Where w = where(plan, rank);
    if (!w.active) return 0;
    const BlockCyclic cl = plan.c_layer(w.h);
    return local_elems(plan.a_layer(w.h), w.r, w.col) + local_elems(plan.b_layer(w.h), w.r, w.col) +
           local_elems(cl, w.r, w.col) + resident_slots(plan.layer_plan(w.h), cl, w.r, w.col);
}

template <class T>
void resident_summa_3d(const Plan3D& plan, const Grid3D& g3, T alpha, const Side<T>& a, const Side<T>& b, T beta,
                       const Side<T>& c, bool nccl, int ordinal) {
    device::Device& dev = *c.dev;
    const int h = std::max(g3.layer(), 0);
    Buffer<T> result;  // this rank's share of the product in the placement of plan.c_virt
    {
        auto a3 = bring(plan.a, plan.a_layer(h), plan, g3, a, dev);
        auto b3 = bring(plan.b, plan.b_layer(h), plan, g3, b, dev);
        if (g3.active()) {
            const Grid2D& lg = g3.layer_grid();
            const GemmPlan lp = plan.layer_plan(h);
            const BlockCyclic cl = plan.c_layer(h);
            const index_t m = cl.rows.local_size(g3.row()), n = cl.cols.local_size(g3.col()), ld = std::max<index_t>(m, 1);
            const DeviceArray<T> part(dev, m * n);
            const auto side = [&](const BlockCyclic& l, T* p) {
                return Side<T>{&lg, l, &dev, p, std::max<index_t>(l.rows.local_size(g3.row()), 1)};
            };
            const Side<T> la = side(lp.a.layout, a3->data()), lb = side(lp.b.layout, b3->data());
            const Side<T> lc = side(cl, part.data());
            switch (plan.variant) {
                case Variant::StationaryA: resident_summa_a(lp, alpha, la, lb, T(0), lc, nccl, ordinal); break;
                case Variant::StationaryB: resident_summa_b(lp, alpha, la, lb, T(0), lc, nccl, ordinal); break;
                default: resident_summa_c(lp, alpha, la, lb, T(0), lc, nccl, ordinal); break;
            }
            a3.reset(), b3.reset();
            result = to_host(dev, static_cast<const T*>(part.data()), ld, m, n);
            if (plan.c_spread == Spread::ColsReduced) result = reduce_scatter(plan, g3, cl, result);
        }
    }
    // Back into C's layout with beta there (C read only where beta != 0).
    const index_t cm = c.m_loc(), cn = c.n_loc(), cld = std::max<index_t>(cm, 1);
    Buffer<T> chost = beta != T(0) ? to_host(dev, static_cast<const T*>(c.data), c.ld, cm, cn) : Buffer<T>(cm * cn);
    const Placement c_src = spread_placement(plan.c_virt, plan.c_spread, plan.g);
    // (the result's local rows are the layer's C's, reduced or not: plan3d.hpp's placements)
    const index_t rld = g3.active() ? std::max<index_t>(plan.c_layer(h).rows.local_size(g3.row()), 1) : 1;
    redistribute_placed(Op::N, g3.comm(), c_src, result.data(), rld, placement_of(*c.grid, c.layout), chost.data(), cld,
                        true, beta);
    to_device(dev, c.data, c.ld, chost.data(), cm, cn);
}

#define CALA_INST(T)                                                                                          \
    template void resident_summa_3d<T>(const Plan3D&, const Grid3D&, T, const Side<T>&, const Side<T>&, T, \
                                       const Side<T>&, bool, int);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::detail

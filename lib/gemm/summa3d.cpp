// 2.5D / 3D SUMMA: the user's operands move once into layered placements (lib/gemm/plan3d.hpp),
// every layer runs the 2D kernel of the variant on its p x q grid, and C comes back to the
// user's layout, with beta applied there.
//
//   P = 8 as 2 x 2 x 2, stationary C:
//   1. A' -> virtual 2 x 4 (k-blocks by layer), B' -> virtual 4 x 2   (redistribute, counted)
//   2. layer h: summa_c on A'(:, K_h), B'(K_h, :) -> partial C_h     (row/column broadcasts)
//   3. fiber (r, c, :): local column block t of C_h reduced to layer t mod 2
//   4. reduced blocks -> user's layout, C := sum + beta·C               (redistribute, counted)

#include "gemm/summa3d.hpp"

#include "core/workspace.hpp"
#include "gemm/summa_common.hpp"
#include "matrix/redistribute_impl.hpp"

namespace cala::detail {

namespace {

// Local storage of `l` for process (row, col) of a layer (or of a virtual grid).
template <class T>
LocalStore<T> allocate(const BlockCyclic& l, int row, int col) {
    const index_t m_loc = l.rows.local_size(row), n_loc = l.cols.local_size(col);
    return {Buffer<T>(m_loc * n_loc), std::max<index_t>(m_loc, 1)};
}

// The user's matrix moved into the placement of operand x (layer-local layout `ll` on this
// rank's layer); replicated operands go to layer 0 and are broadcast along the fibers.
template <class T>
LocalStore<T> bring(const Operand3D& x, const BlockCyclic& ll, const Plan3D& plan, const Grid3D& g3,
                    const MatrixRef<T>& user) {
    LocalStore<T> store;
    if (g3.active()) store = allocate<T>(ll, g3.row(), g3.col());
    redistribute_placed(x.redist_op, g3.comm(), placement_of(user.grid(), user.layout()), user.data(), user.ld(),
                        spread_placement(x.virt, x.spread, plan.g), store.data(), store.ld, false, T(0));
    if (x.replicated && plan.g.c > 1 && g3.active()) g3.fiber_comm().ibcast(store.data(), store.buf.size(), 0).wait();
    return store;
}

// Partial C of every layer reduced over the fibers: local column block t goes to layer t mod c,
// into that rank's compact storage of plan.c_virt (ColsReduced).
template <class T>
LocalStore<T> reduce_scatter(const Plan3D& plan, const Grid3D& g3, const BlockCyclic& cl, const LocalStore<T>& part) {
    const int c = plan.g.c, col = g3.col();
    const index_t m_loc = cl.rows.local_size(g3.row());
    const Dist1D& vcols = plan.c_virt.cols;  // virtual column v = layer·q + col
    LocalStore<T> out = allocate<T>(plan.c_virt, g3.row(), g3.layer() * plan.g.q + col);
    std::vector<Request> reqs;
    const index_t nblocks = cl.cols.num_blocks();
    for (index_t b = col, t = 0; b < nblocks; b += plan.g.q, ++t) {
        const int root = static_cast<int>(t % c);
        const index_t w = cl.cols.block_size(b), g0 = cl.cols.block_start(b);
        const T* send = part.data() + cl.cols.to_local(g0) * part.ld;
        T* recv = g3.layer() == root ? out.data() + vcols.to_local(g0) * out.ld : nullptr;
        reqs.push_back(g3.fiber_comm().ireduce_sum(send, recv, m_loc * w, root));
    }
    wait_all(reqs);
    return out;
}

}  // namespace

template <class T>
void Layered<T>::bring_a(const Plan3D& plan, const Grid3D& g3, const MatrixRef<T>& a) {
    a_ = {};
    a_ = bring(plan.a, plan.a_layer(std::max(g3.layer(), 0)), plan, g3, a);
}

template <class T>
void Layered<T>::bring_b(const Plan3D& plan, const Grid3D& g3, const MatrixRef<T>& b) {
    b_ = {};
    b_ = bring(plan.b, plan.b_layer(std::max(g3.layer(), 0)), plan, g3, b);
}

template <class T>
void Layered<T>::multiply(const Plan3D& plan, const Grid3D& g3, T alpha, T beta, const MatrixRef<T>& c, bool release) {
    const Placement user_c = placement_of(c.grid(), c.layout());
    const Placement c_src = spread_placement(plan.c_virt, plan.c_spread, plan.g);
    LocalStore<T> result;  // this rank's share of the result in the placement c_src
    {
        LocalStore<T> cs;
        if (g3.active()) {
            const int h = g3.layer();
            const Grid2D& lg = g3.layer_grid();
            const GemmPlan lp = plan.layer_plan(h);
            const BlockCyclic cl = plan.c_layer(h);
            cs = allocate<T>(cl, g3.row(), g3.col());
            const MatrixRef<T> la(lg, lp.a.layout, a_.data(), a_.ld), lb(lg, lp.b.layout, b_.data(), b_.ld);
            const MatrixRef<T> lc(lg, cl, cs.data(), cs.ld);
            switch (plan.variant) {
                case Variant::StationaryA: summa_a(lp, alpha, la, lb, T(0), lc); break;
                case Variant::StationaryB: summa_b(lp, alpha, la, lb, T(0), lc); break;
                default: summa_c(lp, alpha, la, lb, T(0), lc); break;
            }
        }
        if (release) a_ = {}, b_ = {};  // one-shot use: the operands go before the reduction
        if (plan.c_spread == Spread::ColsReduced) {
            if (g3.active()) result = reduce_scatter(plan, g3, plan.c_layer(g3.layer()), cs);
        } else {
            result = std::move(cs);
        }
    }
    redistribute_placed(Op::N, g3.comm(), c_src, result.data(), result.ld, user_c, c.data(), c.ld(), true, beta);
}

template <class T>
void summa_3d(const Plan3D& plan, const Grid3D& g3, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta,
              const MatrixRef<T>& c) {
    Layered<T> ops;
    ops.bring_a(plan, g3, a);
    ops.bring_b(plan, g3, b);
    ops.multiply(plan, g3, alpha, beta, c, true);
}

#define CALA_INST(T)                                                                                      \
    template class Layered<T>;                                                                              \
    template void summa_3d<T>(const Plan3D&, const Grid3D&, T, const MatrixRef<T>&, const MatrixRef<T>&, T, \
                              const MatrixRef<T>&);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::detail

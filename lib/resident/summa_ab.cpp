// Resident A- and B-stationary SUMMA: one operand stays in device memory, the other's panels
// travel to it (NCCL, or MPI staged through host slots), and the partial products travel back,
// summed onto the ranks that own C's blocks (ncclReduce, or MPI ireduce staged through host
// slots), which add them into C on the device. The schedules are the MPI path's
// (lib/gemm/summa_a.cpp, summa_b.cpp), so summa_loop_cost counts them; the flops are Device::gemm
// and Device::add.
//
// Stationary A: step over groups of C's block columns (panel_width wide). For block j the owner
// row of Bt's block row j copies its w x k_loc piece into the group's slot and broadcasts it down
// its process column; every rank forms part = alpha·A'·kop(Bt(group, k_c)) (m_loc x w_group)
// into a partial slot (the pieces put together into one w_group x k_loc panel when the group
// has several), and block j's columns of it are summed along the process row onto the column that
// owns C's block j, which sets C(:, j) := part_j + beta·C(:, j).
//
//   1 x 2 grid, C block columns 0..3 (block j on column j mod 2), A' = [A0 | A1] by columns:
//   step j=0: (0,0) forms A0·B(k0, 0), (0,1) forms A1·B(k1, 0); summed onto (0,0)
//   step j=1: the same with B(:, 1); summed onto (0,1)
//
// Stationary B, the transpose: step over groups of C's block rows. For block i the owner column
// of At's block column i broadcasts its k_loc x w piece along its process row (the pieces side by
// side are the group's k_loc x w_group panel as they land); every rank forms the partial in
// transposed form, Q = alpha'·kop(B')·panel (n_loc x w_group, so that each block's share is
// contiguous; alpha' = conj(alpha) when kop is C), and block i's share is summed down the
// process column onto the row that owns C's block i, which sets C(i, :) := kop(Q_i) + beta·C(i, :).
//
// `lookahead` groups of panels are in flight while a group's product runs, and as many groups of
// partial sums as there are partial slots: a slot is written again only once its sum has landed
// and been added.

#include "resident/summa_ab.hpp"

#include <algorithm>

#include "core/workspace.hpp"
#include "resident/transport.hpp"

namespace cala::detail {

namespace {

// The looped dimension of the variant, its groups, widest group and slots.
struct Loop {
    const Dist1D* d;
    std::vector<std::pair<index_t, index_t>> groups;
    index_t ng, wmax, slots;
};

Loop loop_of(const GemmPlan& plan, const Dist1D& d) {
    Loop l{&d, panel_groups(d, plan.panel_width), 0, 0, 0};
    l.ng = static_cast<index_t>(l.groups.size());
    l.wmax = l.ng > 0 ? max_group_width(d, l.groups) : 0;
    l.slots = std::min<index_t>(plan.lookahead + 1, l.ng);
    return l;
}

}  // namespace

index_t resident_slots_ab(const GemmPlan& plan, const BlockCyclic& c, int row, int col) {
    const bool a = plan.variant == Variant::StationaryA;
    const Loop l = loop_of(plan, a ? c.cols : c.rows);
    if (l.ng == 0) return 0;
    const index_t k_loc = a ? plan.a.layout.cols.local_size(col) : plan.b.layout.rows.local_size(row);
    const index_t stay_loc = a ? c.rows.local_size(row) : c.cols.local_size(col);  // m_loc (A), n_loc (B)
    const bool bcast = (a ? c.p() : c.q()) > 1 && k_loc > 0, reduce = (a ? c.q() : c.p()) > 1 && stay_loc > 0;
    return (bcast ? l.slots * k_loc * l.wmax : 0) + (a && bcast && multi_block(l.groups) ? k_loc * l.wmax : 0) +
           (reduce ? l.slots * stay_loc * l.wmax : 0);
}

template <class T>
void resident_summa_a(const GemmPlan& plan, T alpha, const Side<T>& a, const Side<T>& bt, T beta, const Side<T>& c,
                      bool nccl, int ordinal) {
    device::Device& dev = *c.dev;
    const Grid2D& grid = *c.grid;
    const int p = grid.p(), q = grid.q(), r = grid.row(), cc = grid.col();
    const Op kop = plan.b.kernel_op;
    const index_t m_loc = c.m_loc(), k_loc = a.n_loc();
    const Dist1D& nd = c.layout.cols;   // C's block columns: the looped dimension
    const Dist1D& nr = bt.layout.rows;  // Bt's rows, blocked alike
    const Loop l = loop_of(plan, nd);
    if (l.ng == 0) return;
    const auto& groups = l.groups;
    const index_t wmax = l.wmax, slots = l.slots;
    const device::Scalar s = device::scalar_of<T>();
    const T zero(0);
    const bool bcast_b = p > 1 && k_loc > 0, reduce = q > 1 && m_loc > 0;
    DeviceArray<T> bdev(dev, bcast_b ? slots * k_loc * wmax : 0), pdev(dev, reduce ? slots * m_loc * wmax : 0);
    DeviceArray<T> bpanel(dev, bcast_b && multi_block(groups) ? k_loc * wmax : 0);
    Buffer<T> bhost(!nccl && bcast_b ? slots * k_loc * wmax : 0), phost(!nccl && reduce ? slots * m_loc * wmax : 0);
    PanelMover<T> mover(dev, grid, nccl, ordinal);

    auto post = [&](index_t g) {
        const index_t sl = g % slots, n0 = group_span(nd, groups[g]).first;
        std::vector<Piece<T>> pieces;
        for (index_t j = groups[g].first; bcast_b && j < groups[g].second; ++j) {
            const index_t off = nd.block_start(j) - n0, w = nd.block_size(j);
            T* dst = bdev.data() + sl * k_loc * wmax + off * k_loc;  // w x k_loc, ld w
            const int root = nr.block_owner(j);
            if (r == root)
                dev.copy_from_peer(copy2d(dst, w, static_cast<const T*>(bt.data + nr.to_local(nd.block_start(j))), bt.ld,
                                          w, k_loc), dev);
            pieces.push_back({dst, nccl ? nullptr : bhost.data() + sl * k_loc * wmax + off * k_loc, w * k_loc, root, false});
        }
        mover.post(std::move(pieces));
    };
    // Group g's sums have landed: C's block columns owned here := part + beta·C.
    auto finish = [&](index_t g) {
        mover.wait_sum_front();
        const index_t sl = g % slots, n0 = group_span(nd, groups[g]).first;
        for (index_t j = groups[g].first; j < groups[g].second; ++j) {
            if (nd.block_owner(j) != cc) continue;
            const index_t off = nd.block_start(j) - n0;
            dev.add(s, Op::N, m_loc, nd.block_size(j), pdev.data() + sl * m_loc * wmax + off * m_loc, m_loc, &beta,
                    c.data + nd.to_local(nd.block_start(j)) * c.ld, c.ld);
        }
    };

    for (index_t g = 0; g < std::min<index_t>(plan.lookahead, l.ng); ++g) post(g);
    for (index_t g = 0; g < l.ng; ++g) {
        if (g + plan.lookahead < l.ng) post(g + plan.lookahead);
        mover.wait_front();
        if (m_loc == 0) continue;  // the whole process row: no product, no sum
        const index_t sl = g % slots;
        const auto [n0, n1] = group_span(nd, groups[g]);
        const index_t wg = n1 - n0;
        const T* bp = bt.data + nr.to_local(n0);
        index_t ldb = bt.ld;
        if (p > 1) {
            const T* slot = bdev.data() + sl * k_loc * wmax;
            bp = slot, ldb = wg;
            if (k_loc > 0 && groups[g].second - groups[g].first > 1) {  // the pieces into one wg x k_loc panel
                for (index_t j = groups[g].first; j < groups[g].second; ++j) {
                    const index_t off = nd.block_start(j) - n0, w = nd.block_size(j);
                    dev.copy_from_peer(copy2d(bpanel.data() + off, wg, slot + off * k_loc, w, w, k_loc), dev);
                }
                bp = bpanel.data();
            }
        }
        mover.poll();
        if (q == 1) {  // every column of C is here: no sum
            dev.gemm(s, Op::N, kop, m_loc, wg, k_loc, &alpha, a.data, a.ld, bp, ldb, &beta, c.data + n0 * c.ld, c.ld);
        } else {
            if (static_cast<index_t>(mover.sums_pending()) == slots) finish(g - slots);  // frees slot sl
            T* part = pdev.data() + sl * m_loc * wmax;
            // k_loc = 0 (no column of A' here): part := 0, nothing read
            dev.gemm(s, Op::N, kop, m_loc, wg, k_loc, &alpha, k_loc > 0 ? a.data : part, k_loc > 0 ? a.ld : m_loc,
                     k_loc > 0 ? bp : part, k_loc > 0 ? ldb : std::max(wg, m_loc), &zero, part, m_loc);
            std::vector<Piece<T>> sums;
            for (index_t j = groups[g].first; j < groups[g].second; ++j) {
                const index_t off = (nd.block_start(j) - n0) * m_loc;
                sums.push_back({part + off, nccl ? nullptr : phost.data() + sl * m_loc * wmax + off,
                                m_loc * nd.block_size(j), nd.block_owner(j), true});
            }
            mover.post_sum(std::move(sums));
        }
        mover.poll();
    }
    if (reduce)
        for (index_t g = l.ng - static_cast<index_t>(mover.sums_pending()); g < l.ng; ++g) finish(g);
    dev.synchronize();
}

template <class T>
void resident_summa_b(const GemmPlan& plan, T alpha, const Side<T>& at, const Side<T>& b, T beta, const Side<T>& c,
                      bool nccl, int ordinal) {
    device::Device& dev = *c.dev;
    const Grid2D& grid = *c.grid;
    const int p = grid.p(), q = grid.q(), r = grid.row(), cc = grid.col();
    const Op kop = plan.a.kernel_op;  // op(A) = kop(At), T or C
    const index_t n_loc = c.n_loc(), k_loc = b.m_loc();
    const Dist1D& md = c.layout.rows;   // C's block rows: the looped dimension
    const Dist1D& mc = at.layout.cols;  // At's columns, blocked alike
    const Loop l = loop_of(plan, md);
    if (l.ng == 0) return;
    const auto& groups = l.groups;
    const index_t wmax = l.wmax, slots = l.slots;
    const device::Scalar s = device::scalar_of<T>();
    const T zero(0);
    const T alpha_q = conj_if(alpha, kop == Op::C);  // kop(alpha·X) = alpha'·kop(X)
    const bool bcast_a = q > 1 && k_loc > 0, reduce = p > 1 && n_loc > 0;
    DeviceArray<T> adev(dev, bcast_a ? slots * k_loc * wmax : 0), qdev(dev, reduce ? slots * n_loc * wmax : 0);
    Buffer<T> ahost(!nccl && bcast_a ? slots * k_loc * wmax : 0), qhost(!nccl && reduce ? slots * n_loc * wmax : 0);
    PanelMover<T> mover(dev, grid, nccl, ordinal);

    auto post = [&](index_t g) {
        const index_t sl = g % slots, m0 = group_span(md, groups[g]).first;
        std::vector<Piece<T>> pieces;
        for (index_t i = groups[g].first; bcast_a && i < groups[g].second; ++i) {
            const index_t off = (md.block_start(i) - m0) * k_loc, w = md.block_size(i);
            T* dst = adev.data() + sl * k_loc * wmax + off;  // k_loc x w, ld k_loc
            const int root = mc.block_owner(i);
            if (cc == root)
                dev.copy_from_peer(copy2d(dst, k_loc, static_cast<const T*>(at.data + mc.to_local(md.block_start(i)) * at.ld),
                                          at.ld, k_loc, w), dev);
            pieces.push_back({dst, nccl ? nullptr : ahost.data() + sl * k_loc * wmax + off, k_loc * w, root, true});
        }
        mover.post(std::move(pieces));
    };
    // Group g's sums have landed: C's block rows owned here := kop(Q_i) + beta·C.
    auto finish = [&](index_t g) {
        mover.wait_sum_front();
        const index_t sl = g % slots, m0 = group_span(md, groups[g]).first;
        for (index_t i = groups[g].first; i < groups[g].second; ++i) {
            if (md.block_owner(i) != r) continue;
            const index_t off = md.block_start(i) - m0;
            dev.add(s, kop, md.block_size(i), n_loc, qdev.data() + sl * n_loc * wmax + off * n_loc, n_loc, &beta,
                    c.data + md.to_local(md.block_start(i)), c.ld);
        }
    };

    for (index_t g = 0; g < std::min<index_t>(plan.lookahead, l.ng); ++g) post(g);
    for (index_t g = 0; g < l.ng; ++g) {
        if (g + plan.lookahead < l.ng) post(g + plan.lookahead);
        mover.wait_front();
        if (n_loc == 0) continue;  // the whole process column: no product, no sum
        const index_t sl = g % slots;
        const auto [m0, m1] = group_span(md, groups[g]);
        const index_t wg = m1 - m0;
        const T* ap = q > 1 ? adev.data() + sl * k_loc * wmax : at.data + mc.to_local(m0) * at.ld;
        const index_t lda = q > 1 ? std::max<index_t>(k_loc, 1) : at.ld;
        mover.poll();
        if (p == 1) {  // every row of C is here: no sum
            dev.gemm(s, kop, Op::N, wg, n_loc, k_loc, &alpha, ap, lda, b.data, b.ld, &beta, c.data + m0, c.ld);
        } else {
            if (static_cast<index_t>(mover.sums_pending()) == slots) finish(g - slots);  // frees slot sl
            T* qg = qdev.data() + sl * n_loc * wmax;
            // k_loc = 0 (no row of B' here): Q := 0, nothing read
            dev.gemm(s, kop, Op::N, n_loc, wg, k_loc, &alpha_q, k_loc > 0 ? b.data : qg, k_loc > 0 ? b.ld : 1,
                     k_loc > 0 ? ap : qg, lda, &zero, qg, n_loc);
            std::vector<Piece<T>> sums;
            for (index_t i = groups[g].first; i < groups[g].second; ++i) {
                const index_t off = (md.block_start(i) - m0) * n_loc;
                sums.push_back({qg + off, nccl ? nullptr : qhost.data() + sl * n_loc * wmax + off,
                                n_loc * md.block_size(i), md.block_owner(i), false});
            }
            mover.post_sum(std::move(sums));
        }
        mover.poll();
    }
    if (reduce)
        for (index_t g = l.ng - static_cast<index_t>(mover.sums_pending()); g < l.ng; ++g) finish(g);
    dev.synchronize();
}

#define CALA_INST(T)                                                                                        \
    template void resident_summa_a<T>(const GemmPlan&, T, const Side<T>&, const Side<T>&, T, const Side<T>&, \
                                      bool, int);                                                           \
    template void resident_summa_b<T>(const GemmPlan&, T, const Side<T>&, const Side<T>&, T, const Side<T>&, \
                                      bool, int);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::detail

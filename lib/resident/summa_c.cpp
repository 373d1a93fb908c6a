// Resident stationary-C SUMMA: C stays in device memory; the panels of A' and B' along k travel
// from device memory (NCCL, or MPI staged through host slots) and the device multiplies them.
//
// Step over groups of k-blocks (panel_width wide), `lookahead` groups in flight, as the MPI
// path's panel loop (lib/gemm/summa_c.cpp). For each k-block l of a group, the owner column of
// A''s block column l copies its m_loc x w piece into the group's device slot and broadcasts it
// along its process row; the owner row of B''s block row l copies its w x n_loc piece into the
// slot and broadcasts it along its process column. Pieces of A' side by side are the group's
// panel as they land (column-major); B''s pieces are put together into one w_group x n_loc panel
// on the device when the group has several (no transpose on the device). Then one device gemm
// per group: C += A'(:, group) · B'(group, :).
//
//   2 x 2 grid, k-blocks 0..3, A' k-block l on column l mod 2, B' k-block l on row l mod 2:
//   step l=0: (r,0) -> (r,1) A'(r-rows, 0);  (0,c) -> (1,c) B'(0, c-cols)
//   step l=1: (r,1) -> (r,0) A'(r-rows, 1);  (1,c) -> (0,c) B'(1, c-cols)
// A 1 x q grid reads B' from its own memory, a p x 1 grid A': nothing travels along that side.

#include "resident/summa_c.hpp"

#include <algorithm>

#include "core/workspace.hpp"
#include "resident/summa_ab.hpp"
#include "resident/transport.hpp"

namespace cala::detail {

index_t resident_slots(const GemmPlan& plan, const BlockCyclic& c, int row, int col) {
    if (plan.variant != Variant::StationaryC) return resident_slots_ab(plan, c, row, col);
    const Dist1D& ka = plan.a.layout.cols;
    const auto groups = panel_groups(ka, plan.panel_width);
    const index_t ng = static_cast<index_t>(groups.size());
    if (ng == 0) return 0;
    const index_t wmax = max_group_width(ka, groups);
    const index_t slots = std::min<index_t>(plan.lookahead + 1, ng);
    const index_t m_loc = c.rows.local_size(row), n_loc = c.cols.local_size(col);
    const bool bcast_a = c.q() > 1 && m_loc > 0, bcast_b = c.p() > 1 && n_loc > 0;
    return (bcast_a ? slots * m_loc * wmax : 0) + (bcast_b ? slots * n_loc * wmax : 0) +
           (bcast_b && multi_block(groups) ? n_loc * wmax : 0);
}

template <class T>
void triangle_update(device::Device& dev, const TriangleUpdate& tu, const Side<T>& c, index_t k, T alpha,
                     const T* ap, index_t lda, const T* bp, index_t ldb, bool first) {
    const device::Scalar s = device::scalar_of<T>();
    const bool lower = tu.uplo == Uplo::Lower;
    const T one(1), zero(0);
    const real_t<T> one_r(1);
    const T beta = !first ? one : tu.symmetric ? *static_cast<const T*>(tu.beta) : T(*static_cast<const real_t<T>*>(tu.beta));
    const T* a0 = k > 0 ? ap : c.data;  // k = 0: nothing is read (BLAS semantics)
    const index_t lda0 = k > 0 ? lda : c.ld;
    for (const TrianglePiece& t : triangle_pieces(tu.uplo, c.layout, c.grid->row(), c.grid->col())) {
        // the whole rows of the triangle off the diagonal tile
        const index_t r0 = lower ? t.band_end : t.row_begin, r1 = lower ? t.row_end : t.band_begin;
        if (r1 > r0)
            dev.gemm(s, Op::N, Op::N, r1 - r0, t.cols, k, k > 0 ? &alpha : &zero, k > 0 ? a0 + r0 : a0, lda0,
                     k > 0 ? bp + t.col * ldb : c.data, k > 0 ? ldb : 1, &beta, c.data + r0 + t.col * c.ld, c.ld);
        if (t.band_end <= t.band_begin) continue;
        // the diagonal tile: its triangle only
        const T* ad = k > 0 ? a0 + t.band_begin : a0;
        T* cd = c.data + t.band_begin + t.col * c.ld;
        if (tu.symmetric)
            dev.syrk(s, lower, Op::N, t.cols, k, k > 0 ? &alpha : &one, ad, lda0, first ? tu.beta : &one, cd, c.ld);
        else
            dev.herk(s, lower, Op::N, t.cols, k, k > 0 ? tu.alpha : &one_r, ad, lda0, first ? tu.beta : &one_r, cd, c.ld);
    }
}

template <class T>
void resident_summa_c(const GemmPlan& plan, T alpha, const Side<T>& a, const Side<T>& b, T beta, const Side<T>& c,
                      bool nccl, int ordinal, const TriangleUpdate* tri) {
    device::Device& dev = *c.dev;
    const Grid2D& grid = *c.grid;
    const int p = grid.p(), q = grid.q(), rr = grid.row(), cc = grid.col();
    const index_t m_loc = c.m_loc(), n_loc = c.n_loc();
    const Dist1D& ka = a.layout.cols;  // k blocked alike in A' (over q) and B' (over p)
    const Dist1D& kb = b.layout.rows;
    const auto groups = panel_groups(ka, plan.panel_width);
    const index_t ng = static_cast<index_t>(groups.size());
    const device::Scalar s = device::scalar_of<T>();
    const T one(1);
    if (ng == 0) {  // k == 0: C := beta·C
        if (tri) triangle_update(dev, *tri, c, 0, alpha, c.data, c.ld, c.data, c.ld, true);
        else if (m_loc > 0 && n_loc > 0)
            dev.gemm(s, Op::N, Op::N, m_loc, n_loc, 0, &alpha, c.data, c.ld, c.data, c.ld, &beta, c.data, c.ld);
        dev.synchronize();
        return;
    }
    const index_t wmax = max_group_width(ka, groups);
    const index_t slots = std::min<index_t>(plan.lookahead + 1, ng);
    const bool bcast_a = q > 1 && m_loc > 0, bcast_b = p > 1 && n_loc > 0;
    DeviceArray<T> adev(dev, bcast_a ? slots * m_loc * wmax : 0), bdev(dev, bcast_b ? slots * n_loc * wmax : 0);
    DeviceArray<T> bpanel(dev, bcast_b && multi_block(groups) ? n_loc * wmax : 0);
    // Host slots of the staged transport (NCCL moves device memory only).
    Buffer<T> ahost(!nccl && bcast_a ? slots * m_loc * wmax : 0), bhost(!nccl && bcast_b ? slots * n_loc * wmax : 0);
    PanelMover<T> mover(dev, grid, nccl, ordinal);

    auto post = [&](index_t g) {
        const index_t sl = g % slots;
        const index_t k0 = group_span(ka, groups[g]).first;
        std::vector<Piece<T>> pieces;
        for (index_t l = groups[g].first; l < groups[g].second; ++l) {
            const index_t off = ka.block_start(l) - k0, w = ka.block_size(l);
            if (bcast_a) {
                const int root = ka.block_owner(l);
                T* dst = adev.data() + sl * m_loc * wmax + off * m_loc;
                if (cc == root)
                    dev.copy_from_peer(copy2d(dst, m_loc, static_cast<const T*>(a.data + ka.to_local(ka.block_start(l)) * a.ld),
                                              a.ld, m_loc, w), dev);
                pieces.push_back({dst, nccl ? nullptr : ahost.data() + sl * m_loc * wmax + off * m_loc, m_loc * w, root, true});
            }
            if (bcast_b) {
                const int root = kb.block_owner(l);
                T* dst = bdev.data() + sl * n_loc * wmax + off * n_loc;  // w x n_loc, ld w
                if (rr == root)
                    dev.copy_from_peer(copy2d(dst, w, static_cast<const T*>(b.data + kb.to_local(kb.block_start(l))), b.ld, w,
                                              n_loc), dev);
                pieces.push_back({dst, nccl ? nullptr : bhost.data() + sl * n_loc * wmax + off * n_loc, w * n_loc, root, false});
            }
        }
        mover.post(std::move(pieces));
    };

    for (index_t g = 0; g < std::min<index_t>(plan.lookahead, ng); ++g) post(g);
    for (index_t g = 0; g < ng; ++g) {
        if (g + plan.lookahead < ng) post(g + plan.lookahead);
        mover.wait_front();
        if (m_loc == 0 || n_loc == 0) continue;
        const index_t sl = g % slots;
        const auto [k0, k1] = group_span(ka, groups[g]);
        const index_t wg = k1 - k0;
        const T* ap = q > 1 ? adev.data() + sl * m_loc * wmax : a.data + ka.to_local(k0) * a.ld;
        const index_t lda = q > 1 ? m_loc : a.ld;
        const T* bp = b.data + kb.to_local(k0);
        index_t ldb = b.ld;
        if (p > 1) {
            const T* slot = bdev.data() + sl * n_loc * wmax;
            if (groups[g].second - groups[g].first == 1) {
                bp = slot, ldb = wg;
            } else {  // the pieces (w x n_loc each, ld w) into one wg x n_loc panel
                for (index_t l = groups[g].first; l < groups[g].second; ++l) {
                    const index_t off = ka.block_start(l) - k0, w = ka.block_size(l);
                    dev.copy_from_peer(copy2d(bpanel.data() + off, wg, slot + off * n_loc, w, w, n_loc), dev);
                }
                bp = bpanel.data(), ldb = wg;
            }
        }
        mover.poll();
        if (tri) triangle_update(dev, *tri, c, wg, alpha, ap, lda, bp, ldb, g == 0);
        else dev.gemm(s, Op::N, Op::N, m_loc, n_loc, wg, &alpha, ap, lda, bp, ldb, g == 0 ? &beta : &one, c.data, c.ld);
        mover.poll();
    }
    dev.synchronize();
}

#define CALA_INST(T)                                                                                       \
    template void triangle_update<T>(device::Device&, const TriangleUpdate&, const Side<T>&, index_t, T,       \
                                     const T*, index_t, const T*, index_t, bool);                              \
    template void resident_summa_c<T>(const GemmPlan&, T, const Side<T>&, const Side<T>&, T, const Side<T>&, \
                                      bool, int, const TriangleUpdate*);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::detail

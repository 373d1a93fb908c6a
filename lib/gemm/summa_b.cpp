// Stationary-B SUMMA: B' stays; panels of At travel along process rows, partial C is reduced
// along process columns.
//
// Step over groups of C's row blocks. For block i of the group, the owner column of At's column
// block i broadcasts At(k_r, i) (k_loc x w) along its process row; every rank forms the partial
// product in transposed form, Q = kop(alpha·op(A)(group, k_r)·B'(k_r, cols_c)) (n_loc x w, so
// each block's share is contiguous), and the ranks of a process column reduce block i's share
// to the row that owns C's block i, which sets C(i, :) := kop(Q_i) + beta·C(i, :).
//
//   2 x 1 grid, C row blocks 0..3 (block i on row i mod 2), B' = [B0; B1] by rows:
//   step i=0: (0,0) forms A(0, k0)·B0, (1,0) forms A(0, k1)·B1; reduce to (0,0)
//   step i=1: same with A(1, :); reduce to (1,0)

#include "core/workspace.hpp"
#include "gemm/summa_common.hpp"
#include "matrix/local_ptr.hpp"

namespace cala::detail {

template <class T>
void summa_b(const GemmPlan& plan, T alpha, const MatrixRef<T>& at, const MatrixRef<T>& b, T beta,
             const MatrixRef<T>& c) {
    const Grid2D& grid = c.grid();
    const int p = grid.p(), q = grid.q(), r = grid.row(), cc = grid.col();
    const Op kop = plan.a.kernel_op;  // op(A) = kop(At), T or C
    const index_t n_loc = c.n_loc(), k_loc = b.m_loc();
    const Dist1D& md = c.layout().rows;   // C's row blocks: the looped dimension
    const Dist1D& mc = at.layout().cols;  // At's columns, blocked alike
    const auto groups = panel_groups(md, plan.panel_width);
    const index_t ng = static_cast<index_t>(groups.size());
    if (ng == 0) return;
    const index_t wmax = max_group_width(md, groups);
    const index_t slots = std::min<index_t>(plan.lookahead + 1, ng);
    const bool bcast_a = q > 1 && k_loc > 0, reduce = p > 1 && n_loc > 0;
    Buffer<T> abuf(bcast_a ? slots * k_loc * wmax : 0), qbuf(reduce ? slots * n_loc * wmax : 0);
    InFlight fl;
    if (plan.on_devices) fl.devices = &plan.devices;
    auto& reds = fl.reds;
    // kop(alpha·X) = alpha'·kop(X): the conjugate of alpha when kop is C.
    const T alpha_q = conj_if(alpha, kop == Op::C);

    auto post = [&](index_t g) {
        const index_t s = g % slots;
        const auto [m0, m1] = group_span(md, groups[g]);
        std::vector<Request> reqs;
        for (index_t i = groups[g].first; bcast_a && i < groups[g].second; ++i) {
            const index_t off = md.block_start(i) - m0, w = md.block_size(i);
            T* dst = abuf.data() + s * k_loc * wmax + off * k_loc;
            const int root = mc.block_owner(i);
            if (cc == root)
                kernels::copy(Op::N, k_loc, w, local_ptr(at, 0, mc.to_local(md.block_start(i))), at.ld(), dst, k_loc);
            reqs.push_back(grid.row_comm().ibcast(dst, k_loc * w, root));
        }
        fl.steps.push_back(std::move(reqs));
    };
    auto finish = [&](index_t g) {
        wait_all(reds.front());
        reds.pop_front();
        const index_t s = g % slots;
        const auto [m0, m1] = group_span(md, groups[g]);
        for (index_t i = groups[g].first; i < groups[g].second; ++i) {
            if (md.block_owner(i) != r) continue;
            const index_t off = md.block_start(i) - m0, w = md.block_size(i);
            const T* qi = qbuf.data() + s * n_loc * wmax + off * n_loc;  // n_loc x w
            T* ci = local_ptr(c, md.to_local(md.block_start(i)), 0);
            kernels::add(kop, w, n_loc, qi, n_loc, beta, ci, c.ld());  // C(i, :) := kop(Q_i) + beta·C(i, :)
        }
    };

    for (index_t g = 0; g < std::min<index_t>(plan.lookahead, ng); ++g) post(g);
    for (index_t g = 0; g < ng; ++g) {
        if (g + plan.lookahead < ng) post(g + plan.lookahead);
        wait_all(fl.steps.front());
        fl.steps.pop_front();
        const index_t s = g % slots;
        const auto [m0, m1] = group_span(md, groups[g]);
        const index_t w = m1 - m0;
        const T* ap = q > 1 ? abuf.data() + s * k_loc * wmax : local_ptr(at, 0, mc.to_local(m0));
        const index_t lda = q > 1 ? std::max<index_t>(k_loc, 1) : at.ld();
        if (p == 1) {  // no reduction: C(group, :) := alpha·kop(At panel)·B' + beta·C
            gemm_with_progress(fl, kop, Op::N, w, n_loc, k_loc, alpha, ap, lda, b.data(), b.ld(), beta,
                               local_ptr(c, md.to_local(m0), 0), c.ld());
            continue;
        }
        if (reduce) {
            if (static_cast<index_t>(reds.size()) == slots) finish(g - slots);
            T* qg = qbuf.data() + s * n_loc * wmax;
            gemm_with_progress(fl, kop, Op::N, n_loc, w, k_loc, alpha_q, b.data(), b.ld(), ap, lda, T(0), qg, n_loc);
            std::vector<Request> reqs;
            for (index_t i = groups[g].first; i < groups[g].second; ++i) {
                T* chunk = qg + (md.block_start(i) - m0) * n_loc;
                reqs.push_back(grid.col_comm().ireduce_sum(chunk, chunk, n_loc * md.block_size(i), md.block_owner(i)));
            }
            reds.push_back(std::move(reqs));
        }
    }
    if (reduce) {
        for (index_t g = ng - static_cast<index_t>(reds.size()); g < ng; ++g) finish(g);
    }
}

#define CALA_INST(T)                                                                                   \
    template void summa_b<T>(const GemmPlan&, T, const MatrixRef<T>&, const MatrixRef<T>&, T,           \
                             const MatrixRef<T>&);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::detail

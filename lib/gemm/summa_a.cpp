// Stationary-A SUMMA: A' stays; panels of Bt travel down process columns, partial C is reduced
// along process rows.
//
// Step over groups of C's column blocks. For block j of the group, the owner row of Bt's row
// block j broadcasts kop(Bt(j, k_c))ᵀ = op(B)(k_c, j) (k_loc x w) along its process column;
// every rank forms the partial alpha·A'(rows_r, k_c)·op(B)(k_c, group) and the ranks of a process
// row reduce block j's columns to the column that owns C's block j, which adds beta·C.
//
//   1 x 2 grid, C column blocks 0..3 (block j on column j mod 2), A' = [A0 | A1] by columns:
//   step j=0: (0,0) forms A0·B(k0, 0), (0,1) forms A1·B(k1, 0); reduce to (0,0)
//   step j=1: same with B(:, 1); reduce to (0,1)

#include "core/workspace.hpp"
#include "gemm/summa_common.hpp"
#include "matrix/local_ptr.hpp"

namespace cala::detail {

template <class T>
void summa_a(const GemmPlan& plan, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& bt, T beta,
             const MatrixRef<T>& c) {
    const Grid2D& grid = c.grid();
    const int p = grid.p(), q = grid.q(), r = grid.row(), cc = grid.col();
    const Op kop = plan.b.kernel_op;
    const index_t m_loc = c.m_loc(), k_loc = a.n_loc();
    const Dist1D& nd = c.layout().cols;    // C's column blocks: the looped dimension
    const Dist1D& nr = bt.layout().rows;   // Bt's rows, blocked alike
    const auto groups = panel_groups(nd, plan.panel_width);
    const index_t ng = static_cast<index_t>(groups.size());
    if (ng == 0) return;
    const index_t wmax = max_group_width(nd, groups);
    const index_t slots = std::min<index_t>(plan.lookahead + 1, ng);
    const bool bcast_b = p > 1 && k_loc > 0, reduce = q > 1 && m_loc > 0;
    Buffer<T> bbuf(bcast_b ? slots * k_loc * wmax : 0), pbuf(reduce ? slots * m_loc * wmax : 0);
    InFlight fl;
    if (plan.on_devices) fl.devices = &plan.devices;
    auto& reds = fl.reds;

    auto post = [&](index_t g) {
        const index_t s = g % slots;
        const auto [n0, n1] = group_span(nd, groups[g]);
        std::vector<Request> reqs;
        for (index_t j = groups[g].first; bcast_b && j < groups[g].second; ++j) {
            const index_t off = nd.block_start(j) - n0, w = nd.block_size(j);
            T* dst = bbuf.data() + s * k_loc * wmax + off * k_loc;  // op(B)(k_c, j), k_loc x w
            const int root = nr.block_owner(j);
            if (r == root)
                kernels::copy(kop, w, k_loc, local_ptr(bt, nr.to_local(nd.block_start(j)), 0), bt.ld(), dst, k_loc);
            reqs.push_back(grid.col_comm().ibcast(dst, k_loc * w, root));
        }
        fl.steps.push_back(std::move(reqs));
    };
    // C's block columns of group g := reduced partial + beta·C, on the owning column.
    auto finish = [&](index_t g) {
        wait_all(reds.front());
        reds.pop_front();
        const index_t s = g % slots;
        const auto [n0, n1] = group_span(nd, groups[g]);
        for (index_t j = groups[g].first; j < groups[g].second; ++j) {
            if (nd.block_owner(j) != cc) continue;
            const index_t off = nd.block_start(j) - n0, w = nd.block_size(j);
            kernels::add(Op::N, m_loc, w, pbuf.data() + s * m_loc * wmax + off * m_loc, m_loc, beta,
                         local_ptr(c, 0, nd.to_local(nd.block_start(j))), c.ld());
        }
    };

    for (index_t g = 0; g < std::min<index_t>(plan.lookahead, ng); ++g) post(g);
    for (index_t g = 0; g < ng; ++g) {
        if (g + plan.lookahead < ng) post(g + plan.lookahead);
        wait_all(fl.steps.front());
        fl.steps.pop_front();
        const index_t s = g % slots;
        const auto [n0, n1] = group_span(nd, groups[g]);
        const index_t w = n1 - n0;
        const T* bp = p > 1 ? bbuf.data() + s * k_loc * wmax : local_ptr(bt, nr.to_local(n0), 0);
        const index_t ldb = p > 1 ? std::max<index_t>(k_loc, 1) : bt.ld();
        const Op opb = p > 1 ? Op::N : kop;
        if (q == 1) {  // no reduction: the group's columns of C are all local
            gemm_with_progress(fl, Op::N, opb, m_loc, w, k_loc, alpha, a.data(), a.ld(), bp, ldb, beta,
                               local_ptr(c, 0, nd.to_local(n0)), c.ld());
            continue;
        }
        if (reduce) {
            if (static_cast<index_t>(reds.size()) == slots) finish(g - slots);  // frees slot s
            T* part = pbuf.data() + s * m_loc * wmax;
            gemm_with_progress(fl, Op::N, opb, m_loc, w, k_loc, alpha, a.data(), a.ld(), bp, ldb, T(0), part, m_loc);
            std::vector<Request> reqs;
            for (index_t j = groups[g].first; j < groups[g].second; ++j) {
                T* chunk = part + (nd.block_start(j) - n0) * m_loc;
                reqs.push_back(grid.row_comm().ireduce_sum(chunk, chunk, m_loc * nd.block_size(j), nd.block_owner(j)));
            }
            reds.push_back(std::move(reqs));
        }
    }
    if (reduce) {
        for (index_t g = ng - static_cast<index_t>(reds.size()); g < ng; ++g) finish(g);
    }
}

#define CALA_INST(T)                                                                                   \
    template void summa_a<T>(const GemmPlan&, T, const MatrixRef<T>&, const MatrixRef<T>&, T,           \
                             const MatrixRef<T>&);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::detail

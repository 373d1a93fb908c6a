// cala::potrf's engine with delayed trailing updates (CholGeom::delay = d > 1, 2D only): the
// panels of a group of d steps are stacked side by side (Group), and the trailing update of the
// group is one herk/GEMM of depth d·nb per local column block instead of d of depth nb. The
// messages are those of every step (panel.cpp, unchanged); only the order of the local updates
// and the buffers differ.
//
// Step l of group [l0, l1] on a rank (lookahead 1):
//   wait for panel l, copy it into the group (its buffers freed)
//   column l+1, if mine: the update of the last group that is still pending on it, then the
//     group's panels l0..l on it at once (left-looking: the critical path is one column)
//   panel l+1: factored, solved and broadcast
//   l == l1: the update of my columns j > l+1 with all d panels: OpenMP tasks (threads), or a
//     list of pending columns that this thread works off during the next group, a share per
//     step as one staircase of wide GEMMs (node_update.hpp), MPI polled between them, and the
//     rest before the next group's list.
//
// Worked example, d = 2, tiles 0..5 on 1 x 2 (columns 0, 2, 4 on rank 0; 1, 3, 5 on rank 1):
//   l = 0: rank 1 updates column 1 with panel 0 and factors panel 1
//   l = 1: rank 0 updates column 2 with panels 0-1 (depth 2·nb), factors panel 2; then its
//          column 4 with panels 0-1 is pending; rank 1 has columns 3, 5 pending
//   l = 2: rank 1 runs pending column 3, then column 3 with panel 2, factors panel 3 ...

#include "cholesky/chol_engine.hpp"

#include <omp.h>

#include <algorithm>

#include "cholesky/node_update.hpp"
#include "core/trace.hpp"
#include "kernels/blas.hpp"

namespace cala::detail {

using trace::Kind;
using trace::Span;

template <class T>
void CholEngine<T>::stack_panel(Panel& pn) {
    const index_t l = pn.l, l0 = g_.group_first(l);
    Group& gr = grp_[(l / g_.delay) % 2];
    if (l == l0) {
        if (threads_ > 1) {
            char* gs = &grpsent_[(l / g_.delay) % 2];  // every task reading the slot's last group
#pragma omp taskwait depend(inout : gs[0])
        }
        gr = Group{};  // (frees before allocating: the model counts two groups at a time)
        gr.l0 = l0;
        const index_t l1 = g_.group_last(l);
        gr.off.push_back(0);
        for (index_t x = l0; x <= l1; ++x) gr.off.push_back(gr.off.back() + g_.size(x));
        const auto rows = g_.panel_rows(l0, r_, -1);
        const auto cols = my_columns(l0);
        gr.ra = g_.rows_of(rows);
        gr.base_a = rows.empty() ? 0 : lrow(rows.front());
        for (index_t j : cols) gr.rb += g_.size(j);
        gr.base_b = cols.empty() ? 0 : g_.cols.to_local(g_.start(cols.front()));
        gr.ga = Buffer<T>(gr.ra * gr.off.back());
        gr.gb = Buffer<T>(gr.rb * gr.off.back());
    }
    const index_t at = gr.off[l - l0], w = pn.width;
    if (pn.nrows > 0)
        kernels::copy(Op::N, pn.nrows, w, pn.lp, pn.nrows, gr.ga.data() + (gr.ra - pn.nrows) + at * gr.ra,
                      gr.ra);
    for (index_t j : my_columns(l)) {
        const auto [p, ld] = panel_tile(pn, j);
        kernels::copy(Op::N, g_.size(j), w, p, ld,
                      gr.gb.data() + (g_.cols.to_local(g_.start(j)) - gr.base_b) + at * gr.rb, gr.rb);
    }
    gr.count = l - l0 + 1;
    // Its buffers go now, unless my broadcasts of it are still on their way (then when the slot
    // is reused: panel(), retire()).
    if (all_done(pn.row_req) && all_done(pn.col_out)) retire(pn);
}

template <class T>
std::optional<typename CholEngine<T>::ColumnOp> CholEngine<T>::group_op(const Group& gr, index_t j,
                                                                        index_t npan) const {
    const index_t first = first_row_tile(j);
    if (first < 0 || gr.off[npan] == 0) return std::nullopt;
    ColumnOp op;
    const index_t at = lrow(first) - gr.base_a;
    op.rows = gr.ra - at;
    op.a = gr.ga.data() + at;
    op.lda = gr.ra;
    op.b = gr.gb.data() + (g_.cols.to_local(g_.start(j)) - gr.base_b);
    op.ldb = gr.rb;
    op.c = tile(first, j);
    op.bj = g_.size(j);
    op.diag = first == j ? op.bj : 0;
    op.k = gr.off[npan];
    return op;
}

// Works off the first `count` pending columns and every pending column <= upto: the rows below
// the chunk's last diagonal tile in one GEMM of the chunk's width, the rest as one staircase
// (node_update.hpp): wide GEMMs below the chunk's diagonal tiles, a column at a time above them
// (a GEMM of nb columns packs its whole left operand for nb columns only).
template <class T>
void CholEngine<T>::drain_pending(index_t count, index_t upto) {
    std::size_t end = pend_at_;
    for (; end < pending_.size() && (count > 0 || pending_[end] <= upto); ++end) --count;
    if (end == pend_at_) return;
    const Group& gr = grp_[pend_slot_];
    const std::vector<index_t> cols(pending_.begin() + static_cast<std::ptrdiff_t>(pend_at_),
                                    pending_.begin() + static_cast<std::ptrdiff_t>(end));
    pend_at_ = end;
    const index_t first = first_row_tile(cols.front());
    if (first < 0 || gr.off[gr.count] == 0) return;
    StairUpdate<T> s;
    for (index_t i = first; i < g_.mt(); ++i)
        if (g_.ro(i) == r_) s.row_g.push_back(i), s.row_at.push_back(lrow(i) - lrow(first));
    s.row_at.push_back(lrow(s.row_g.back()) + g_.size(s.row_g.back()) - lrow(first));
    const index_t c0 = g_.cols.to_local(g_.start(cols.front()));
    for (index_t j : cols) s.col_g.push_back(j), s.col_at.push_back(g_.cols.to_local(g_.start(j)) - c0);
    s.col_at.push_back(s.col_at.back() + g_.size(cols.back()));
    s.k = gr.off[gr.count];
    s.a = gr.ga.data() + (lrow(first) - gr.base_a), s.lda = gr.ra;
    s.b = gr.gb.data() + (c0 - gr.base_b), s.ldb = gr.rb;
    s.c = tile(first, cols.front()), s.ldc = ldw_;
    const StairRect<T> rect = [&](index_t m, index_t n, const T* a, const T* b, T* c) {
        const index_t step = poll_step(n, s.k);
        for (index_t i = 0; i < m; i += step) {
            if (i > 0) poll();
            Span sp(Kind::Gemm, "gemm");
            kernels::gemm(Op::N, Op::C, std::min(step, m - i), n, s.k, T(-1), a + i, s.lda, b, s.ldb, T(1), c + i,
                          s.ldc);
        }
    };
    // Below the chunk's last diagonal tile every row meets every column of the chunk: one GEMM
    // the chunk's width wide (a chunk of a few columns would otherwise end in a leaf one tile
    // wide down to the last row), then the staircase above it.
    const auto below = static_cast<std::size_t>(
        std::upper_bound(s.row_g.begin(), s.row_g.end(), cols.back()) - s.row_g.begin());
    if (below < s.row_g.size()) {
        const index_t x = s.row_at[below];
        rect(s.row_at.back() - x, s.col_at.back(), s.a + x, s.b, s.c + x);
        poll();
        s.row_g.resize(below);
        s.row_at.resize(below + 1);
    }
    stair_update(s, rect, [this] { poll(); });
}

template <class T>
void CholEngine<T>::loop_delayed() {
    const index_t mt = g_.mt();
    const bool tasks = threads_ > 1;
    const bool la = a_.lookahead > 0;
    panel(0);
    for (index_t l = 0; l < mt; ++l) {
        wait_panel(pan_[l % 3]);
        stack_panel(pan_[l % 3]);
        const int slot = static_cast<int>((l / g_.delay) % 2);
        Group& gr = grp_[slot];
        const index_t l1 = g_.group_last(l);
        const bool next = l + 1 < mt;
        if (next && g_.co(l + 1) == c_) {
            if (tasks) {
                char* cs = &colsent_[l + 1];
#pragma omp taskwait depend(inout : cs[0])
            } else {
                drain_pending(0, l + 1);
            }
            update_next(group_op(gr, l + 1, gr.count));
        }
        if (la && next) panel(l + 1);
        if (l == l1) {
            const auto cols = my_columns(l + 1);
            if (tasks) {
                char* gs = &grpsent_[slot];
                for (index_t j : cols) {
                    char* cs = &colsent_[j];
                    const int prio = j <= l + 1 + g_.delay ? 1 : 0;  // the next group's columns
                    const auto op = group_op(gr, j, gr.count);
                    CholEngine* self = this;
#pragma omp task depend(in : gs[0]) depend(inout : cs[0]) priority(prio) firstprivate(self, op)
                    {
                        kernels::ThreadScope one(1);
                        self->update_column(op);
                        if (omp_get_thread_num() == 0) self->poll();
                    }
                }
            } else {
                drain_pending(0, mt);  // the group before (its slot is the next group's)
                pending_ = cols;
                pend_at_ = 0;
                pend_slot_ = slot;
            }
        }
        if (!tasks && la) {
            // A share of the pending columns per step until the next list comes (at the end of
            // the next group), so the broadcasts in flight meet work on every step.
            const index_t last = l == l1 ? g_.group_last(std::min(l + 1, mt - 1)) : l1;
            const auto left = static_cast<index_t>(pending_.size() - pend_at_);
            drain_pending(ceil_div(left, std::max<index_t>(1, last - l + 1)), -1);
        }
        if (!la && next) {
            if (tasks) {
#pragma omp taskwait
            } else {
                drain_pending(0, mt);
            }
            panel(l + 1);
        }
    }
    drain_pending(0, mt);
}

#define CALA_INST(T) template class CholEngine<T>;
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::detail

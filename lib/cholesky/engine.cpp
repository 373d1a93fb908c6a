// cala::potrf's engine on one rank (chol_engine.hpp): the loop over steps with its lookahead,
// and step H, the trailing update: per local column as OpenMP tasks, or (EngineArgs::devices)
// through the node, the panel staying on the rank's cores; with lookahead, panel l+1 runs on
// the driving thread while step l's update of the columns past l+1 runs on the node.

#include "cholesky/chol_engine.hpp"

#include <omp.h>

#include <algorithm>
#include <exception>
#include <thread>

#include "cholesky/node_update.hpp"
#include "comm/traffic.hpp"
#include "core/check.hpp"
#include "core/trace.hpp"
#include "kernels/blas.hpp"

namespace cala::detail {

using trace::Kind;
using trace::Span;

template <class T>
index_t CholEngine<T>::run() {
    const index_t mt = g_.mt();
    if (mt == 0) return 0;
    threads_ = std::max(1, kernels::threads());
    agg_ = a_.panel == PanelMode::Aggregated
               ? std::clamp(a_.panel_threads > 0 ? a_.panel_threads : threads_, 1, threads_)
               : 1;
    shared_ = threads_ > 1 && a_.panel == PanelMode::Shared && a_.devices == nullptr;
    if (a_.devices != nullptr) agg_ = 1;
    if (threads_ == 1 || a_.devices != nullptr) {
        kernels::ThreadScope one(a_.devices != nullptr ? threads_ : 1);
        open_node_panels();
        loop();
        for (auto& pn : pan_) retire(pn);
        if (node_) node_->finish();
        return fail_;
    }
    const int saved_levels = omp_get_max_active_levels();
    if (agg_ > 1) omp_set_max_active_levels(std::max(saved_levels, 2));
    // The master thread drives the loop (MPI is called from it only: MPI_THREAD_FUNNELED);
    // the others run the tasks it creates, from the region's closing barrier.
#pragma omp parallel num_threads(threads_)
#pragma omp master
    {
        kernels::ThreadScope one(1);
        loop();
#pragma omp taskwait
        for (auto& pn : pan_) retire(pn);
    }
    if (agg_ > 1) omp_set_max_active_levels(saved_levels);
    return fail_;
}

// The row broadcasts through node-shared slots (comm/node_slots.hpp) where the ranks of a 1 x q
// grid share a node and each runs one thread (the updates then run in order on it, so a panel is
// retired only after its last reader). The same answer on every rank of the row: the geometry
// and the options agree, the thread counts are agreed on.
template <class T>
void CholEngine<T>::open_node_panels() {
    if (!a_.node_shared || g_.h != 1 || g_.p() != 1 || g_.q() < 2 || a_.devices != nullptr) return;
    const Comm& row = *a_.row_comm;
    if (!row.shares_node()) return;
    int one = threads_ == 1 ? 1 : 0;
    CALA_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_INT, MPI_MIN, row.get()));
    count_control();
    if (one == 0) return;
    index_t width = 0;
    for (index_t i = 0; i < g_.mt(); ++i) width = std::max(width, g_.size(i));
    node_.emplace(row, g_.rows.local_size(r_) * width, static_cast<std::int64_t>(sizeof(T)));
    if (!node_->ok()) node_.reset();
}

// L(j, l) of panel pn: in lr if row j is mine, else in the chunk from process row ro(j).
template <class T>
std::pair<const T*, index_t> CholEngine<T>::panel_tile(const Panel& pn, index_t j) const {
    const int rj = g_.ro(j);
    if (rj == r_) return {pn.lp + (lrow(j) - lrow(pn.rows.front())), pn.nrows};
    const auto& tl = pn.ctiles[rj];
    index_t off = 0;
    for (index_t x : tl) {
        if (x == j) break;
        off += g_.size(x);
    }
    return {pn.lc[rj].data() + off, g_.rows_of(tl)};
}

template <class T>
std::optional<typename CholEngine<T>::ColumnOp> CholEngine<T>::column_op(const Panel& pn, index_t j) const {
    if (pn.width == 0) return std::nullopt;
    const index_t first = first_row_tile(j);
    if (first < 0) return std::nullopt;
    ColumnOp op;
    const index_t base = lrow(pn.rows.front());
    op.rows = pn.nrows - (lrow(first) - base);
    op.a = pn.lp + (lrow(first) - base);
    op.lda = pn.nrows;
    std::tie(op.b, op.ldb) = panel_tile(pn, j);
    op.c = tile(first, j);
    op.bj = g_.size(j);
    op.diag = first == j ? op.bj : 0;
    op.k = pn.width;
    return op;
}

template <class T>
void CholEngine<T>::update_column(const std::optional<ColumnOp>& op, bool poll_ok) {
    if (!op) return;
    if (op->diag > 0) {
        Span s(Kind::Herk, "herk");
        kernels::herk(true, Op::N, op->diag, op->k, real_t<T>(-1), op->a, op->lda, real_t<T>(1), op->c, ldw_);
    }
    if (op->rows > op->diag)
        gemm_polled(op->rows - op->diag, op->bj, op->k, op->a + op->diag, op->lda, op->b, op->ldb,
                    op->c + op->diag, poll_ok);
}

// The same in row blocks shared with free threads (the lookahead column, Shared).
template <class T>
void CholEngine<T>::update_column_shared(const std::optional<ColumnOp>& op) {
    if (!op) return;
    const index_t below = op->rows - op->diag, k = op->k;
    const index_t first = op->diag > 0 ? 1 : 0;
    crew(shared_ ? threads_ : 1, first + ceil_div(below, kChunk), [&](index_t c) {
        if (c < first) {
            Span s(Kind::Herk, "herk");
            kernels::herk(true, Op::N, op->diag, k, real_t<T>(-1), op->a, op->lda, real_t<T>(1), op->c, ldw_);
            return;
        }
        const index_t i0 = op->diag + (c - first) * kChunk;
        Span s(Kind::Gemm, "gemm");
        kernels::gemm(Op::N, Op::C, std::min(kChunk, op->rows - i0), op->bj, k, T(-1), op->a + i0, op->lda, op->b,
                      op->ldb, T(1), op->c + i0, ldw_);
    });
}

template <class T>
void CholEngine<T>::update_next(const std::optional<ColumnOp>& op) {
    if (shared_) {
        update_column_shared(op);
        return;
    }
    Aggregate team(agg_);
    kernels::ThreadScope k(team_size(team));
    update_column(op);
}

// c -= a·bᴴ in row chunks, driving MPI between them (the broadcasts in flight move only
// inside MPI calls) when this thread may call MPI.
template <class T>
void CholEngine<T>::gemm_polled(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb, T* c,
                 bool poll_ok) {
    const index_t rows = poll_step(n, k);
    if (!poll_ok || m <= rows) {
        Span s(Kind::Gemm, "gemm");
        kernels::gemm(Op::N, Op::C, m, n, k, T(-1), a, lda, b, ldb, T(1), c, ldw_);
        return;
    }
    for (index_t i = 0; i < m; i += rows) {
        {
            Span s(Kind::Gemm, "gemm");
            kernels::gemm(Op::N, Op::C, std::min(rows, m - i), n, k, T(-1), a + i, lda, b, ldb, T(1), c + i,
                          ldw_);
        }
        poll();
    }
}

// My local column blocks j in (lo, mt).
template <class T>
std::vector<index_t> CholEngine<T>::my_columns(index_t lo) const {
    std::vector<index_t> out;
    for (index_t j = lo + 1; j < g_.mt(); ++j)
        if (g_.co(j) == c_) out.push_back(j);
    return out;
}

template <class T>
void CholEngine<T>::loop() {
    const index_t mt = g_.mt();
    const bool tasks = threads_ > 1 && a_.devices == nullptr;
    if (g_.delay > 1 && a_.devices == nullptr) {
        loop_delayed();
        return;
    }
    const bool la = a_.lookahead > 0;
    panel(0);
    for (index_t l = 0; l < mt; ++l) {
        Panel& pn = pan_[l % 3];
        wait_panel(pn);
        char* psent = &pansent_[l % 3];
        const bool next = l + 1 < mt;
        const bool next_mine = next && g_.co(l + 1) == c_;
        if (la && next) {
            // Lookahead: column l+1 first (every earlier update of it done), then panel
            // l+1 and its broadcasts.
            if (next_mine && tasks) {
                char* cs = &colsent_[l + 1];
#pragma omp taskwait depend(inout : cs[0])
            }
            if (next_mine && pn.width > 0) update_next(column_op(pn, l + 1));
            if (tasks) {
                // Every reader of panel l-2 (the slot panel l+1 takes) is done: step l-1's
                // update may still run, so neither thread waits for the panel.
                char* nps = &pansent_[(l + 1) % 3];
#pragma omp taskwait depend(inout : nps[0])
            }
            if (pn.width > 0 && a_.devices != nullptr) {
                // Panel l+1 (this thread: MPI, a quarter of the cores or panel_threads) beside
                // the rest of step l's update on the node (a second thread, no MPI, the other
                // cores for its cpu units): they touch different columns.
                panel_team_ = std::clamp(a_.panel_threads > 0 ? a_.panel_threads : (threads_ + 3) / 4, 1, threads_);
                const int node_team = std::max(1, threads_ - panel_team_);
                std::exception_ptr failed;
                std::thread node([&, node_team] {
                    try {
                        kernels::ThreadScope cores(node_team);
                        update_on_node(pn, my_columns(l + 1), false);
                    } catch (...) {
                        failed = std::current_exception();
                    }
                });
                try {
                    panel(l + 1);
                } catch (...) {
                    node.join();
                    panel_team_ = 0;
                    throw;
                }
                node.join();
                panel_team_ = 0;
                if (failed) std::rethrow_exception(failed);
                poll();
                continue;
            }
            panel(l + 1);
        }
        if (pn.width > 0 && a_.devices != nullptr) {
            update_on_node(pn, my_columns(la ? l + 1 : l), true);
        } else if (pn.width > 0) {
            for (index_t j : my_columns(la ? l + 1 : l)) {
                if (!tasks) {
                    update_column(column_op(pn, j), true);
                    poll();
                    continue;
                }
                char* cs = &colsent_[j];
                const int prio = j == l + 2 ? 1 : 0;
                CholEngine* self = this;
                Panel* pp = &pn;
#pragma omp task depend(in : psent[0]) depend(inout : cs[0]) priority(prio) firstprivate(self, pp, j)
                {
                    kernels::ThreadScope one(1);
                    self->update_column(self->column_op(*pp, j));
                    if (omp_get_thread_num() == 0) self->poll();
                }
            }
        }
        if (!la && next) {
            if (tasks) {
#pragma omp taskwait
            }
            panel(l + 1);
        }
    }
}

// The first of my tiles (of the process row) at or below block row j, or -1.
template <class T>
index_t CholEngine<T>::first_row_tile(index_t j) const {
    for (index_t i = j; i < g_.mt(); ++i)
        if (g_.ro(i) == r_) return i;
    return -1;
}

template <class T>
void CholEngine<T>::update_on_node(const Panel& pn, const std::vector<index_t>& cols, bool may_poll) {
    const index_t first = cols.empty() || pn.width == 0 ? -1 : first_row_tile(cols.front());
    if (first < 0) return;
    StairUpdate<T> s;
    for (index_t i = first; i < g_.mt(); ++i)
        if (g_.ro(i) == r_) s.row_g.push_back(i), s.row_at.push_back(lrow(i) - lrow(first));
    s.row_at.push_back(lrow(s.row_g.back()) + g_.size(s.row_g.back()) - lrow(first));
    s.col_at.push_back(0);
    for (index_t j : cols) s.col_g.push_back(j), s.col_at.push_back(s.col_at.back() + g_.size(j));
    // L(j, l) of my columns stacked (they come from several process rows' buffers).
    const index_t ncols = s.col_at.back();
    Buffer<T> b(ncols * pn.width);
    for (std::size_t q = 0; q < cols.size(); ++q) {
        const auto [p, ld] = panel_tile(pn, cols[q]);
        kernels::copy(Op::N, g_.size(cols[q]), pn.width, p, ld, b.data() + s.col_at[q], ncols);
    }
    s.k = pn.width;
    s.a = pn.lp + (lrow(first) - lrow(pn.rows.front())), s.lda = pn.nrows;
    s.b = b.data(), s.ldb = ncols;
    s.c = tile(first, cols.front()), s.ldc = ldw_;
    stair_update(s, *a_.devices, [this, may_poll] {
        if (may_poll) poll();
    });
}

template <class T>
index_t potrf_engine(const EngineArgs& a, T* w, index_t ldw) {
    CholEngine<T> e(a, w, ldw);
    return e.run();
}

// (The class here as in panel.cpp and delayed.cpp: each file's members, used across them.)
#define CALA_INST(T) template class CholEngine<T>; template index_t potrf_engine<T>(const EngineArgs&, T*, index_t);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::detail

#include "cholesky/engine.hpp"

#include <omp.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "cholesky/team.hpp"
#include "core/trace.hpp"
#include "core/workspace.hpp"
#include "kernels/blas.hpp"

namespace cala::detail {

namespace {

using trace::Kind;
using trace::Span;

template <class T>
class Engine {
public:
    Engine(const EngineArgs& args, T* w, index_t ldw)
        : a_(args), g_(args.g), w_(w), ldw_(ldw), me_(args.layer), r_(args.row), c_(args.col),
          colsent_(static_cast<std::size_t>(std::max<index_t>(g_.mt(), 1))) {}

    index_t run() {
        const index_t mt = g_.mt();
        if (mt == 0) return 0;
        threads_ = std::max(1, kernels::threads());
        agg_ = a_.panel == PanelMode::Aggregated
                   ? std::clamp(a_.panel_threads > 0 ? a_.panel_threads : threads_, 1, threads_)
                   : 1;
        shared_ = threads_ > 1 && a_.panel == PanelMode::Shared;
        if (threads_ == 1) {
            kernels::ThreadScope one(1);
            loop();
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
        }
        if (agg_ > 1) omp_set_max_active_levels(saved_levels);
        return fail_;
    }

private:
    // One step's update operands on this rank (what step G delivers).
    struct Panel {
        index_t l = -1;
        index_t s0 = 0, width = 0;        // my slice of tile column l (width 0: no update here)
        std::vector<index_t> rows;        // panel tiles of my process row, in order
        index_t nrows = 0;
        Buffer<T> lr;                     // nrows x width, ld nrows
        std::vector<std::vector<index_t>> ctiles;  // per root row r': tiles it sends down my column
        std::vector<Buffer<T>> lc;        // per r' != my row: the received tiles, ld = their rows
        std::vector<Request> row_req, col_req;
        bool col_posted = false;
        bool ready = false;               // panel() finished setting this step up
    };

    T* tile(index_t i, index_t j) const {
        return w_ + g_.rows.to_local(g_.start(i)) + g_.cols.to_local(g_.start(j)) * ldw_;
    }
    index_t lrow(index_t i) const { return g_.rows.to_local(g_.start(i)); }

    void poll() {
        for (auto& pn : pan_) {
            test_all(pn.row_req);
            test_all(pn.col_req);
            if (!pn.ready) continue;
            if (!pn.col_posted && all_done(pn.row_req)) post_columns(pn);
            if (pn.col_posted) test_all(pn.col_req);
        }
    }
    static bool all_done(const std::vector<Request>& rs) {
        for (const auto& x : rs)
            if (!x.done()) return false;
        return true;
    }

    // Step G, second half: the tiles of column c whose rows are r' go down column c from r'.
    void post_columns(Panel& pn) {
        pn.col_posted = true;
        if (pn.width == 0 || g_.p() == 1) return;
        for (int rp = 0; rp < g_.p(); ++rp) {
            const auto& tl = pn.ctiles[rp];
            if (tl.empty()) continue;
            const index_t rows = g_.rows_of(tl);
            auto& buf = pn.lc[rp];
            if (rp == r_) {  // pack my tiles from lr
                index_t off = 0;
                for (index_t j : tl) {
                    kernels::copy(Op::N, g_.size(j), pn.width, pn.lr.data() + (lrow(j) - lrow(pn.rows.front())),
                                  pn.nrows, buf.data() + off, rows);
                    off += g_.size(j);
                }
            }
            pn.col_req.push_back(a_.col_comm->ibcast(buf.data(), rows * pn.width, rp));
        }
    }

    // Steps A-G of step l: factor and solve the panel, post its broadcasts.
    void panel(index_t l) {
        Panel& pn = pan_[l % 3];
        pn = Panel{};
        pn.l = l;
        const index_t b = g_.size(l);
        const int h = g_.h, p = g_.p();
        const bool diag_owner = r_ == g_.ro(l) && c_ == g_.co(l);
        const bool in_col = c_ == g_.co(l);

        // A, B: the diagonal tile, summed across the fiber and factored on every layer.
        if (diag_owner) {
            T* d = tile(l, l);
            if (h > 1) {
                Buffer<T> buf(b * b);
                kernels::copy(Op::N, b, b, d, ldw_, buf.data(), b);
                Span s(Kind::Bcast, "allreduce diag");
                a_.fiber->iallreduce_sum(buf.data(), b * b).wait();
                kernels::copy(Op::N, b, b, buf.data(), b, d, ldw_);
            }
            index_t info;
            {
                Aggregate team(agg_);
                kernels::ThreadScope k(team.size());
                Span s(Kind::Potrf, "potrf");
                info = kernels::potrf(true, b, d, ldw_);
            }
            if (info > 0 && (fail_ == 0 || g_.start(l) + info < fail_)) fail_ = g_.start(l) + info;
        }
        // C: L(l, l) down the column, in each layer that solves a panel tile.
        Buffer<T> lll;
        const auto mine = g_.panel_rows(l, r_, me_);
        if (in_col && g_.layer_solves(l, me_)) {
            if (p > 1) {
                lll = Buffer<T>(b * b);
                if (diag_owner) kernels::copy(Op::N, b, b, tile(l, l), ldw_, lll.data(), b);
                Span s(Kind::Bcast, "bcast L(l,l)");
                a_.col_comm->ibcast(lll.data(), b * b, g_.ro(l)).wait();
            }
        }
        // D: partial sums of the panel tiles reduced onto their home layers.
        if (in_col && h > 1) {
            std::vector<Buffer<T>> bufs(static_cast<std::size_t>(h));
            std::vector<Request> reqs;
            for (int t = 0; t < h; ++t) {
                const auto tl = g_.panel_rows(l, r_, t);
                if (tl.empty()) continue;
                const index_t rows = g_.rows_of(tl);
                bufs[t] = Buffer<T>(rows * b);
                pack(tl, l, 0, b, bufs[t].data(), rows);
                reqs.push_back(a_.fiber->ireduce_sum(bufs[t].data(), bufs[t].data(), rows * b, t));
            }
            Span s(Kind::Bcast, "reduce panel");
            wait_all(reqs);
            if (!mine.empty()) unpack(mine, l, bufs[me_].data(), g_.rows_of(mine));
        }
        // E: solve my panel tiles: A(i, l) := A(i, l)·L(l, l)⁻ᴴ.
        if (in_col && !mine.empty()) {
            const T* lp = p > 1 ? lll.data() : tile(l, l);
            const index_t ldl = p > 1 ? b : ldw_;
            solve_panel(l, mine, lp, ldl);
        }
        // F, G: my slice of every panel tile of my process row.
        const auto [s0, s1] = g_.slice(l, me_);
        pn.s0 = s0;
        pn.width = s1 - s0;
        pn.rows = g_.panel_rows(l, r_, -1);
        pn.nrows = g_.rows_of(pn.rows);
        if (in_col && h > 1) distribute(l, pn, mine);
        if (pn.width == 0) {
            pn.ready = true;
            return;
        }
        if (!(in_col && h > 1)) pn.lr = Buffer<T>(pn.nrows * pn.width);  // (else distribute() filled it)
        if (in_col && h == 1 && pn.nrows > 0)
            kernels::copy(Op::N, pn.nrows, pn.width, tile(pn.rows.front(), l) + s0 * ldw_, ldw_, pn.lr.data(), pn.nrows);
        if (g_.q() > 1 && pn.nrows > 0)
            pn.row_req.push_back(a_.row_comm->ibcast(pn.lr.data(), pn.nrows * pn.width, g_.co(l)));
        pn.ctiles.resize(static_cast<std::size_t>(p));
        pn.lc.resize(static_cast<std::size_t>(p));
        for (int rp = 0; rp < p; ++rp) {
            pn.ctiles[rp] = g_.column_tiles(l, rp, c_);
            if (p > 1 && !pn.ctiles[rp].empty()) pn.lc[rp] = Buffer<T>(g_.rows_of(pn.ctiles[rp]) * pn.width);
        }
        pn.ready = true;
        poll();
    }

    // Step E: my panel tiles times L(l, l)⁻ᴴ, through the inverse (formed once per panel) and
    // in-place trmm: in row blocks shared with free threads (Shared), or on a team (Aggregated).
    void solve_panel(index_t l, const std::vector<index_t>& mine, const T* lp, index_t ldl) {
        const index_t b = g_.size(l);
        const bool contiguous = g_.h == 1;  // then my tiles are one block of local rows
        const index_t rows = g_.rows_of(mine);
        if (!shared_) {
            Aggregate team(agg_);
            kernels::ThreadScope k(team.size());
            Span s(Kind::Trsm, "trsm");
            if (contiguous) kernels::trsm_right_lower_ch(rows, b, lp, ldl, tile(mine.front(), l), ldw_);
            else for (index_t i : mine) kernels::trsm_right_lower_ch(g_.size(i), b, lp, ldl, tile(i, l), ldw_);
            return;
        }
        Buffer<T> inv(b * b);
        {
            Span s(Kind::Panel, "inverse");
            kernels::inverse_lower(b, lp, ldl, inv.data());
        }
        const T* iv = inv.data();
        if (contiguous) {
            T* x = tile(mine.front(), l);
            crew(shared_ ? threads_ : 1, ceil_div(rows, kChunk), [&](index_t c) {
                const index_t i0 = c * kChunk;
                Span s(Kind::Trsm, "trmm");
                kernels::trmm_right_lower_ch(std::min(kChunk, rows - i0), b, iv, x + i0, ldw_);
            });
        } else {
            crew(shared_ ? threads_ : 1, static_cast<index_t>(mine.size()), [&](index_t c) {
                const index_t i = mine[static_cast<std::size_t>(c)];
                Span s(Kind::Trsm, "trmm");
                kernels::trmm_right_lower_ch(g_.size(i), b, iv, tile(i, l), ldw_);
            });
        }
    }

    // F: on the home layers' panel column ranks, the solved tiles (or slices) go to the layers
    // that update with them; the update layers assemble lr from their own tiles and what arrives.
    void distribute(index_t l, Panel& pn, const std::vector<index_t>& mine) {
        const int h = g_.h;
        std::vector<Request> reqs;
        std::vector<Buffer<T>> out(static_cast<std::size_t>(h)), in(static_cast<std::size_t>(h));
        // Sends: my solved tiles, slice s to layer s (Repl: the whole tile to the update layer).
        if (!mine.empty()) {
            const index_t rows = g_.rows_of(mine);
            for (int s = 0; s < h; ++s) {
                if (s == me_) continue;
                const auto [a0, a1] = g_.slice(l, s);
                if (a1 == a0) continue;
                out[s] = Buffer<T>(rows * (a1 - a0));
                pack(mine, l, a0, a1 - a0, out[s].data(), rows);
                reqs.push_back(a_.fiber->isend(out[s].data(), rows * (a1 - a0), s, 71));
            }
        }
        const auto [s0, s1] = g_.slice(l, me_);
        if (s1 > s0) {
            for (int t = 0; t < h; ++t) {
                if (t == me_) continue;
                const auto tl = g_.panel_rows(l, r_, t);
                if (tl.empty()) continue;
                in[t] = Buffer<T>(g_.rows_of(tl) * (s1 - s0));
                reqs.push_back(a_.fiber->irecv(in[t].data(), g_.rows_of(tl) * (s1 - s0), t, 71));
            }
        }
        {
            Span s(Kind::Bcast, "distribute panel");
            wait_all(reqs);
        }
        if (s1 == s0) return;
        const index_t nrows = g_.rows_of(pn.rows);
        pn.lr = Buffer<T>(nrows * (s1 - s0));
        std::vector<index_t> off(static_cast<std::size_t>(h), 0);
        index_t at = 0;
        for (index_t i : pn.rows) {
            const int t = g_.home(i);
            const index_t bi = g_.size(i);
            if (t == me_) kernels::copy(Op::N, bi, s1 - s0, tile(i, l) + s0 * ldw_, ldw_, pn.lr.data() + at, nrows);
            else {
                const index_t rows_t = g_.rows_of(g_.panel_rows(l, r_, t));
                kernels::copy(Op::N, bi, s1 - s0, in[t].data() + off[t], rows_t, pn.lr.data() + at, nrows);
                off[t] += bi;
            }
            at += bi;
        }
    }

    // Columns [c0, c0 + nc) of the tiles (tl, l) into buf (ld rows), and back (the full width).
    void pack(const std::vector<index_t>& tl, index_t l, index_t c0, index_t nc, T* buf, index_t ld) const {
        index_t at = 0;
        for (index_t i : tl) {
            kernels::copy(Op::N, g_.size(i), nc, tile(i, l) + c0 * ldw_, ldw_, buf + at, ld);
            at += g_.size(i);
        }
    }
    void unpack(const std::vector<index_t>& tl, index_t l, const T* buf, index_t ld) const {
        index_t at = 0;
        for (index_t i : tl) {
            kernels::copy(Op::N, g_.size(i), g_.size(l), buf + at, ld, tile(i, l), ldw_);
            at += g_.size(i);
        }
    }

    // Step G complete on this rank: the row broadcast in, the column broadcasts posted and in.
    void wait_panel(Panel& pn) {
        Span s(Kind::Wait, "wait panel");
        wait_all(pn.row_req);
        if (!pn.col_posted) post_columns(pn);
        wait_all(pn.col_req);
    }

    // H for one local column block j: tiles (i, j), i >= j, of my process row, as c -= a·bᴴ
    // (rows x width times width x bj); the first diag rows are the diagonal tile (herk).
    struct ColumnOp {
        const T* a = nullptr;
        const T* b = nullptr;
        index_t lda = 0, ldb = 0;
        T* c = nullptr;
        index_t rows = 0, bj = 0, diag = 0, k = 0;
    };
    // The first of my tiles (of the process row) at or below block row j, or -1.
    index_t first_row_tile(index_t j) const {
        for (index_t i = j; i < g_.mt(); ++i)
            if (g_.ro(i) == r_) return i;
        return -1;
    }
    // L(j, l) of panel pn: in lr if row j is mine, else in the chunk from process row ro(j).
    std::pair<const T*, index_t> panel_tile(const Panel& pn, index_t j) const {
        const int rj = g_.ro(j);
        if (rj == r_) return {pn.lr.data() + (lrow(j) - lrow(pn.rows.front())), pn.nrows};
        const auto& tl = pn.ctiles[rj];
        index_t off = 0;
        for (index_t x : tl) {
            if (x == j) break;
            off += g_.size(x);
        }
        return {pn.lc[rj].data() + off, g_.rows_of(tl)};
    }
    std::optional<ColumnOp> column_op(const Panel& pn, index_t j) const {
        if (pn.width == 0) return std::nullopt;
        const index_t first = first_row_tile(j);
        if (first < 0) return std::nullopt;
        ColumnOp op;
        const index_t base = lrow(pn.rows.front());
        op.rows = pn.nrows - (lrow(first) - base);
        op.a = pn.lr.data() + (lrow(first) - base);
        op.lda = pn.nrows;
        std::tie(op.b, op.ldb) = panel_tile(pn, j);
        op.c = tile(first, j);
        op.bj = g_.size(j);
        op.diag = first == j ? op.bj : 0;
        op.k = pn.width;
        return op;
    }

    void update_column(const std::optional<ColumnOp>& op, bool poll_ok = false) {
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
    void update_column_shared(const Panel& pn, index_t j) {
        const auto op = column_op(pn, j);
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

    // c -= a·bᴴ in row chunks, driving MPI between them (the broadcasts in flight move only
    // inside MPI calls) when this thread may call MPI.
    void gemm_polled(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb, T* c,
                     bool poll_ok) {
        constexpr index_t kChunk = 768;
        if (!poll_ok || m <= kChunk) {
            Span s(Kind::Gemm, "gemm");
            kernels::gemm(Op::N, Op::C, m, n, k, T(-1), a, lda, b, ldb, T(1), c, ldw_);
            return;
        }
        for (index_t i = 0; i < m; i += kChunk) {
            {
                Span s(Kind::Gemm, "gemm");
                kernels::gemm(Op::N, Op::C, std::min(kChunk, m - i), n, k, T(-1), a + i, lda, b, ldb, T(1), c + i,
                              ldw_);
            }
            poll();
        }
    }

    // My local column blocks j in (lo, mt).
    std::vector<index_t> my_columns(index_t lo) const {
        std::vector<index_t> out;
        for (index_t j = lo + 1; j < g_.mt(); ++j)
            if (g_.co(j) == c_) out.push_back(j);
        return out;
    }

    void loop() {
        const index_t mt = g_.mt();
        const bool tasks = threads_ > 1;
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
                if (next_mine && pn.width > 0) {
                    if (shared_) {
                        update_column_shared(pn, l + 1);
                    } else {
                        Aggregate team(agg_);
                        kernels::ThreadScope k(team.size());
                        update_column(column_op(pn, l + 1));
                    }
                }
                if (tasks) {
                    // Every reader of panel l-2 (the slot panel l+1 takes) is done: step l-1's
                    // update may still run, so neither thread waits for the panel.
                    char* nps = &pansent_[(l + 1) % 3];
#pragma omp taskwait depend(inout : nps[0])
                }
                panel(l + 1);
            }
            if (pn.width > 0) {
                for (index_t j : my_columns(la ? l + 1 : l)) {
                    if (!tasks) {
                        update_column(column_op(pn, j), true);
                        poll();
                        continue;
                    }
                    char* cs = &colsent_[j];
                    const int prio = j == l + 2 ? 1 : 0;
                    Engine* self = this;
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

    const EngineArgs& a_;
    const CholGeom& g_;
    T* w_;
    index_t ldw_;
    int me_, r_, c_;
    static constexpr index_t kChunk = 384;  // rows per block of the shared panel work
    int threads_ = 1, agg_ = 1;
    bool shared_ = false;
    index_t fail_ = 0;
    Panel pan_[3];  // panels l-1 (its update tasks may still run), l and l+1 (the lookahead)
    std::vector<char> colsent_;
    char pansent_[3] = {0, 0, 0};
};

}  // namespace

template <class T>
index_t potrf_engine(const EngineArgs& a, T* w, index_t ldw) {
    Engine<T> e(a, w, ldw);
    return e.run();
}

#define CALA_INST(T) template index_t potrf_engine<T>(const EngineArgs&, T*, index_t);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::detail

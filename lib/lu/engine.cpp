// cala::getrf's panel loop on one rank (geometry.hpp: steps T, I, X, P, B, U) with lookahead:
//
//   panel(0)
//   for l:  rest(l)                      the interchanges on the other columns, U12, broadcasts in
//           [c == pc(l+1)] update(l) of the columns of panel l+1 only
//           panel(l+1)                   tournament, its interchanges on panel l+1's columns, L21,
//                                        the row broadcasts posted (the others post their receives)
//           update(l) of the other columns (polling MPI between row chunks)
//
// lookahead = 0: update(l) of every column, then panel(l+1). The traffic is the same either way.
// On a 1 x q grid on one node (LuOptions::node_shared_memory), the row broadcasts of step l
// (L11\U11 with the interchanges, and L21) are one node-shared slot the panel's owner fills
// (comm/node_slots.hpp); the others read L21 there.
// One process row (p == 1): the panel is LAPACK's getrf in place (partial pivoting, which is
// what the tournament picks on one rank), without the tournament's copy and the L21 solve; the
// interchanges of L's columns (left of the panel) wait until the end (swap_left).
// Layered (2.5D, LuArgs::layers > 1): the panel and the U block row summed over the fiber before
// use, layer 0's tournament result broadcast over it, and each layer's L21 / U12 slice (engine.hpp).

#include <algorithm>
#include <complex>
#include <tuple>
#include <utility>

#include <optional>

#include "comm/node_slots.hpp"
#include "comm/traffic.hpp"
#include "core/check.hpp"
#include "core/trace.hpp"
#include "core/workspace.hpp"
#include "kernels/blas.hpp"
#include "kernels/lapack_lu.hpp"
#include "lu/engine.hpp"

namespace cala::detail {

namespace {

using trace::Kind;
using trace::Span;

template <class T>
class LuEngine {
public:
    LuEngine(const LuArgs& args, T* a, index_t lda, std::vector<index_t>& ipiv)
        : g_(args.g), r_(args.row), c_(args.col), rowc_(*args.row_comm), colc_(*args.col_comm), a_(a), lda_(lda),
          ipiv_(ipiv), la_(args.lookahead > 0), m_loc_(g_.rows.local_size(r_)), n_loc_(g_.cols.local_size(c_)),
          node_shared_(args.node_shared && args.layers == 1), fiber_(args.fiber), layer_(args.layer),
          layers_(args.layers) {}

    index_t run() {
        ipiv_.assign(static_cast<std::size_t>(g_.kmax()), 0);
        const index_t steps = g_.steps();
        if (steps == 0) return 0;
        open_node_slots();
        setup(st_[0], 0);
        panel(st_[0]);
        for (index_t l = 0; l < steps; ++l) {
            Step& s = st_[l % 2];
            rest(s);
            const bool next = l + 1 < steps;
            Step& n = st_[(l + 1) % 2];
            if (next && la_) {
                setup(n, l + 1);
                index_t split = s.lcr;
                if (c_ == n.pc) {
                    split = s.lcr + n.kb;
                    update(s, s.lcr, split);
                }
                panel(n);
                update(s, split, n_loc_);
            } else {
                update(s, s.lcr, n_loc_);
                if (next) {
                    setup(n, l + 1);
                    panel(n);
                }
            }
        }
        for (Step& s : st_) retire(s);
        if (node_) node_->finish();
        // Layered: every layer holds the same factors then (each returns its home block rows).
        if (g_.p() == 1) swap_left();
        else permute_left();
        return info_;
    }

private:
    struct Step {
        index_t l = -1, k0 = 0, kb = 0;
        int pr = 0, pc = 0;
        index_t lr0 = 0, lc0 = 0;     // local row / column of (k0, k0) on its owners
        index_t lrb = 0, mrest = 0;   // my local rows below the diagonal block
        index_t lcr = 0, nrest = 0;   // my local columns right of the panel
        index_t so = 0, sw = 0;       // this layer's slice of the kb columns of L21 (rows of U12)
        Buffer<T> top, lb, ub;        // L11\U11, interchanges, zero pivot; L21 (mrest x kb); U12 (kb x nrest)
        T* lp = nullptr;              // L21: lb, or in the step's node-shared slot (after top)
        Request rtop, rl, ru;
    };

    // One process row, q > 1, every rank of it on one node: the row broadcasts through node-shared
    // slots, each step's top then L21 (the same answer on every rank: the geometry, the options
    // and the node are the same for all).
    void open_node_slots() {
        if (!node_shared_ || g_.p() != 1 || g_.q() < 2 || !rowc_.shares_node()) return;
        index_t w = 0;
        for (index_t l = 0; l < g_.steps(); ++l) w = std::max(w, g_.width(l));
        node_.emplace(rowc_, top_span(w) + m_loc_ * w, static_cast<std::int64_t>(sizeof(T)));
        if (!node_->ok()) node_.reset();
    }

    // Elements of a slot before L21: top (kb·(kb + 2) + 1) up to a whole cache line.
    static index_t top_span(index_t kb) {
        const index_t line = std::max<index_t>(1, 64 / static_cast<index_t>(sizeof(T)));
        return (kb * (kb + 2) + 1 + line - 1) / line * line;
    }

    void retire(Step& s) {
        s.rtop.wait();
        s.rl.wait();
        s.ru.wait();
        if (node_ && s.l >= 0) node_->done(s.l);
        s.l = -1;
    }

    void setup(Step& s, index_t l) {
        retire(s);
        s.l = l;
        s.k0 = g_.start(l);
        s.kb = g_.width(l);
        s.pr = g_.ro(l);
        s.pc = g_.co(l);
        s.lr0 = r_ == s.pr ? g_.rows.to_local(s.k0) : 0;
        s.lc0 = c_ == s.pc ? g_.cols.to_local(s.k0) : 0;
        s.lrb = g_.row_from(s.k0 + s.kb, r_);
        s.mrest = m_loc_ - s.lrb;
        s.lcr = g_.col_from(s.k0 + s.kb, c_);
        s.nrest = n_loc_ - s.lcr;
        std::tie(s.so, s.sw) = lu_slice(s.kb, layer_, layers_);
        // Sized once for the first (largest) step, then reused.
        if (s.top.size() < s.kb * (s.kb + 2) + 1) s.top = Buffer<T>(s.kb * (s.kb + 2) + 1);
        if (node_) {  // L21 after top in the step's slot, at a whole cache line
            s.lp = static_cast<T*>(node_->slot(l)) + top_span(s.kb);
        } else {
            if (s.lb.size() < s.mrest * s.kb) s.lb = Buffer<T>(s.mrest * s.kb);
            s.lp = s.lb.data();
        }
        if (s.ub.size() < s.kb * s.nrest) s.ub = Buffer<T>(s.kb * s.nrest);
    }

    void decode(const Step& s) {
        for (index_t i = 0; i < s.kb; ++i)
            ipiv_[static_cast<std::size_t>(s.k0 + i)] =
                decode_row(s.top[i + s.kb * s.kb], s.top[i + (s.kb + 1) * s.kb]);
    }

    // T, I (down the column), X on the panel's columns, P (L21), B (the row broadcasts posted).
    void panel(Step& s) {
        const index_t kb = s.kb, words = kb * (kb + 2);
        if (c_ == s.pc) {
            T* pan = a_ + s.lc0 * lda_;
            // Layered: the panel's rows from k0 down summed over the layers (each holds a share).
            const index_t top_row = g_.row_from(s.k0, r_);
            fiber_sum(m_loc_ - top_row, kb, a_ + top_row + s.lc0 * lda_, "panel");
            if (g_.p() == 1 && layers_ == 1) {
                std::vector<index_t> piv;
                Span sp(Kind::Panel, "getrf");
                kernels::getrf(m_loc_ - s.lr0, kb, pan + s.lr0, lda_, piv);
                kernels::copy(Op::N, kb, kb, pan + s.lr0, lda_, s.top.data(), kb);
                for (index_t i = 0; i < kb; ++i)
                    encode_row(s.k0 + piv[static_cast<std::size_t>(i)], s.top.data() + i + kb * kb,
                               s.top.data() + i + (kb + 1) * kb);
            } else {
                tournament(g_, s.l, r_, colc_, a_, lda_, s.top.data());
                if (layers_ > 1 && r_ == s.pr) {
                    // Layered: layer 0's pivots and L11\U11 on every layer (the summed panels agree
                    // to the bit where the all-reduce does; this makes the pivots agree anyway).
                    Span sp(Kind::Bcast, "pivots over the layers");
                    fiber_->ibcast(s.top.data(), words, 0).wait();
                }
                {
                    Span sp(Kind::Bcast, "L11U11");
                    colc_.ibcast(s.top.data(), words, s.pr).wait();
                }
                decode(s);
                {
                    Span sp(Kind::Bcast, "exchange panel");
                    exchange_rows(g_.rows, r_, colc_, kb, step_moves(ipiv_, s.k0, kb), a_, lda_, ColRanges{{s.lc0, kb}},
                                  xw_);
                }
                if (r_ == s.pr) kernels::copy(Op::N, kb, kb, s.top.data(), kb, pan + s.lr0, lda_);
                Span sp(Kind::Trsm, "L21");
                kernels::trsm_right_upper_lu(s.mrest, kb, s.top.data(), kb, pan + s.lrb, lda_);
            }
            if (node_) {
                Span sp(Kind::Wait, "wait slot");
                node_->claim(s.l);
            }
            kernels::copy(Op::N, s.mrest, kb, pan + s.lrb, lda_, s.lp, std::max<index_t>(1, s.mrest));
            // After the interchanges' two columns: the first zero U(j, j) of the step, j + 1 (0: none).
            index_t zero = 0;
            for (index_t j = 0; j < kb && zero == 0; ++j)
                if (s.top[j + j * kb] == T(0)) zero = j + 1;
            s.top[kb * (kb + 2)] = T(static_cast<double>(zero));
        }
        if (node_) {  // (p == 1: every rank is in process row pr)
            if (c_ == s.pc) {
                std::copy(s.top.data(), s.top.data() + words + 1, static_cast<T*>(node_->slot(s.l)));
                node_->publish(s.l, {words + 1, s.mrest * kb}, sizeof(T));
            }
            return;
        }
        // Along the rows: L11\U11 to process row pr only (its U12 solve needs L11); the other rows
        // need only the interchanges and the zero pivot.
        const bool full = r_ == s.pr;
        s.rtop = rowc_.ibcast(s.top.data() + (full ? 0 : kb * kb), full ? words + 1 : 2 * kb + 1, s.pc);
        s.rl = rowc_.ibcast(s.lb.data() + s.so * s.mrest, s.mrest * s.sw, s.pc);
    }

    // I (along the row) in, X on the other columns, P (U12), B (U12 down the column), both in.
    void rest(Step& s) {
        const index_t kb = s.kb;
        {
            Span sp(Kind::Wait, "pivots");
            s.rtop.wait();
            if (node_ && c_ != s.pc) {
                node_->await(s.l, {kb * (kb + 2) + 1, s.mrest * kb}, sizeof(T));
                const T* top = static_cast<const T*>(node_->slot(s.l));
                std::copy(top, top + kb * (kb + 2) + 1, s.top.data());
            }
        }
        decode(s);
        const auto zero = static_cast<index_t>(std::real(s.top[kb * (kb + 2)]));
        if (info_ == 0 && zero > 0) info_ = s.k0 + zero;
        // The columns right of the panel; those left of it (L's) wait for swap_left() (one process
        // row) or permute_left() at the end.
        ColRanges cols;
        if (s.nrest > 0) cols.emplace_back(s.lcr, s.nrest);
        exchange_rows(g_.rows, r_, colc_, kb, step_moves(ipiv_, s.k0, kb), a_, lda_, cols, xw_);
        if (r_ == s.pr && s.nrest > 0) {
            T* u12 = a_ + s.lr0 + s.lcr * lda_;
            fiber_sum(kb, s.nrest, u12, "U12");  // layered: the block row summed over the layers
            Span sp(Kind::Trsm, "U12");
            kernels::trsm_left_lower_unit_lu(kb, s.nrest, s.top.data(), kb, u12, lda_);
            kernels::copy(Op::N, s.sw, s.nrest, u12 + s.so, lda_, s.ub.data(), std::max<index_t>(1, s.sw));
        }
        s.ru = colc_.ibcast(s.ub.data(), s.sw * s.nrest, s.pr);
        Span sp(Kind::Wait, "L21, U12");
        if (c_ != s.pc) s.rl.wait();
        if (r_ != s.pr) s.ru.wait();
    }

    // One process row: the interchanges of the steps right of each column's own panel, deferred
    // from rest() (L's columns are final but for them) and applied here column by column, so that
    // a column stays in cache through all its steps (per step, each swap is a cache miss).
    void swap_left() {
        const index_t kmax = g_.kmax();
        const std::vector<index_t>& piv = ipiv_;
        T* const a = a_;
        const index_t lda = lda_;
        index_t n = 0;  // local columns with global index < kmax: a prefix
        while (n < n_loc_ && g_.cols.to_global(n, c_) < kmax) ++n;
        const int nt = n >= 64 ? kernels::threads() : 1;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 16)
        for (index_t j = 0; j < n; ++j) {
            const index_t b = g_.rows.block_of(g_.cols.to_global(j, c_));
            T* col = a + j * lda;
            for (index_t i = g_.start(b) + g_.width(b); i < kmax; ++i) {
                const index_t w = piv[static_cast<std::size_t>(i)];
                if (w != i) std::swap(col[i], col[w]);
            }
        }
    }

    // p > 1: the interchanges of L's columns deferred from rest(), block by block, the last first:
    // block b's columns take the composite of steps b+1, b+2, ... at once (DeferredMoves), one
    // message each way between process rows that exchange rows. Each row of L moves at most
    // once per block, and its columns are walked once (per step, each swap was a cache miss).
    void permute_left() {
        for_each_deferred_group(g_, c_, ipiv_, [&](const std::vector<index_t>& blocks, const std::vector<Moves>& moves) {
            std::vector<RowPermutation> parts;
            for (std::size_t i = 0; i < blocks.size(); ++i)
                parts.push_back({&moves[i], g_.cols.to_local(g_.start(blocks[i])), g_.width(blocks[i])});
            Span sp(Kind::Bcast, "deferred interchanges");
            permute_rows<T>(g_.rows, r_, colc_, parts, a_, lda_, xw_);
        });
    }

    // U on my columns [c0, c1) (local, right of the panel): row chunks with MPI polled between.
    void update(const Step& s, index_t c0, index_t c1) {
        const index_t nc = c1 - c0, kb = s.sw, m = s.mrest;  // kb: this layer's slice of the step
        if (nc <= 0 || m == 0 || kb == 0) return;
        const index_t ldl = std::max<index_t>(1, m);
        // Node-shared slots: nothing in flight needs polling.
        const index_t chunk = node_ ? m
                                    : std::max<index_t>(256, ((index_t{1} << 24) / std::max<index_t>(1, nc * kb) + 15) / 16 * 16);
        for (index_t i = 0; i < m; i += chunk) {
            Span sp(Kind::Gemm, "update");
            kernels::gemm(Op::N, Op::N, std::min(chunk, m - i), nc, kb, T(-1), s.lp + s.so * ldl + i, ldl,
                          s.ub.data() + (c0 - s.lcr) * kb, kb, T(1), a_ + s.lrb + i + c0 * lda_, lda_);
            poll();
        }
    }

    // Layered: the m x n block at a (ld lda_) summed over the fiber, in place (packed: one
    // message of m·n words each way).
    void fiber_sum(index_t m, index_t n, T* a, const char* what) {
        if (layers_ == 1 || m == 0 || n == 0) return;
        if (fsum_.size() < m * n) fsum_ = Buffer<T>(m * n);
        kernels::copy(Op::N, m, n, a, lda_, fsum_.data(), m);
        {
            Span sp(Kind::Bcast, what);
            fiber_->iallreduce_sum(fsum_.data(), m * n).wait();
        }
        kernels::copy(Op::N, m, n, fsum_.data(), m, a, lda_);
    }

    void poll() {
        for (Step& s : st_)
            for (Request* q : {&s.rtop, &s.rl, &s.ru})
                if (!q->done()) q->test();
    }

    const LuGeom& g_;
    int r_, c_;
    const Comm& rowc_;
    const Comm& colc_;
    T* a_;
    index_t lda_;
    std::vector<index_t>& ipiv_;
    bool la_;
    index_t m_loc_, n_loc_;
    index_t info_ = 0;
    Step st_[2];
    ExchangeBuffers<T> xw_;
    bool node_shared_;
    std::optional<NodeSlots> node_;
    const Comm* fiber_;
    int layer_, layers_;
    Buffer<T> fsum_;
};

}  // namespace

template <class T>
index_t getrf_engine(const LuArgs& args, T* a, index_t lda, std::vector<index_t>& ipiv) {
    LuEngine<T> e(args, a, lda, ipiv);
    return e.run();
}

#define CALA_INST(T) template index_t getrf_engine<T>(const LuArgs&, T*, index_t, std::vector<index_t>&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::detail

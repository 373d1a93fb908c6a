// cala::potrf's engine, steps A-G of step l on one rank (chol_engine.hpp): the diagonal tile
// factored (summed over the fiber first on 2.5D grids), L(l, l) down the column, the panel
// tiles solved, and the broadcasts of the solved panel along the row and down the columns.

#include "cholesky/chol_engine.hpp"

#include <algorithm>

#include "core/trace.hpp"
#include "kernels/blas.hpp"

namespace cala::detail {

using trace::Kind;
using trace::Span;

template <class T>
void CholEngine<T>::poll() {
    for (auto& pn : pan_) {
        test_all(pn.row_req);
        test_all(pn.col_req);
        test_all(pn.col_out);
        if (!pn.ready) continue;
        if (!pn.col_posted && (row_root(pn) || all_done(pn.row_req))) post_columns(pn);
        if (pn.col_posted) test_all(pn.col_req);
    }
}

// Step G, second half: the tiles of column c whose rows are r' go down column c from r'.
template <class T>
void CholEngine<T>::post_columns(Panel& pn) {
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
                kernels::copy(Op::N, g_.size(j), pn.width, pn.lp + (lrow(j) - lrow(pn.rows.front())),
                              pn.nrows, buf.data() + off, rows);
                off += g_.size(j);
            }
        }
        (rp == r_ ? pn.col_out : pn.col_req).push_back(a_.col_comm->ibcast(buf.data(), rows * pn.width, rp));
    }
}

// Steps A-G of step l: factor and solve the panel, post its broadcasts.
template <class T>
void CholEngine<T>::panel(index_t l) {
    Panel& pn = pan_[l % 3];
    retire(pn);
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
            kernels::ThreadScope k(team_size(team));
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
    if (node_ && pn.nrows > 0) {
        // One copy into the node-shared slot; the others read it there (wait_panel).
        pn.lp = static_cast<T*>(node_->slot(l));
        if (in_col) {
            {
                Span s(Kind::Wait, "wait slot");
                node_->claim(l);
            }
            Span s(Kind::Panel, "copy to slot");
            kernels::copy(Op::N, pn.nrows, pn.width, tile(pn.rows.front(), l) + s0 * ldw_, ldw_, pn.lp, pn.nrows);
            node_->publish(l, {pn.nrows * pn.width}, sizeof(T));
        }
    } else {
        if (!(in_col && h > 1)) pn.lr = Buffer<T>(pn.nrows * pn.width);  // (else distribute() filled it)
        pn.lp = pn.lr.data();
        if (in_col && h == 1 && pn.nrows > 0)
            kernels::copy(Op::N, pn.nrows, pn.width, tile(pn.rows.front(), l) + s0 * ldw_, ldw_, pn.lp, pn.nrows);
        if (g_.q() > 1 && pn.nrows > 0)
            pn.row_req.push_back(a_.row_comm->ibcast(pn.lp, pn.nrows * pn.width, g_.co(l)));
    }
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
template <class T>
void CholEngine<T>::solve_panel(index_t l, const std::vector<index_t>& mine, const T* lp, index_t ldl) {
    const index_t b = g_.size(l);
    const bool contiguous = g_.h == 1;  // then my tiles are one block of local rows
    const index_t rows = g_.rows_of(mine);
    if (!shared_) {
        Aggregate team(agg_);
        kernels::ThreadScope k(team_size(team));
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
template <class T>
void CholEngine<T>::distribute(index_t l, Panel& pn, const std::vector<index_t>& mine) {
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
template <class T>
void CholEngine<T>::pack(const std::vector<index_t>& tl, index_t l, index_t c0, index_t nc, T* buf, index_t ld) const {
    index_t at = 0;
    for (index_t i : tl) {
        kernels::copy(Op::N, g_.size(i), nc, tile(i, l) + c0 * ldw_, ldw_, buf + at, ld);
        at += g_.size(i);
    }
}

template <class T>
void CholEngine<T>::unpack(const std::vector<index_t>& tl, index_t l, const T* buf, index_t ld) const {
    index_t at = 0;
    for (index_t i : tl) {
        kernels::copy(Op::N, g_.size(i), g_.size(l), buf + at, ld, tile(i, l), ldw_);
        at += g_.size(i);
    }
}

// Step G complete on this rank: the row broadcast in, the column broadcasts posted and in.
template <class T>
void CholEngine<T>::wait_panel(Panel& pn) {
    Span s(Kind::Wait, "wait panel");
    if (node_ && !row_root(pn) && pn.nrows > 0 && pn.width > 0) node_->await(pn.l, {pn.nrows * pn.width}, sizeof(T));
    if (!row_root(pn)) wait_all(pn.row_req);
    if (!pn.col_posted) post_columns(pn);
    wait_all(pn.col_req);
}

// The slot's sends finished, then its buffers freed.
template <class T>
void CholEngine<T>::retire(Panel& pn) {
    wait_all(pn.row_req);
    wait_all(pn.col_out);
    wait_all(pn.col_req);
    if (node_ && pn.l >= 0 && pn.nrows > 0 && pn.width > 0) node_->done(pn.l);
    pn = Panel{};
}

#define CALA_INST(T) template class CholEngine<T>;
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::detail

// The CAQR panel loop (cala::geqrf) on one rank of a p x q grid.
//
// Step l (panel l in process column co(l), geometry.hpp):
//   F  [column co(l)] factor the panel (panel.cpp): LAPACK geqrf, or TSQR + reconstruction
//   B  each process row with panel rows: [T | its V rows] broadcast along the row from co(l)
//   U  every rank: W = Vᴴ·A(panel rows, my trailing columns), summed down the process column
//      (one allreduce of w x n_loc, only when the panel spans more than one process row);
//      A −= V·(Tᴴ·W)
// Lookahead 1: in column co(l+1), U runs first on panel l+1's columns, then F and B of step
// l+1, then U on the rest; the other columns post their side of B of step l+1 at the start of
// step l. U polls the broadcasts between its GEMM tiles. A root never waits for its own
// broadcast (its slot is retired before it is written again).
//
//   1 x 2 grid, panels alternate columns 0, 1:
//     col 0: F0 B0→ | U0(all)        | (waits B1) U1 ...
//     col 1: ←B0    | U0(panel 1) F1 B1→ U0(rest) | F2 needs U1(panel 2) ...
//
// Delayed updates (one process row, d = qr_delay > 1 panels a group, docs/qr.md): inside a group,
// U of step l covers only the group's later panels; at the group's last step the group's V and T
// (T from the panels' T, larft's recurrence a panel at a time) update the next group's columns,
// and the columns right of them are left pending, worked off a share per step of the next group
// (first where the next panel needs them). d = 2 on 1 x 2, panels 0-1 and 2-3 a group:
//     col 0: F0 B0→ | (a share of the last group's pending) | ←B1 G01: U(panel 2) F2 B2→ | ...
//     col 1: ←B0    | U0(panel 1) F1 B1→                    | G01: U(panel 3) | (waits B2) ...
//     and from then on G01 pending on both columns' panels 4, 5, ..., worked off in shares

#include <algorithm>

#include "core/trace.hpp"
#include "core/workspace.hpp"
#include "kernels/blas.hpp"
#include "kernels/lapack_qr.hpp"
#include "qr/engine.hpp"
#include "qr/panel.hpp"

namespace cala::detail {

template <class T>
void geqrf_engine(const QrGeom& g, int r, int c, const Comm& row, const Comm& col, T* a, index_t lda, T* tau,
                  int lookahead, int delay) {
    const index_t kt = g.kt();
    if (kt == 0) return;
    const int d = qr_delay(g, delay);
    const QrWork wk = qr_work(g, r, c, d);
    Buffer<T> store(wk.total());
    std::vector<T*> slots(static_cast<std::size_t>(wk.slots));
    for (int s = 0; s < wk.slots; ++s) slots[static_cast<std::size_t>(s)] = store.data() + s * wk.vslot;
    T* wbuf = store.data() + wk.slots * wk.vslot;
    T* zbuf = wbuf + wk.w;
    // Two groups' V (this one's, and the last one's while its pending columns are worked off),
    // each followed by its T and the two products that build T.
    T* grp[2] = {zbuf + wk.w, zbuf + wk.w + wk.group / 2};
    T* tsqr = zbuf + wk.w + wk.group;
    std::vector<T> tau_l(static_cast<std::size_t>(g.cols.nb));
    std::vector<Request> req(static_cast<std::size_t>(wk.slots));
    auto slot_of = [&](index_t l) { return static_cast<std::size_t>(l % wk.slots); };

    auto factor = [&](index_t l) {
        const std::size_t slot = slot_of(l);
        req[slot].wait();
        trace::Span sp(trace::Kind::Panel, "factor");
        const index_t w = g.w(l), mr = g.panel_rows(l, r);
        T* pa = a + g.row0(l, r) + g.cols.local_before(g.c0(l), c) * lda;
        factor_panel(g, l, r, col, pa, lda, slots[slot] + w * w, std::max<index_t>(1, mr), slots[slot], tau_l.data(),
                     tsqr);
        if (r == g.ro(l))
            for (index_t i = 0; i < w; ++i) tau[g.c0(l) + i] = tau_l[static_cast<std::size_t>(i)];
    };
    auto post = [&](index_t l) {
        const index_t w = g.w(l), mr = g.panel_rows(l, r);
        const std::size_t slot = slot_of(l);
        if (g.q() > 1 && mr > 0) req[slot] = row.ibcast(slots[slot], w * w + mr * w, g.co(l));
    };
    // The reflectors a step applies: one panel's (its slot), or a group's.
    struct Refl {
        index_t w = 0, mr = 0, row0 = 0;  // reflectors, my rows, my first row
        const T* t = nullptr;             // w x w, ld w
        const T* v = nullptr;             // mr x w, ld max(1, mr)
        bool reduce = false;              // W summed down the process column
    };
    auto panel_refl = [&](index_t l) {
        const T* t = slots[slot_of(l)];
        return Refl{g.w(l), g.panel_rows(l, r), g.row0(l, r), t, t + g.w(l) * g.w(l), g.np(l) > 1};
    };
    // Panels l0..l1 (one process row: every rank holds all their rows and V): V side by side
    // with the zeros above each panel's diagonal explicit, and T of Q_l0···Q_l1 = I − V·T·Vᴴ
    // from the panels' T: T(0:o, j) = −T(0:o, 0:o)·(V(:, 0:o)ᴴ·V_j)·T_j (LAPACK's larft
    // recurrence a panel at a time; V_j is zero above its first row, so the product starts
    // there).
    auto group_refl = [&](index_t l0, index_t l1, T* buf) {
        trace::Span sp(trace::Kind::Panel, "group T");
        const index_t mr0 = g.panel_rows(l0, r), ld = std::max<index_t>(1, mr0);
        index_t kw = 0;
        for (index_t l = l0; l <= l1; ++l) kw += g.w(l);
        T* vg = buf;
        T* tg = vg + ld * kw;
        T* sbuf = tg + kw * kw;
        T* xbuf = sbuf + kw * g.cols.nb;
        kernels::scale(kw, kw, T(0), tg, kw);
        index_t off = 0;
        for (index_t l = l0; l <= l1; ++l) {
            const index_t w = g.w(l), mr = g.panel_rows(l, r), at = g.row0(l, r) - g.row0(l0, r);
            const T* t = slots[slot_of(l)];
            kernels::scale(at, w, T(0), vg + off * ld, ld);
            kernels::copy(Op::N, mr, w, t + w * w, std::max<index_t>(1, mr), vg + at + off * ld, ld);
            for (index_t j = 0; j < w; ++j)
                for (index_t i = 0; i <= j; ++i) tg[off + i + (off + j) * kw] = t[i + j * w];
            if (off > 0 && mr > 0) {
                kernels::gemm(Op::C, Op::N, off, w, mr, T(1), vg + at, ld, vg + at + off * ld, ld, T(0), sbuf, off);
                kernels::gemm(Op::N, Op::N, off, w, w, T(1), sbuf, off, t, w, T(0), xbuf, off);
                kernels::gemm(Op::N, Op::N, off, w, off, T(-1), tg, kw, xbuf, off, T(0), tg + off * kw, kw);
            }
            off += w;
        }
        return Refl{kw, mr0, g.row0(l0, r), tg, vg, false};
    };
    // The update of reflectors x on my local columns [j0, j0 + nc): A −= V·(Tᴴ·(Vᴴ·A)).
    auto update = [&](const Refl& x, index_t j0, index_t nc) {
        const index_t w = x.w, mr = x.mr;
        if (nc == 0 || (mr == 0 && !x.reduce)) return;
        const T* t = x.t;
        const T* v = x.v;
        const index_t ldv = std::max<index_t>(1, mr);
        T* ac = a + x.row0 + j0 * lda;
        // In tiles of about 2^27 multiply-adds (2048 columns by >= 256 rows), polling the broadcasts in flight between
        // them: MPICH moves a non-blocking broadcast only while both ends call into MPI, a pipeline of shared-memory
        // cells per call. (2^25 in 512 columns polled 4x as often; n 4096 on 1 x 2, Emerald Rapids: 93-96 against
        // 102-105 GF/s at nb 256, about even at nb 64.)
        const index_t cb = 2048;
        const index_t rb = std::max<index_t>(256, ((index_t{1} << 27) / (w * cb) + 15) / 16 * 16);
        auto poll = [&] {
            for (Request& q : req)
                if (!q.done()) q.test();
        };
        // W is formed transposed, Wᴴ = Aᴴ·V (nc x w, ld nc): the BLAS runs that shape faster than
        // Vᴴ·A's w-row product (OpenBLAS SkylakeX, w = 128 in 512 x 512 tiles: 56-58 GF/s a
        // core against 48-51; BLIS alike for both); Z = Tᴴ·W reads it back transposed.
        for (index_t j = 0; j < nc; j += cb) {
            const index_t n1 = std::min(cb, nc - j);
            if (mr == 0) kernels::scale(n1, w, T(0), wbuf + j, nc);
            for (index_t i = 0; i < mr; i += rb) {
                {
                    trace::Span sp(trace::Kind::Gemm, "W = V^H A");
                    kernels::gemm(Op::C, Op::N, n1, w, std::min(rb, mr - i), T(1), ac + i + j * lda, lda, v + i, ldv,
                                  T(i == 0 ? 0 : 1), wbuf + j, nc);
                }
                poll();
            }
        }
        if (x.reduce) {
            trace::Span sp(trace::Kind::Bcast, "allreduce W");
            col.iallreduce_sum(wbuf, w * nc).wait();
        }
        if (mr == 0) return;
        kernels::gemm(Op::C, Op::C, w, nc, w, T(1), t, w, wbuf, nc, T(0), zbuf, w);
        for (index_t j = 0; j < nc; j += cb) {
            const index_t n1 = std::min(cb, nc - j);
            for (index_t i = 0; i < mr; i += rb) {
                {
                    trace::Span sp(trace::Kind::Gemm, "A -= V Z");
                    kernels::gemm(Op::N, Op::N, std::min(rb, mr - i), n1, w, T(-1), v + i, ldv, zbuf + j * w, w, T(1),
                                  ac + i + j * lda, lda);
                }
                poll();
            }
        }
    };

    // Delayed updates: the columns right of the next group still owe a group's update
    // (local columns [pend_j, pend_end) of `pend`), worked off left to right, a share per step of
    // the next group.
    Refl pend;
    index_t pend_j = 0, pend_end = 0;
    auto drain_to = [&](index_t upto) {
        const index_t n1 = std::min(upto, pend_end) - pend_j;
        if (n1 <= 0) return;
        update(pend, pend_j, n1);
        pend_j += n1;
    };

    if (c == g.co(0)) factor(0);
    post(0);
    for (index_t l = 0; l < kt; ++l) {
        if (c != g.co(l)) {
            trace::Span sp(trace::Kind::Wait, "panel");
            req[slot_of(l)].wait();
        }
        // Inside a group, step l updates only the group's later panels; its last step updates the
        // next group's columns with all of the group's panels at once, and leaves the columns
        // right of them pending. Where the last group's pending columns meet them, those go
        // first: on the next panel's columns before it is factored, then the rest.
        const index_t l0 = qr_group_first(d, l), l1 = qr_group_last(g, d, l);
        const bool grouped = l0 < l1, next = l + 1 < kt;
        const Refl x = l < l1 || !grouped ? panel_refl(l) : group_refl(l0, l1, grp[(l0 / d) % 2]);
        const index_t j0 = g.trail0(l, c);
        index_t nt = l < l1 ? g.trail0(l1, c) - j0 : g.trail(l, c);
        const index_t pend_end_new = j0 + nt;
        if (l == l1 && grouped && next) nt = g.trail0(qr_group_last(g, d, l + 1), c) - j0;
        // Receivers join step l+1's broadcast now (its slot was retired with step l-d), so that
        // the root's polls during step l move it.
        if (next && c != g.co(l + 1)) post(l + 1);
        if (next && lookahead > 0 && c == g.co(l + 1)) {
            const index_t b1 = g.bs(l + 1);
            if (l == l1) drain_to(j0 + b1);
            update(x, j0, b1);
            factor(l + 1);
            post(l + 1);
            if (l == l1) drain_to(pend_end);
            update(x, j0 + b1, nt - b1);
        } else {
            if (l == l1) drain_to(pend_end);
            update(x, j0, nt);
            if (next && c == g.co(l + 1)) {
                factor(l + 1);
                post(l + 1);
            }
        }
        if (l == l1 && grouped && next) pend = x, pend_j = j0 + nt, pend_end = pend_end_new;
        if (l < l1) drain_to(pend_j + ceil_div(pend_end - pend_j, l1 - l));
    }
    for (Request& q : req) q.wait();
}

template <class T>
void ormqr_left_engine(const QrGeom& g, int r, int c, const Comm& row, const Comm& col, Op op, const T* a,
                       index_t lda, const T* tau, T* cm, index_t ldc, index_t nc) {
    const index_t kt = g.kt(), nb = g.cols.nb;
    if (kt == 0) return;
    const index_t mloc = g.rows.local_size(r);
    Buffer<T> store(mloc * nb + 2 * nb * nb + 2 * nb * std::max<index_t>(nc, 1));
    T* tmat = store.data();
    T* v = tmat + nb * nb;
    T* gram = v + mloc * nb;
    T* wbuf = gram + nb * nb;
    T* zbuf = wbuf + nb * std::max<index_t>(nc, 1);
    const bool forward = op != Op::N;
    for (index_t s = 0; s < kt; ++s) {
        const index_t l = forward ? s : kt - 1 - s;
        const index_t w = g.w(l), mr = g.panel_rows(l, r), ldv = std::max<index_t>(1, mr);
        const bool reduce = g.np(l) > 1;
        v = tmat + w * w;
        if (c == g.co(l)) {
            // V with its structure explicit, its Gram matrix summed down the column, then T.
            const T* pa = a + g.row0(l, r) + g.cols.local_before(g.c0(l), c) * lda;
            kernels::copy(Op::N, mr, w, pa, lda, v, ldv);
            if (r == g.ro(l))
                for (index_t j = 0; j < w; ++j) {
                    for (index_t i = 0; i < j && i < mr; ++i) v[i + j * ldv] = T(0);
                    if (j < mr) v[j + j * ldv] = T(1);
                }
            if (mr > 0) kernels::gemm(Op::C, Op::N, w, w, mr, T(1), v, ldv, v, ldv, T(0), gram, w);
            else kernels::scale(w, w, T(0), gram, w);
            if (reduce) col.iallreduce_sum(gram, w * w).wait();
            kernels::larft_gram(w, gram, w, tau + g.c0(l), tmat, w);
        }
        if (g.q() > 1 && mr > 0) row.ibcast(tmat, w * w + mr * w, g.co(l)).wait();
        if (nc == 0 || (mr == 0 && !reduce)) continue;
        T* cc = cm + g.row0(l, r);
        // Wᴴ = Cᴴ·V (nc x w), as in geqrf's update.
        if (mr > 0) kernels::gemm(Op::C, Op::N, nc, w, mr, T(1), cc, ldc, v, ldv, T(0), wbuf, nc);
        else kernels::scale(nc, w, T(0), wbuf, nc);
        if (reduce) col.iallreduce_sum(wbuf, w * nc).wait();
        if (mr == 0) continue;
        // Q·C = C − V·(T·W); Qᴴ·C = C − V·(Tᴴ·W).
        kernels::gemm(forward ? Op::C : Op::N, Op::C, w, nc, w, T(1), tmat, w, wbuf, nc, T(0), zbuf, w);
        kernels::gemm(Op::N, Op::N, mr, nc, w, T(-1), v, ldv, zbuf, w, T(1), cc, ldc);
    }
}

#define CALA_INST(T)                                                                                               \
    template void geqrf_engine<T>(const QrGeom&, int, int, const Comm&, const Comm&, T*, index_t, T*, int, int);  \
    template void ormqr_left_engine<T>(const QrGeom&, int, int, const Comm&, const Comm&, Op, const T*, index_t, \
                                       const T*, T*, index_t, index_t);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::detail

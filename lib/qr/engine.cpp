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
                  int lookahead) {
    const index_t kt = g.kt();
    if (kt == 0) return;
    const QrWork wk = qr_work(g, r, c);
    Buffer<T> store(wk.total());
    T* slots[2] = {store.data(), store.data() + wk.vslot};
    T* wbuf = store.data() + 2 * wk.vslot;
    T* zbuf = wbuf + wk.w;
    T* tsqr = zbuf + wk.w;
    std::vector<T> tau_l(static_cast<std::size_t>(g.cols.nb));
    Request req[2];

    auto factor = [&](index_t l, int slot) {
        req[slot].wait();
        trace::Span sp(trace::Kind::Panel, "factor");
        const index_t w = g.w(l), mr = g.panel_rows(l, r);
        T* pa = a + g.row0(l, r) + g.cols.local_before(g.c0(l), c) * lda;
        factor_panel(g, l, r, col, pa, lda, slots[slot] + w * w, std::max<index_t>(1, mr), slots[slot], tau_l.data(),
                     tsqr);
        if (r == g.ro(l))
            for (index_t i = 0; i < w; ++i) tau[g.c0(l) + i] = tau_l[static_cast<std::size_t>(i)];
    };
    auto post = [&](index_t l, int slot) {
        const index_t w = g.w(l), mr = g.panel_rows(l, r);
        if (g.q() > 1 && mr > 0) req[slot] = row.ibcast(slots[slot], w * w + mr * w, g.co(l));
    };
    // Step l's update on my local columns [j0, j0 + nc).
    auto update = [&](index_t l, int slot, index_t j0, index_t nc) {
        const index_t w = g.w(l), mr = g.panel_rows(l, r);
        const bool reduce = g.np(l) > 1;
        if (nc == 0 || (mr == 0 && !reduce)) return;
        const T* t = slots[slot];
        const T* v = t + w * w;
        const index_t ldv = std::max<index_t>(1, mr);
        T* ac = a + g.row0(l, r) + j0 * lda;
        // In tiles of about 2^25 multiply-adds (512 columns by >= 256 rows: shapes BLIS runs at its full rate), polling
        // the broadcasts in flight between them: MPICH moves a non-blocking broadcast only while both ends call into
        // MPI, a pipeline of shared-memory cells per call.
        const index_t cb = 512;
        const index_t rb = std::max<index_t>(256, ((index_t{1} << 25) / (w * cb) + 15) / 16 * 16);
        auto poll = [&] {
            for (Request& q : req)
                if (!q.done()) q.test();
        };
        for (index_t j = 0; j < nc; j += cb) {
            const index_t n1 = std::min(cb, nc - j);
            if (mr == 0) kernels::scale(w, n1, T(0), wbuf + j * w, w);
            for (index_t i = 0; i < mr; i += rb) {
                {
                    trace::Span sp(trace::Kind::Gemm, "W = V^H A");
                    kernels::gemm(Op::C, Op::N, w, n1, std::min(rb, mr - i), T(1), v + i, ldv, ac + i + j * lda, lda,
                                  T(i == 0 ? 0 : 1), wbuf + j * w, w);
                }
                poll();
            }
        }
        if (reduce) {
            trace::Span sp(trace::Kind::Bcast, "allreduce W");
            col.iallreduce_sum(wbuf, w * nc).wait();
        }
        if (mr == 0) return;
        kernels::gemm(Op::C, Op::N, w, nc, w, T(1), t, w, wbuf, w, T(0), zbuf, w);
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

    if (c == g.co(0)) factor(0, 0);
    post(0, 0);
    for (index_t l = 0; l < kt; ++l) {
        const int slot = static_cast<int>(l % 2);
        if (c != g.co(l)) {
            trace::Span sp(trace::Kind::Wait, "panel");
            req[slot].wait();
        }
        const index_t j0 = g.trail0(l, c), nt = g.trail(l, c);
        const bool next = l + 1 < kt;
        // Receivers join step l+1's broadcast now (its slot was retired with step l-1), so that
        // the root's polls during step l move it.
        if (next && c != g.co(l + 1)) post(l + 1, 1 - slot);
        if (next && lookahead > 0 && c == g.co(l + 1)) {
            const index_t b1 = g.bs(l + 1);
            update(l, slot, j0, b1);
            factor(l + 1, 1 - slot);
            post(l + 1, 1 - slot);
            update(l, slot, j0 + b1, nt - b1);
        } else {
            update(l, slot, j0, nt);
            if (next && c == g.co(l + 1)) {
                factor(l + 1, 1 - slot);
                post(l + 1, 1 - slot);
            }
        }
    }
    req[0].wait();
    req[1].wait();
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
        if (mr > 0) kernels::gemm(Op::C, Op::N, w, nc, mr, T(1), v, ldv, cc, ldc, T(0), wbuf, w);
        else kernels::scale(w, nc, T(0), wbuf, w);
        if (reduce) col.iallreduce_sum(wbuf, w * nc).wait();
        if (mr == 0) continue;
        // Q·C = C − V·(T·W); Qᴴ·C = C − V·(Tᴴ·W).
        kernels::gemm(forward ? Op::C : Op::N, Op::N, w, nc, w, T(1), tmat, w, wbuf, w, T(0), zbuf, w);
        kernels::gemm(Op::N, Op::N, mr, nc, w, T(-1), v, ldv, zbuf, w, T(1), cc, ldc);
    }
}

#define CALA_INST(T)                                                                                               \
    template void geqrf_engine<T>(const QrGeom&, int, int, const Comm&, const Comm&, T*, index_t, T*, int);       \
    template void ormqr_left_engine<T>(const QrGeom&, int, int, const Comm&, const Comm&, Op, const T*, index_t, \
                                       const T*, T*, index_t, index_t);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::detail

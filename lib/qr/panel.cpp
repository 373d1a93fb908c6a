// The panel of cala::geqrf: LAPACK geqrf on one process row, else TSQR down the process column
// with the Householder vectors rebuilt from its Q (reconstruct.cpp).
//
// TSQR of a panel held by 3 process rows (participants 0 = the diagonal block's row, 1, 2), w
// columns:
//
//   leaves    0: geqrf(rows of 0) -> R0    1: geqrf -> R1    2: geqrf -> R2
//   level 1   1 --R1 (w x w)--> 0: geqrf([R0; R1]) -> R01
//   level 2   2 --R2--> 0: geqrf([R01; R2]) -> R            (R is panel l's R up to signs)
//   down      0: Y = Q_[R01;R2]·[I; 0]; 0 --Y(w:2w)--> 2; X0 = Y(0:w)
//             0: Y = Q_[R0;R1]·[X0; 0]; 0 --Y(w:2w)--> 1
//   leaves    each: its rows of Q = Q_leaf·[X; 0]
//   root      L\U of Q1 − S, T = −U·S·L1⁻ᴴ; [L\U | T] broadcast down the column (2w² words)
//   all       V = Q·U⁻¹ on their rows (the root: L1 on the diagonal block, S·R above it)
//
// First, w flags (column i non-zero in my panel rows) summed down the column: a panel with an
// exactly zero column is gathered instead (gathered_panel: LAPACK's tau = 0 and R).

#include <algorithm>

#include "core/workspace.hpp"
#include "kernels/blas.hpp"
#include "kernels/lapack_qr.hpp"
#include "qr/panel.hpp"

namespace cala::detail {

namespace {

constexpr int kTagUp = 3101, kTagDown = 3102;

// dst (rows x n, ld ldd) := the upper trapezoid of src (rows x n, ld lds), zeros below.
template <class T>
void copy_upper(index_t rows, index_t n, const T* src, index_t lds, T* dst, index_t ldd) {
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < rows; ++i) dst[i + j * ldd] = i <= j ? src[i + j * lds] : T(0);
}

// v := the panel rows with the unit diagonal and the zeros above it explicit in the top w rows
// (on the participant that holds the diagonal block).
template <class T>
void copy_v(index_t mr, index_t w, const T* pa, index_t lda, bool top, T* v, index_t ldv) {
    kernels::copy(Op::N, mr, w, pa, lda, v, ldv);
    if (!top) return;
    for (index_t j = 0; j < w; ++j) {
        for (index_t i = 0; i < j && i < mr; ++i) v[i + j * ldv] = T(0);
        if (j < mr) v[j + j * ldv] = T(1);
    }
}

// t (w x w, ld w) := the triangular factor of I − V·T·Vᴴ for v (m x w, ld ldv, unit diagonal and
// zeros above it explicit) and tau: the upper triangle of VᴴV by herk, then LAPACK's larft
// recurrence on it in place (larft_gram reads g(0:i, i) before it writes t(0:i, i)).
template <class T>
void gram_t(index_t m, index_t w, const T* v, index_t ldv, const T* tau, T* t) {
    kernels::herk(false, Op::C, w, m, real_t<T>(1), v, ldv, real_t<T>(0), t, w);
    kernels::larft_gram(w, t, w, tau, t, w);
}

// QR of the m x n tile a with tau: the recursion (kernels::geqrt3, T in t, n x n, ld n, zeros
// below its diagonal; returns true) where kernels::panel_qr_choice finds it faster on this machine
// and m >= n, else LAPACK's blocked geqrf (false). On an Emerald Rapids Xeon with OpenBLAS the
// recursion took 1.8 ms on 4096 x 64 against geqrf's 5.1 (geqrf's level-2 steps reach the
// BLAS through the process's global symbols); both beat larft's level-2 loop for T.
template <class T>
bool tall_qr(index_t m, index_t n, T* a, index_t lda, T* tau, T* t) {
    if (m < n || !kernels::panel_qr_choice().geqrt3) {
        kernels::geqrf(m, n, a, lda, tau);
        return false;
    }
    kernels::geqrt3(m, n, a, lda, t, n);
    for (index_t j = 0; j < n; ++j) {
        tau[j] = t[j + j * n];
        for (index_t i = j + 1; i < n; ++i) t[i + j * n] = T(0);
    }
    return true;
}

// A panel spanning several process rows with an exactly zero column (rows >= c0): LAPACK gives
// that column tau = 0 (H = I), which no Householder reconstruction of TSQR's Q can (its pivot
// would be zero), and the columns after it are reduced from the next row on. The rows are
// gathered on the root in global order, factored there by LAPACK's geqrf (LAPACK's output
// exactly), and sent back; the root leaves T (ld w) in t. Traffic: each other participant sends
// its m_r·w words and receives them back.
template <class T>
void gathered_panel(const QrGeom& g, index_t l, int r, const Comm& col, T* pa, index_t lda, T* tau, T* t) {
    const index_t w = g.w(l), c0 = g.c0(l), mr = g.panel_rows(l, r);
    const int me = g.part(l, r), np = g.np(l), root = g.ro(l);
    if (me >= np) return;
    if (me != 0) {
        if (mr == 0) return;
        Buffer<T> buf(mr * w);
        kernels::copy(Op::N, mr, w, pa, lda, buf.data(), mr);
        col.isend(buf.data(), mr * w, root, kTagUp).wait();
        col.irecv(buf.data(), mr * w, root, kTagDown).wait();
        kernels::copy(Op::N, mr, w, buf.data(), mr, pa, lda);
        return;
    }
    const index_t mp = g.rows.n - c0;
    Buffer<T> store(3 * mp * w);  // the panel, V, one participant's rows
    T* panel = store.data();
    T* v = panel + mp * w;
    T* buf = v + mp * w;
    // Participant t's rows to and from their global places in the panel.
    auto place = [&](int pr, const T* src, index_t lds, bool to_panel, T* dst, index_t ldd) {
        const index_t rows = g.panel_rows(l, pr), row0 = g.row0(l, pr);
        for (index_t i = 0; i < rows; ++i) {
            const index_t at = g.rows.to_global(row0 + i, pr) - c0;
            for (index_t j = 0; j < w; ++j) {
                if (to_panel) panel[at + j * mp] = src[i + j * lds];
                else dst[i + j * ldd] = panel[at + j * mp];
            }
        }
    };
    place(root, pa, lda, true, nullptr, 0);
    for (int k = 1; k < np; ++k) {
        const int pr = (root + k) % g.p();
        const index_t rows = g.panel_rows(l, pr);
        if (rows == 0) continue;
        col.irecv(buf, rows * w, pr, kTagUp).wait();
        place(pr, buf, rows, true, nullptr, 0);
    }
    kernels::geqrf(mp, w, panel, mp, tau);
    for (int k = 1; k < np; ++k) {
        const int pr = (root + k) % g.p();
        const index_t rows = g.panel_rows(l, pr);
        if (rows == 0) continue;
        place(pr, nullptr, 0, false, buf, rows);
        col.isend(buf, rows * w, pr, kTagDown).wait();
    }
    place(root, nullptr, 0, false, pa, lda);
    copy_v(mp, w, panel, mp, true, v, mp);
    gram_t(mp, w, v, mp, tau, t);
}

}  // namespace

template <class T>
void factor_panel(const QrGeom& g, index_t l, int r, const Comm& col, T* pa, index_t lda, T* v, index_t ldv, T* t,
                  T* tau, T* ws) {
    const index_t w = g.w(l), mr = g.panel_rows(l, r);
    const int me = g.part(l, r), np = g.np(l);
    if (np <= 1) {
        if (me != 0) return;  // no panel rows here
        const bool with_t = tall_qr(mr, g.bs(l), pa, lda, tau, t);
        copy_v(mr, w, pa, lda, true, v, ldv);
        if (!with_t) gram_t(mr, w, v, ldv, tau, t);
        return;
    }
    const index_t nb = g.cols.nb;
    int levels = 0;
    for (int s = 1; s < g.p(); s *= 2) ++levels;
    // Workspace (geometry.hpp, qr_work): leaf, its tau, the levels, bc, xsend, xcur, y.
    T* leaf = ws;
    T* leaf_tau = leaf + g.rows.local_size(r) * nb;
    T* lvl = leaf_tau + nb;
    T* bc = lvl + levels * (2 * nb * nb + nb);
    T* xsend = bc + 2 * nb * nb;
    T* xcur = xsend + nb * nb;
    T* y = xcur + nb * nb;
    const int root = g.ro(l);
    const auto tree = g.tree(l);
    // Exactly zero columns: one allreduce of w flags down the column (every rank of it).
    std::vector<T> nonzero(static_cast<std::size_t>(w), T(0));
    for (index_t j = 0; j < w && me < np; ++j)
        for (index_t i = 0; i < mr; ++i)
            if (pa[i + j * lda] != T(0)) {
                nonzero[static_cast<std::size_t>(j)] = T(1);
                break;
            }
    col.iallreduce_sum(nonzero.data(), w).wait();
    const bool gather = std::find(nonzero.begin(), nonzero.end(), T(0)) != nonzero.end();
    if (gather) {
        gathered_panel(g, l, r, col, pa, lda, tau, bc + w * w);
    } else if (me < np) {
        const index_t ldl = std::max<index_t>(1, mr);
        kernels::copy(Op::N, mr, w, pa, lda, leaf, ldl);
        tall_qr(mr, w, leaf, ldl, leaf_tau, y);  // its T, if any, not kept: the Gram matrix's below
        // Up: the current R is rows x w at cur (ld ldc).
        const T* cur = leaf;
        index_t cur_ld = ldl;
        int level = 0;
        std::vector<int> mine;  // tree entries where this participant receives
        for (std::size_t e = 0; e < tree.size(); ++e) {
            const auto& c = tree[e];
            if (c.from == me) {
                copy_upper(c.rows_from, w, cur, cur_ld, xsend, c.rows_from);
                col.isend(xsend, c.rows_from * w, (root + c.to) % g.p(), kTagUp).wait();
                break;  // a participant sends once and is done going up
            }
            if (c.to != me) continue;
            const index_t h = c.rows_to + c.rows_from;
            T* s = lvl + level * (2 * nb * nb + nb);
            copy_upper(c.rows_to, w, cur, cur_ld, s, h);
            col.irecv(xsend, c.rows_from * w, (root + c.from) % g.p(), kTagUp).wait();
            kernels::copy(Op::N, c.rows_from, w, xsend, c.rows_from, s + c.rows_to, h);
            kernels::geqrf(h, w, s, h, s + 2 * nb * nb);
            cur = s;
            cur_ld = h;
            mine.push_back(static_cast<int>(e));
            ++level;
        }
        // Down: X (rows x w, ld w) is this participant's block of TSQR's Q·[I; 0] coefficients.
        if (me == 0) {
            kernels::scale(w, w, T(0), xcur, w);
            for (index_t i = 0; i < w; ++i) xcur[i + i * w] = T(1);
        } else {
            for (const auto& c : tree)
                if (c.from == me) {
                    col.irecv(xcur, c.rows_from * w, (root + c.to) % g.p(), kTagDown).wait();
                    kernels::copy(Op::N, c.rows_from, w, xcur, c.rows_from, y, c.rows_from);
                    kernels::copy(Op::N, c.rows_from, w, y, c.rows_from, xcur, w);
                    break;
                }
        }
        for (int k = static_cast<int>(mine.size()) - 1; k >= 0; --k) {
            const auto& c = tree[static_cast<std::size_t>(mine[static_cast<std::size_t>(k)])];
            const index_t h = c.rows_to + c.rows_from, hr = std::min(h, w);
            T* s = lvl + k * (2 * nb * nb + nb);
            kernels::scale(h, w, T(0), y, h);
            kernels::copy(Op::N, hr, w, xcur, w, y, h);
            kernels::ormqr(true, Op::N, h, w, hr, s, h, s + 2 * nb * nb, y, h);
            kernels::copy(Op::N, c.rows_from, w, y + c.rows_to, h, xsend, c.rows_from);
            col.isend(xsend, c.rows_from * w, (root + c.from) % g.p(), kTagDown).wait();
            kernels::copy(Op::N, c.rows_to, w, y, h, xcur, w);
        }
        // This participant's rows of Q, in place of the panel: Q_leaf·[X; 0].
        const index_t lr = std::min(mr, w);
        kernels::scale(mr, w, T(0), pa, lda);
        kernels::copy(Op::N, lr, w, xcur, w, pa, lda);
        if (mr >= w) {
            // Q_leaf·[X; 0] = [X; 0] − V·(T·(V1ᴴ·X)) with V explicit in leaf and T from its Gram matrix: level 3
            // throughout, and half of ormqr's work (it cannot use the zero rows of [X; 0]).
            for (index_t j = 0; j < w; ++j) {
                for (index_t i = 0; i < j; ++i) leaf[i + j * ldl] = T(0);
                leaf[j + j * ldl] = T(1);
            }
            T* tl = y;
            T* z = y + w * w;
            gram_t(mr, w, leaf, ldl, leaf_tau, tl);
            kernels::gemm(Op::C, Op::N, w, w, w, T(1), leaf, ldl, xcur, w, T(0), z, w);
            kernels::gemm(Op::N, Op::N, w, w, w, T(1), tl, w, z, w, T(0), xsend, w);
            kernels::gemm(Op::N, Op::N, mr, w, w, T(-1), leaf, ldl, xsend, w, T(1), pa, lda);
        } else {
            kernels::ormqr(true, Op::N, mr, w, lr, leaf, ldl, leaf_tau, pa, lda);
        }
        if (me == 0) {
            std::vector<real_t<T>> sg;
            reconstruct_top(w, pa, lda, bc, bc + w * w, sg);
            // The diagonal block: S·R on and above the diagonal (R of the tree's root), L1 below.
            const T* rr = cur;
            for (index_t j = 0; j < w; ++j)
                for (index_t i = 0; i < w; ++i)
                    pa[i + j * lda] = i <= j ? T(sg[static_cast<std::size_t>(i)]) * rr[i + j * cur_ld] : bc[i + j * w];
        }
    }
    col.ibcast(bc, 2 * w * w, root).wait();
    kernels::copy(Op::N, w, w, bc + w * w, w, t, w);
    for (index_t i = 0; i < w; ++i) tau[i] = t[i + i * w];
    if (me >= np) return;
    // V = Q·U⁻¹ below the diagonal block.
    const index_t top = me == 0 ? w : 0;
    if (!gather && mr > top) kernels::trsm(false, false, Op::N, false, mr - top, w, T(1), bc, w, pa + top, lda);
    copy_v(mr, w, pa, lda, me == 0, v, ldv);
}

#define CALA_INST(T)                                                                                         \
    template void factor_panel<T>(const QrGeom&, index_t, int, const Comm&, T*, index_t, T*, index_t, T*, T*, \
                                  T*);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::detail

#pragma once
// The panel schedule of cala::geqrf / cala::ormqr on a p x q grid, shared by the engines
// (lib/qr/engine.cpp, panel.cpp, ormqr_right.cpp) and the cost model (lib/qr/model.cpp), so that the
// two walk the same steps. Pure arithmetic, no MPI.
//
// The layout has square blocks aligned with the diagonal (rows and columns: the same nb and
// first-block size ib), so row block l and column block l cover the same indices. Panel l is
// column block l: columns [c0, c0 + bs), its k_l = min(bs, kmax − c0) reflectors start on the
// diagonal, at row c0. Its rows [c0, m) are row blocks l, l+1, ...: the np = min(p, mt − l)
// process rows ro(l), ro(l)+1, ... (mod p) hold them; "participant" t is process row
// (ro(l) + t) mod p and holds panel_rows(l, row) of them (the first w of participant 0 are the
// diagonal block).
//
// TSQR (np > 1) reduces the participants' R factors (each min(rows, w) x w) pairwise: at level
// s, participant t (t mod 2^(s+1) == 0) receives the R of t + 2^s (if it exists) and factors the
// two stacked; the explicit Q goes back down the same tree with the same sizes.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cala/layout.hpp"

namespace cala::detail {

struct QrGeom {
    Dist1D rows, cols;
    index_t kmax = 0;  ///< reflectors in all: min(m, n) for geqrf, k for ormqr

    int p() const noexcept { return rows.nprocs; }
    int q() const noexcept { return cols.nprocs; }
    index_t mt() const noexcept { return rows.num_blocks(); }
    /// Panels: column blocks that start before kmax.
    index_t kt() const noexcept { return kmax == 0 ? 0 : cols.block_of(kmax - 1) + 1; }
    index_t c0(index_t l) const noexcept { return cols.block_start(l); }
    index_t bs(index_t l) const noexcept { return cols.block_size(l); }
    /// Reflectors of panel l.
    index_t w(index_t l) const noexcept { return std::min(bs(l), kmax - c0(l)); }
    int ro(index_t l) const noexcept { return rows.block_owner(l); }
    int co(index_t l) const noexcept { return cols.block_owner(l); }
    int np(index_t l) const noexcept { return static_cast<int>(std::min<index_t>(p(), mt() - l)); }
    /// Participant index of process row r in panel l (>= np: none).
    int part(index_t l, int r) const noexcept { return (r - ro(l) + p()) % p(); }
    /// Local rows of panel l on process row r (its rows >= c0).
    index_t panel_rows(index_t l, int r) const noexcept {
        return rows.local_size(r) - rows.local_before(c0(l), r);
    }
    index_t row0(index_t l, int r) const noexcept { return rows.local_before(c0(l), r); }
    /// Local columns of process column c right of panel l (trailing columns).
    index_t trail0(index_t l, int c) const noexcept { return cols.local_before(c0(l) + bs(l), c); }
    index_t trail(index_t l, int c) const noexcept { return cols.local_size(c) - trail0(l, c); }

    /// One pairwise reduction of the TSQR tree: `to` receives the `rows` x w R factor of `from`.
    struct Combine {
        int to, from;
        index_t rows_to, rows_from;  ///< rows of the two stacked R factors
    };
    /// The tree of panel l in order (bottom level first); empty when np <= 1.
    std::vector<Combine> tree(index_t l) const {
        std::vector<Combine> out;
        const int n = np(l);
        if (n <= 1) return out;
        const index_t wl = w(l);
        std::vector<index_t> rho(static_cast<std::size_t>(n));
        for (int t = 0; t < n; ++t) rho[t] = std::min(panel_rows(l, (ro(l) + t) % p()), wl);
        for (int s = 1; s < n; s *= 2)
            for (int t = 0; t + s < n; t += 2 * s) {
                out.push_back({t, t + s, rho[t], rho[t + s]});
                rho[t] = std::min(rho[t] + rho[t + s], wl);
            }
        return out;
    }
};

/// cala::ormqr(Side::Right): C's columns carry the indices of A's rows (the same nb and first
/// block; any source process and any q). Of panel l's V rows (global indices >= c0(l)), the
/// number process row pr holds and process column `pc` of C needs, for pr = 0 .. p-1: the parts
/// gathered down process column pc (ormqr_right.cpp) and counted by the model.
inline std::vector<index_t> right_parts(const QrGeom& g, const Dist1D& ccols, index_t l, int pc) {
    std::vector<index_t> out(static_cast<std::size_t>(g.p()), 0);
    for (index_t b = l; b < g.mt(); ++b)
        if (ccols.block_owner(b) == pc) out[static_cast<std::size_t>(g.rows.block_owner(b))] += g.rows.block_size(b);
    return out;
}

/// Elements of the workspace cala::ormqr(Side::Right) allocates on process (r, c): [T | V rows]
/// slot, the Gram matrix, the gathered parts and V in C's column order, W and Z.
inline index_t right_work(const QrGeom& g, const Dist1D& ccols, index_t mc, int r, int c) {
    const index_t nb = g.cols.nb;
    return nb * nb + g.rows.local_size(r) * nb + nb * nb + 2 * ccols.local_size(c) * nb + 2 * mc * nb;
}

/// Panels per group of delayed trailing updates (QrOptions::delay, engine.cpp): on one process
/// row (p = 1) `delay` if set, else 128 / nb panels (1 to 4), so that the trailing update
/// multiplies by V of about 128 columns at once (measured on Zen 5, n = 4096, 1 x 2: wider
/// groups lose more on the group's T and the panels' chain than their GEMMs gain; docs/qr.md);
/// 1 on p > 1 (every panel's W is summed down the process column there).
inline int qr_delay(const QrGeom& g, int delay) {
    if (g.p() > 1) return 1;
    if (delay > 0) return delay;
    return static_cast<int>(std::clamp<index_t>(128 / std::max<index_t>(g.cols.nb, 1), 1, 4));
}
/// Panel l's group of delayed updates: its first and last panel.
inline index_t qr_group_first(int delay, index_t l) { return l / delay * delay; }
inline index_t qr_group_last(const QrGeom& g, int delay, index_t l) {
    return std::min(g.kt() - 1, qr_group_first(delay, l) + delay - 1);
}
/// Elements of the workspace cala::geqrf allocates on process (r, c) (engine.cpp carves it up),
/// for `delay` = qr_delay(...) panels a group.
struct QrWork {
    int slots = 0;      ///< row-broadcast slots: delay + 1 (2 without delay)
    index_t vslot = 0;  ///< one slot: the panel's V rows and T
    index_t w = 0;      ///< W and Z of the trailing update (delay·nb rows each)
    index_t group = 0;  ///< delay > 1: two groups' V and T, each with two delay·nb x nb products building T
    index_t tsqr = 0;   ///< TSQR on the panel column: Q, the tree's stacked factors, U and T
    index_t total() const noexcept { return slots * vslot + 2 * w + group + tsqr; }
};
inline QrWork qr_work(const QrGeom& g, int r, int c, int delay) {
    QrWork out;
    const index_t nb = g.cols.nb, kw = delay * nb;
    const index_t mloc = g.rows.local_size(r), nloc = g.cols.local_size(c);
    if (g.kt() == 0) return out;
    out.slots = delay + 1;
    out.vslot = mloc * nb + nb * nb;
    out.w = kw * nloc;
    if (delay > 1) out.group = 2 * (mloc * kw + kw * kw + 2 * kw * nb);
    int levels = 0;
    for (int s = 1; s < g.p(); s *= 2) ++levels;
    // The leaf's factored rows and tau; per tree level the stacked pair and its tau; the
    // column broadcast [L\U | T], the R or X in flight, X, and Y of the way down.
    if (g.p() > 1) out.tsqr = mloc * nb + nb + levels * (2 * nb * nb + nb) + 6 * nb * nb;
    return out;
}
}  // namespace cala::detail

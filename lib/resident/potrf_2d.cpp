// The resident 2D Cholesky: tiles stay in device memory; the diagonal tile, the panel and its
// transposed pieces travel from device memory (PanelMover: NCCL, or MPI staged through host
// slots); Device::potrf / trsm / herk / gemm do the flops. Schedule: potrf_geom.hpp.
//
//   2 x 2 grid, Lower, 4 tiles, step l = 0 (tile (i, j) on process (i mod 2, j mod 2)):
//     (0,0) potrf L00; L00 down column 0 to (1,0)
//     (0,0) trsm L20; (1,0) trsm L10, L30
//     along row 0: (0,0) -> (0,1) [L20];  along row 1: (1,0) -> (1,1) [L10 L30]
//     down column 0: (1,0) -> (0,0) [L10];  down column 1: (1,1) -> (0,1) [L10 L30]
//     (in column c, each process row r' sends the tiles j with ro(j) = r', co(j) = c)
//     update: (i, j) -= L(i,0)·L(j,0)ᴴ, herk where i = j, on the tile's owner
// With lookahead 1 the next panel's column (l + 1) is updated first, then panel l + 1 is
// factored, solved and its row broadcast posted before the rest of step l's update.
// Layered (resident_potrf_layer, for potrf_25d.cpp: h > 1, Lower): the same steps on one layer,
// with the host engine's fiber steps through host memory: the diagonal tile all-reduced before
// step 1, the panel tiles reduced onto their home layers before step 3 (solved there, tile by
// tile), the solved tiles or slices sent to the update layers after it, which assemble their
// panel in a slot; steps 4-6 with this layer's slice (width 0: nothing on this layer).

#include "resident/potrf_2d.hpp"

#include <algorithm>
#include <vector>

#include "core/workspace.hpp"
#include "resident/transport.hpp"

namespace cala::detail {

namespace {

template <class T>
class Engine {
public:
    Engine(bool upper, const ResPotrfGeom& g, const Side<T>& a, const Comm* fiber, bool nccl, int ordinal)
        : up_(upper), a_(a), dev_(*a.dev), g_(g), fiber_(fiber), mover_(dev_, *a.grid, nccl, ordinal),
          sl_(g_.slots()), dslot_(dev_, sl_.diag), rslot_(dev_, 2 * sl_.rows), cslot_(dev_, 2 * sl_.cols),
          dhost_(nccl ? 0 : sl_.diag), rhost_(nccl ? 0 : 2 * sl_.rows), chost_(nccl ? 0 : 2 * sl_.cols) {}

    index_t run(int lookahead) {
        const index_t mt = g_.mt();
        if (mt == 0) return 0;
        panel(0);
        for (index_t l = 0; l < mt; ++l) {
            columns(l);
            if (lookahead > 0 && l + 1 < mt) {
                update(l, l + 1, l + 2);
                panel(l + 1);
                update(l, l + 2, mt);
            } else {
                update(l, l + 1, mt);
                if (l + 1 < mt) panel(l + 1);
            }
        }
        return dev_.take_info();
    }

private:
    // A virtual element (x, y) of an array with leading dimension ld (Upper: transposed).
    T* at(T* p, index_t ld, index_t x, index_t y) const { return up_ ? p + y + x * ld : p + x + y * ld; }
    T* loc(index_t x, index_t y) const { return at(a_.data, a_.ld, x, y); }
    // A virtual rows x cols block from src to dst.
    void copy(T* dst, index_t ld_dst, const T* src, index_t ld_src, index_t rows, index_t cols) {
        if (rows == 0 || cols == 0) return;
        const index_t m = up_ ? cols : rows, n = up_ ? rows : cols;
        dev_.copy_from_peer(copy2d(dst, ld_dst, src, ld_src, m, n), dev_);
    }
    // The virtual leading dimension of a packed rows x b piece.
    index_t ld_of(index_t rows, index_t b) const { return std::max<index_t>(1, up_ ? b : rows); }
    // Pieces on the virtual row / column communicators.
    Piece<T> piece(T* d, T* h, index_t count, int root, bool virtual_row) const {
        return {d, h, count, root, virtual_row != up_};
    }

    // Steps 1-4 of step l: factor, send down, solve, post the row broadcast (layered: the
    // diagonal tile and the panel summed over the fiber first, the solved panel to the layer
    // that updates with it after).
    void panel(index_t l) {
        const index_t b = g_.size(l), w = g_.width(l);
        const device::Scalar s = device::scalar_of<T>();
        const bool in_col = g_.c == g_.co(l), diag = in_col && g_.r == g_.ro(l), layered = g_.h > 1;
        T* d = diag ? loc(g_.xr(l), g_.yc(l)) : nullptr;
        if (diag && layered) fiber_allreduce(d, b);
        if (diag) dev_.potrf(s, !up_, b, d, a_.ld, g_.start(l));
        const T* lp = d;
        index_t ldl = a_.ld;
        std::vector<Piece<T>> dp;
        if (g_.diag_travels(l)) {
            if (diag) copy(dslot_.data(), b, d, a_.ld, b, b);
            dp.push_back(piece(dslot_.data(), dhost_.data(), b * b, g_.ro(l), false));
            lp = dslot_.data(), ldl = b;
        }
        mover_.post(std::move(dp));
        mover_.wait_front();
        // The panel rows of this virtual row: solved in place on column co(l), a slot elsewhere
        // (layered: the slot everywhere, assembled from the home layers' tiles).
        const index_t x0 = g_.x0(l), nrows = g_.nrows(l);
        T* rs = rslot_.data() + (l % 2) * sl_.rows;
        T* rh = rhost_.data() ? rhost_.data() + (l % 2) * sl_.rows : nullptr;
        const T one(1);
        if (in_col && layered) {
            const auto mine = g_.panel_rows(l, g_.r, g_.me);
            reduce_panel(l);
            for (index_t i : mine)
                dev_.trsm(s, false, true, Op::C, false, g_.size(i), b, &one, lp, ldl, loc(g_.xr(i), g_.yc(l)), a_.ld);
            distribute(l, mine, rs);
        } else if (in_col && nrows > 0) {
            T* x = loc(x0, g_.yc(l));
            if (up_) dev_.trsm(s, true, false, Op::C, false, b, nrows, &one, lp, ldl, x, a_.ld);
            else dev_.trsm(s, false, true, Op::C, false, nrows, b, &one, lp, ldl, x, a_.ld);
        }
        const bool in_place = in_col && !layered;
        next_ = Panel{l, w, x0, nrows, in_place ? loc(x0, g_.yc(l)) : rs, in_place ? a_.ld : ld_of(nrows, w)};
        std::vector<Piece<T>> rp;
        if (g_.row_travels(l)) {
            if (in_place) copy(rs, ld_of(nrows, b), next_.r, next_.ldr, nrows, b);
            rp.push_back(piece(rs, rh, nrows * w, g_.co(l), true));
        }
        mover_.post(std::move(rp));
    }

    // Layered step A: the diagonal tile d (b x b) summed over the fiber, through host memory.
    void fiber_allreduce(T* d, index_t b) {
        Buffer<T> h = to_host(dev_, static_cast<const T*>(d), a_.ld, b, b);
        fiber_->iallreduce_sum(h.data(), b * b).wait();
        to_device(dev_, d, a_.ld, h.data(), b, b);
    }

    // Layered step D: the partial sums of the panel tiles of my process row reduced onto their
    // home layers (one message per home layer), through host memory.
    void reduce_panel(index_t l) {
        const index_t b = g_.size(l);
        std::vector<Buffer<T>> bufs(static_cast<std::size_t>(g_.h));
        std::vector<std::vector<index_t>> tiles(static_cast<std::size_t>(g_.h));
        for (int t = 0; t < g_.h; ++t) {
            tiles[t] = g_.panel_rows(l, g_.r, t);
            bufs[t] = Buffer<T>(g_.rows_of(tiles[t]) * b);
            move_tiles(tiles[t], l, 0, b, bufs[t].data(), true);
        }
        dev_.synchronize();
        std::vector<Request> reqs;
        for (int t = 0; t < g_.h; ++t)
            if (!tiles[t].empty())
                reqs.push_back(fiber_->ireduce_sum(bufs[t].data(), bufs[t].data(), bufs[t].size(), t));
        wait_all(reqs);
        move_tiles(tiles[g_.me], l, 0, b, bufs[g_.me].data(), false);
        dev_.synchronize();
    }

    // Layered step F: my solved tiles' column slices to the layers that update with them; on
    // this layer, when it updates, the panel of my process row assembled in rs (ld nrows) from
    // my tiles and what the other home layers send.
    void distribute(index_t l, const std::vector<index_t>& mine, T* rs) {
        const int h = g_.h;
        std::vector<Buffer<T>> out(static_cast<std::size_t>(h)), in(static_cast<std::size_t>(h));
        const index_t mrows = g_.rows_of(mine);
        for (int t = 0; t < h && mrows > 0; ++t) {
            const auto [a0, a1] = g_.slice(l, t);
            if (t == g_.me || a1 == a0) continue;
            out[t] = Buffer<T>(mrows * (a1 - a0));
            move_tiles(mine, l, a0, a1 - a0, out[t].data(), true);
        }
        dev_.synchronize();
        std::vector<Request> reqs;
        for (int t = 0; t < h; ++t)
            if (out[t].size() > 0) reqs.push_back(fiber_->isend(out[t].data(), out[t].size(), t, 71));
        const auto [s0, s1] = g_.slice(l, g_.me);
        const index_t w = s1 - s0;
        if (w > 0)
            for (int t = 0; t < h; ++t) {
                const index_t rows = g_.rows_of(g_.panel_rows(l, g_.r, t));
                if (t == g_.me || rows == 0) continue;
                in[t] = Buffer<T>(rows * w);
                reqs.push_back(fiber_->irecv(in[t].data(), in[t].size(), t, 71));
            }
        wait_all(reqs);
        if (w == 0) return;
        const index_t nrows = g_.nrows(l);
        std::vector<index_t> off(static_cast<std::size_t>(h), 0);
        for (index_t i = l + 1; i < g_.mt(); ++i) {
            if (g_.ro(i) != g_.r) continue;
            const int t = g_.home(i);
            const index_t bi = g_.size(i);
            T* dst = rs + (g_.xr(i) - g_.x0(l));
            if (t == g_.me) copy(dst, nrows, loc(g_.xr(i), g_.yc(l) + s0), a_.ld, bi, w);
            else {
                const index_t rows_t = static_cast<index_t>(in[t].size()) / w;
                dev_.copy_to_device(copy2d(dst, nrows, static_cast<const T*>(in[t].data() + off[t]), rows_t, bi, w));
                off[t] += bi;
            }
        }
        dev_.synchronize();
    }

    // Columns [c0, c0 + nc) of the tiles (tl, l) into host memory at buf, stacked (ld: their
    // rows), or (to_host false) back from it into the tiles (asynchronous: synchronize after).
    void move_tiles(const std::vector<index_t>& tl, index_t l, index_t c0, index_t nc, T* buf, bool out) {
        const index_t ld = std::max<index_t>(1, g_.rows_of(tl));
        index_t at = 0;
        for (index_t i : tl) {
            T* t = loc(g_.xr(i), g_.yc(l) + c0);
            if (out) dev_.copy_to_host(copy2d(buf + at, ld, static_cast<const T*>(t), a_.ld, g_.size(i), nc));
            else dev_.copy_to_device(copy2d(t, a_.ld, static_cast<const T*>(buf + at), ld, g_.size(i), nc));
            at += g_.size(i);
        }
    }

    // Step 5 of step l: its row broadcast landed; the column pieces go down (packed from the
    // panel rows by their virtual row), and land.
    void columns(index_t l) {
        mover_.wait_front();
        pn_ = next_;
        const index_t b = pn_.b;
        group_.assign(static_cast<std::size_t>(g_.vp()), nullptr);
        std::vector<Piece<T>> cp;
        if (g_.vp() > 1 && b > 0) {
            index_t off = 0;
            T* cs = cslot_.data() + (l % 2) * sl_.cols;
            T* ch = chost_.data() ? chost_.data() + (l % 2) * sl_.cols : nullptr;
            for (int rp = 0; rp < g_.vp(); ++rp) {
                const auto tl = g_.column_tiles(l, rp, g_.c);
                if (tl.empty()) continue;
                const index_t rows = g_.rows_of(tl), ld = ld_of(rows, b);
                T* grp = cs + off;
                group_[rp] = grp;
                if (rp == g_.r) {
                    index_t at_row = 0;
                    for (index_t j : tl) {
                        const T* src = at(pn_.r, pn_.ldr, g_.xr(j) - pn_.x0, 0);
                        copy(at(grp, ld, at_row, 0), ld, src, pn_.ldr, g_.size(j), b);
                        at_row += g_.size(j);
                    }
                }
                cp.push_back(piece(grp, ch ? ch + off : nullptr, rows * b, rp, false));
                off += rows * b;
            }
        }
        mover_.post(std::move(cp));
        mover_.wait_front();
    }

    // L(j, l) of my column j: in the panel rows when its row is mine, else in its group.
    std::pair<const T*, index_t> col_piece(index_t l, index_t j) const {
        const int rp = g_.ro(j);
        if (rp == g_.r) return {at(pn_.r, pn_.ldr, g_.xr(j) - pn_.x0, 0), pn_.ldr};
        const auto tl = g_.column_tiles(l, rp, g_.c);
        const index_t rows = g_.rows_of(tl);
        index_t off = 0;
        for (index_t x : tl) {
            if (x == j) break;
            off += g_.size(x);
        }
        return {at(group_[rp], ld_of(rows, pn_.b), off, 0), ld_of(rows, pn_.b)};
    }

    // Step 6 of step l on my columns j in [j0, j1): (i, j) -= L(i, l)·L(j, l)ᴴ for my i >= j.
    void update(index_t l, index_t j0, index_t j1) {
        const device::Scalar s = device::scalar_of<T>();
        const real_t<T> rm(-1), rone(1);
        const T m1(-1), one(1);
        const index_t b = pn_.b;  // (layered: this layer's slice of the panel; 0: no update here)
        for (index_t j = std::max(j0, l + 1); b > 0 && j < std::min(j1, g_.mt()); ++j) {
            if (g_.co(j) != g_.c) continue;
            index_t fi = j;
            while (fi < g_.mt() && g_.ro(fi) != g_.r) ++fi;
            if (fi == g_.mt()) continue;
            const index_t xf = g_.xr(fi), rows = g_.rows_loc() - xf, bj = g_.size(j), y = g_.yc(j);
            const T* ri = at(pn_.r, pn_.ldr, xf - pn_.x0, 0);
            index_t done = 0;
            if (fi == j) {
                dev_.herk(s, !up_, up_ ? Op::C : Op::N, bj, b, &rm, ri, pn_.ldr, &rone, loc(xf, y), a_.ld);
                done = bj;
            }
            if (rows > done) {
                const auto [pj, ldp] = col_piece(l, j);
                const T* rb = at(pn_.r, pn_.ldr, xf + done - pn_.x0, 0);
                if (up_)
                    dev_.gemm(s, Op::C, Op::N, bj, rows - done, b, &m1, pj, ldp, rb, pn_.ldr, &one, loc(xf + done, y),
                              a_.ld);
                else
                    dev_.gemm(s, Op::N, Op::C, rows - done, bj, b, &m1, rb, pn_.ldr, pj, ldp, &one, loc(xf + done, y),
                              a_.ld);
            }
            mover_.poll();
        }
    }

    struct Panel {
        index_t l = 0, b = 0, x0 = 0, nrows = 0;  // b: the panel's columns (layered: this layer's slice)
        T* r = nullptr;  // the panel rows (virtual nrows x b)
        index_t ldr = 1;
    };

    bool up_;
    Side<T> a_;
    device::Device& dev_;
    ResPotrfGeom g_;
    const Comm* fiber_;  // layered: the fiber through (row, col); else null
    PanelMover<T> mover_;
    ResPotrfGeom::Slots sl_;
    DeviceArray<T> dslot_, rslot_, cslot_;
    Buffer<T> dhost_, rhost_, chost_;
    Panel next_, pn_;  // the panel being built (steps 1-4), the one being applied (5, 6)
    std::vector<T*> group_;
};

}  // namespace

template <class T>
index_t resident_potrf_2d(bool upper, const Side<T>& a, int lookahead, bool nccl, int ordinal) {
    Engine<T> e(upper, res_potrf_geom(upper, a.layout, a.grid->row(), a.grid->col()), a, nullptr, nccl, ordinal);
    const index_t info = e.run(lookahead);
    a.dev->synchronize();
    return info;
}

template <class T>
index_t resident_potrf_layer(const ResPotrfGeom& g, const Side<T>& a, const Comm& fiber, int lookahead, bool nccl,
                             int ordinal) {
    Engine<T> e(false, g, a, &fiber, nccl, ordinal);
    const index_t info = e.run(lookahead);
    a.dev->synchronize();
    return info;
}

#define CALA_INST(T)                                                            \
    template index_t resident_potrf_2d<T>(bool, const Side<T>&, int, bool, int); \
    template index_t resident_potrf_layer<T>(const ResPotrfGeom&, const Side<T>&, const Comm&, int, bool, int);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::detail

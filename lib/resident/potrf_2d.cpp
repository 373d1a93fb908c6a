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
    Engine(bool upper, const Side<T>& a, bool nccl, int ordinal)
        : up_(upper), a_(a), dev_(*a.dev), g_(res_potrf_geom(upper, a.layout, a.grid->row(), a.grid->col())),
          mover_(dev_, *a.grid, nccl, ordinal), sl_(g_.slots()), dslot_(dev_, sl_.diag), rslot_(dev_, 2 * sl_.rows),
          cslot_(dev_, 2 * sl_.cols), dhost_(nccl ? 0 : sl_.diag), rhost_(nccl ? 0 : 2 * sl_.rows),
          chost_(nccl ? 0 : 2 * sl_.cols) {}

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

    // Steps 1-4 of step l: factor, send down, solve, post the row broadcast.
    void panel(index_t l) {
        const index_t b = g_.size(l);
        const device::Scalar s = device::scalar_of<T>();
        const bool in_col = g_.c == g_.co(l), diag = in_col && g_.r == g_.ro(l);
        T* d = diag ? loc(g_.xr(l), g_.yc(l)) : nullptr;
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
        // The panel rows of this virtual row: solved in place on column co(l), a slot elsewhere.
        const index_t x0 = g_.x0(l), nrows = g_.nrows(l);
        T* rs = rslot_.data() + (l % 2) * sl_.rows;
        T* rh = rhost_.data() ? rhost_.data() + (l % 2) * sl_.rows : nullptr;
        if (in_col && nrows > 0) {
            T* x = loc(x0, g_.yc(l));
            const T one(1);
            if (up_) dev_.trsm(s, true, false, Op::C, false, b, nrows, &one, lp, ldl, x, a_.ld);
            else dev_.trsm(s, false, true, Op::C, false, nrows, b, &one, lp, ldl, x, a_.ld);
        }
        next_ = Panel{l, b, x0, nrows, in_col ? loc(x0, g_.yc(l)) : rs, in_col ? a_.ld : ld_of(nrows, b)};
        std::vector<Piece<T>> rp;
        if (g_.row_travels(l)) {
            if (in_col) copy(rs, ld_of(nrows, b), next_.r, next_.ldr, nrows, b);
            rp.push_back(piece(rs, rh, nrows * b, g_.co(l), true));
        }
        mover_.post(std::move(rp));
    }

    // Step 5 of step l: its row broadcast landed; the column pieces go down (packed from the
    // panel rows by their virtual row), and land.
    void columns(index_t l) {
        mover_.wait_front();
        pn_ = next_;
        const index_t b = pn_.b;
        group_.assign(static_cast<std::size_t>(g_.vp()), nullptr);
        std::vector<Piece<T>> cp;
        if (g_.vp() > 1) {
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
        const index_t b = pn_.b;
        for (index_t j = std::max(j0, l + 1); j < std::min(j1, g_.mt()); ++j) {
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
        index_t l = 0, b = 0, x0 = 0, nrows = 0;
        T* r = nullptr;  // the panel rows (virtual nrows x b)
        index_t ldr = 1;
    };

    bool up_;
    Side<T> a_;
    device::Device& dev_;
    ResPotrfGeom g_;
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
    Engine<T> e(upper, a, nccl, ordinal);
    const index_t info = e.run(lookahead);
    a.dev->synchronize();
    return info;
}

#define CALA_INST(T) template index_t resident_potrf_2d<T>(bool, const Side<T>&, int, bool, int);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::detail

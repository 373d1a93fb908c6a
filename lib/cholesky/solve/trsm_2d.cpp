// The tile loop of cala::trsm: B := A⁻¹·B with A triangular, its square tiles lined up with the
// row blocks of B (A's rows and B's rows share one Dist1D R over p; A's columns are blocked
// alike over q).
//
// Lower (forward substitution), step k = 0, 1, ..., K-1 (upper: k = K-1, ..., 0, mirrored):
//   panel  process column k%q broadcasts its local rows of A(k:, k) along each process row
//          (A is only read, so panels go out `lookahead` steps ahead);
//   solve  process row k%p solves B_k := A_kk⁻¹·B_k on its local columns (A_kk is the top of
//          the panel there);
//   X_k    process row k%p broadcasts the solved B_k (wk x nrhs_loc) down every process column;
//   update every rank: B(i, :) -= A(i, k)·X_k over its local rows of blocks i > k, one GEMM.
// Lookahead (>= 1): the rows of block k+1 are updated first, solved, and X_{k+1} posted before
// the rest of the update, which runs in chunks with MPI progress in between. A root reads its own
// copy of what it broadcasts and waits for the broadcast only before reusing the slot.
//
//   2 x 2 grid, R and A's columns start on process 0, K = 3, lower:
//   k=0: (r,0) -> (r,1) A(0:,0)|r-rows;  (0,c) solves B_0, (0,c) -> (1,c) X_0;  all update
//   k=1: (r,1) -> (r,0) A(1:,1)|r-rows;  (1,c) solves B_1, (1,c) -> (0,c) X_1;  all update
//   k=2: (r,0) -> (r,1) A(2:,2)|r-rows;  (0,c) solves B_2, (0,c) -> (1,c) X_2

#include <algorithm>
#include <vector>

#include "cholesky/solve/panels.hpp"

namespace cala::detail {

template <class T>
void trsm_2d(bool lower, bool unit, int lookahead, const MatrixRef<T>& a, const MatrixRef<T>& b) {
    const Grid2D& grid = b.grid();
    const int p = grid.p(), r = grid.row(), c = grid.col();
    const Dist1D& R = a.layout().rows;
    const index_t nblk = R.num_blocks(), n_loc = b.n_loc();
    if (nblk == 0 || b.n() == 0) return;
    const auto buf = trsm_buffers(a.layout(), b.layout(), Op::N, lookahead, r, c);
    Panels<T> panels(a, lower, Op::N, buf);
    Buffer<T> xbuf(buf.x_elems);
    std::vector<Request> xreq(static_cast<std::size_t>(buf.slots_x));
    const index_t slot_x = buf.wmax * n_loc;
    auto poll = [&] {
        panels.poll();
        test_all(xreq);
    };

    // X_s: where the solved block row is read from (the slot, or B itself when p == 1).
    auto x_of = [&](index_t s) -> Piece<T> {
        const auto sr = panels.rows(s);
        if (p == 1) return {local_ptr(b, sr.d0, 0), b.ld()};
        return {xbuf.data() + (s % buf.slots_x) * slot_x, std::max<index_t>(sr.w, 1)};
    };
    // The owner row solves its block row and every process column broadcasts it.
    auto solve_and_post = [&](index_t s) {
        const auto sr = panels.rows(s);
        if (sr.owner) {
            panels.wait(s);
            const auto pa = panels.get(s);
            if (n_loc > 0)
                kernels::trsm(true, lower, Op::N, unit, sr.w, n_loc, T(1), pa.data + (sr.d0 - sr.p0), pa.ld,
                              local_ptr(b, sr.d0, 0), b.ld());
        }
        if (p == 1 || n_loc == 0) return;
        T* dst = xbuf.data() + (s % buf.slots_x) * slot_x;
        xreq[static_cast<std::size_t>(s % buf.slots_x)].wait();  // the slot's previous block row
        if (sr.owner) kernels::copy(Op::N, sr.w, n_loc, local_ptr(b, sr.d0, 0), b.ld(), dst, sr.w);
        const index_t k = block_of_step(lower, Op::N, nblk, s);
        xreq[static_cast<std::size_t>(s % buf.slots_x)] = grid.col_comm().ibcast(dst, sr.w * n_loc, R.block_owner(k));
    };
    // B(rows [i0, i1), :) -= panel(s) rows · X_s, in chunks with MPI progress in between.
    auto update = [&](index_t s, index_t i0, index_t i1, bool progress) {
        const index_t rows = i1 - i0;
        if (rows <= 0 || n_loc == 0) return;
        const auto sr = panels.rows(s);
        const auto pa = panels.get(s);
        const auto x = x_of(s);
        const bool along_m = n_loc < rows;
        const index_t len = along_m ? rows : n_loc, step = chunk_width(len, progress);
        for (index_t x0 = 0; x0 < len; x0 += step) {
            const index_t nx = std::min(step, len - x0);
            const index_t ri = along_m ? i0 + x0 : i0, nr = along_m ? nx : rows;
            const index_t cj = along_m ? 0 : x0, nc = along_m ? n_loc : nx;
            kernels::gemm(Op::N, Op::N, nr, nc, sr.w, T(-1), pa.data + (ri - sr.p0), pa.ld, x.data + cj * x.ld, x.ld,
                          T(1), local_ptr(b, ri, cj), b.ld());
            if (progress) poll();
        }
    };

    const index_t ahead = std::min<index_t>(lookahead, nblk - 1);
    for (index_t s = 0; s <= ahead; ++s) panels.post(s);
    solve_and_post(0);
    for (index_t s = 0; s < nblk; ++s) {
        const auto sr = panels.rows(s);
        if (!sr.owner) xreq[static_cast<std::size_t>(s % buf.slots_x)].wait();  // the owner sent its own copy
        panels.wait(s);
        index_t u0 = sr.u0, u1 = sr.u1;
        if (lookahead > 0 && s + 1 < nblk) {
            // The next block row first: on its owner row it is the end of the update range
            // nearest the diagonal.
            const auto nx = panels.rows(s + 1);
            if (nx.owner) {
                if (lower) update(s, u0, u0 + nx.w, false), u0 += nx.w;
                else update(s, u1 - nx.w, u1, false), u1 -= nx.w;
            }
            solve_and_post(s + 1);
        }
        update(s, u0, u1, lookahead > 0);
        if (s + lookahead + 1 < nblk) panels.post(s + lookahead + 1);
        if (lookahead == 0 && s + 1 < nblk) solve_and_post(s + 1);
    }
}

#define CALA_INST(T) template void trsm_2d<T>(bool, bool, int, const MatrixRef<T>&, const MatrixRef<T>&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::detail

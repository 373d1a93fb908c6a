// The resident solve B := A⁻¹·B, A triangular (op = N), on device tiles. The schedule is the host
// trsm_2d.cpp's (the same pieces from the same roots, so potrs_cost counts them); here the flops
// are Device::trsm / gemm and every piece is packed into a device slot and posted on the mover.
//
// Step s solves block k (forward for lower, backward for upper):
//   A(k:, k) | rows of process row r:  column k%q -> the rest of row r   (q > 1, r has such rows)
//   B_k solved on process row k%p, packed: row k%p -> the rest of each column   (p > 1)
//   then each rank subtracts A(i, k)·X_k from its rows of the blocks after k (one gemm)
//
//   1 x 2 grid (p = 1: X_k is read from B itself), lower, 3 blocks, columns cyclic from 0:
//     s=0: (0,0) packs A(0:,0), -> (0,1);  both solve B_0 on their columns, update B_1, B_2
//     s=1: (0,1) packs A(1:,1), -> (0,0);  both solve B_1, update B_2
//     s=2: (0,0) packs A(2,2),  -> (0,1);  both solve B_2
// Lookahead 1: step s updates block s+1's rows first, solves them and posts X_{s+1}, then the rest.
//
// Panels and solved rows share one mover, whose steps land in posting order: waiting for X_s also
// waits for the panels posted before it. Every rank posts at the same points of the loop, so no
// rank waits for a piece whose root has yet to post it.

#include "resident/potrs_2d.hpp"

namespace cala::detail {

template <class T>
void res_trsm_2d(bool lower, bool unit, int lookahead, const Side<T>& a, const Side<T>& b, Tickets<T>& tickets,
                 bool staged) {
    const Grid2D& grid = *b.grid;
    const int p = grid.p(), r = grid.row(), c = grid.col();
    const Dist1D& R = a.layout.rows;
    const index_t nblk = R.num_blocks(), n_loc = b.n_loc();
    if (nblk == 0 || b.layout.n() == 0) return;
    device::Device& dev = *a.dev;
    const device::Scalar sc = device::scalar_of<T>();
    const T one(1), m1(-1);
    const auto buf = trsm_buffers(a.layout, b.layout, Op::N, lookahead, r, c);
    ResPanels<T> panels(a, lower, Op::N, buf, tickets, staged);
    DeviceArray<T> xdev(dev, buf.x_elems);
    Buffer<T> xhost(staged ? buf.x_elems : 0);
    std::vector<index_t> xticket(static_cast<std::size_t>(nblk), -1);
    const index_t slot_x = buf.wmax * n_loc;
    auto brow = [&](index_t i) { return b.data + i; };

    // X_s: the solved block row (the slot, or B itself when p == 1).
    auto x_of = [&](index_t s) -> std::pair<const T*, index_t> {
        const auto sr = panels.rows(s);
        if (p == 1) return {brow(sr.d0), b.ld};
        return {xdev.data() + (s % buf.slots_x) * slot_x, std::max<index_t>(sr.w, 1)};
    };
    // The owner row solves its block row and every process column broadcasts it.
    auto solve_and_post = [&](index_t s) {
        const auto sr = panels.rows(s);
        if (sr.owner && n_loc > 0) {
            panels.wait(s);
            const auto [pa, ld] = panels.get(s);
            dev.trsm(sc, true, lower, Op::N, unit, sr.w, n_loc, &one, pa + (sr.d0 - sr.p0), ld, brow(sr.d0), b.ld);
        }
        if (p == 1 || n_loc == 0) return;
        const index_t off = (s % buf.slots_x) * slot_x;
        if (sr.owner) dev.copy_from_peer(copy2d(xdev.data() + off, sr.w, brow(sr.d0), b.ld, sr.w, n_loc), dev);
        const index_t k = block_of_step(lower, Op::N, nblk, s);
        xticket[static_cast<std::size_t>(s)] = tickets.post(
            {Piece<T>{xdev.data() + off, xhost.data() ? xhost.data() + off : nullptr, sr.w * n_loc, R.block_owner(k),
                      false}});
    };
    // B(rows [i0, i1), :) -= panel(s) rows · X_s.
    auto update = [&](index_t s, index_t i0, index_t i1) {
        if (i1 <= i0 || n_loc == 0) return;
        const auto sr = panels.rows(s);
        const auto [pa, ld] = panels.get(s);
        const auto [x, ldx] = x_of(s);
        dev.gemm(sc, Op::N, Op::N, i1 - i0, n_loc, sr.w, &m1, pa + (i0 - sr.p0), ld, x, ldx, &one, brow(i0), b.ld);
        tickets.poll();
    };

    for (index_t t = 0; t <= std::min<index_t>(lookahead, nblk - 1); ++t) panels.post(t);
    solve_and_post(0);
    for (index_t s = 0; s < nblk; ++s) {
        tickets.wait(xticket[static_cast<std::size_t>(s)]);
        panels.wait(s);
        const StepRows sr = panels.rows(s);
        const bool early = lookahead > 0 && s + 1 < nblk;  // block s+1 goes first
        // Block s+1's rows here (none off its owner row): the end of the range nearest the diagonal.
        const index_t nw = early && panels.rows(s + 1).owner ? panels.rows(s + 1).w : 0;
        const index_t f0 = lower ? sr.u0 : sr.u1 - nw;
        update(s, f0, f0 + nw);
        if (early) solve_and_post(s + 1);
        update(s, lower ? sr.u0 + nw : sr.u0, lower ? sr.u1 : sr.u1 - nw);
        if (s + lookahead + 1 < nblk) panels.post(s + lookahead + 1);
        if (lookahead == 0 && s + 1 < nblk) solve_and_post(s + 1);
    }
    dev.synchronize();  // the slots are released at return
}

template <class T>
void resident_solves_2d(bool lower, std::initializer_list<Op> ops, bool unit, int lookahead, const Side<T>& a,
                        const Side<T>& b, bool nccl, int ordinal) {
    Tickets<T> tickets(*a.dev, *b.grid, nccl, ordinal);
    for (Op op : ops) {
        if (op == Op::N) res_trsm_2d(lower, unit, lookahead, a, b, tickets, !nccl);
        else res_trsm_2d_trans(lower, op, unit, lookahead, a, b, tickets, !nccl);
    }
    if (!tickets.drained()) throw Error("resident solve: a posted piece was never waited for (internal error)");
}

template <class T>
void resident_potrs_2d(Uplo uplo, int lookahead, const Side<T>& a, const Side<T>& b, bool nccl, int ordinal) {
    // Lower: L·Y = B, then Lᴴ·X = Y.  Upper: Uᴴ·Y = B, then U·X = Y.
    if (uplo == Uplo::Lower) resident_solves_2d(true, {Op::N, Op::C}, false, lookahead, a, b, nccl, ordinal);
    else resident_solves_2d(false, {Op::C, Op::N}, false, lookahead, a, b, nccl, ordinal);
}

#define CALA_INST(T)                                                                                           \
    template void res_trsm_2d<T>(bool, bool, int, const Side<T>&, const Side<T>&, Tickets<T>&, bool);        \
    template void resident_solves_2d<T>(bool, std::initializer_list<Op>, bool, int, const Side<T>&, const Side<T>&, \
                                        bool, int);                                                          \
    template void resident_potrs_2d<T>(Uplo, int, const Side<T>&, const Side<T>&, bool, int);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::detail

// The resident solve B := op(A)⁻¹·B, op = T/C, on device tiles, reading the stored triangle as it
// is. The schedule is the host trsm_2d_trans.cpp's (left-looking: the same panels and reductions,
// so potrs_cost counts them); the flops are Device::gemm / trsm.
//
// Step s solves block k (backward for A lower, forward for A upper). Every rank of process column
// c sums, into a device slot, -op(A(i, k))·X_i over the blocks i it solved before (its rows of the
// step's panel, received along the process row as in the op = N loop); the owner row k%p starts
// from B_k instead of zero. The slots go to host memory and are reduced (MPI ireduce, on either
// transport) to the owner row, which copies the sum into B_k and solves it with op(A_kk).
//
//   3 x 1 grid (q = 1: panels read from A itself), A lower, 3 blocks, rows cyclic from 0:
//     s=0, k=2: (2) Z = B_2;  (0), (1) Z = 0                       -> (2) solves X_2
//     s=1, k=1: (1) Z = B_1;  (2) Z = -op(A_21)·X_2;  (0) Z = 0    -> (1) solves X_1
//     s=2, k=0: (0) Z = B_0;  (1) -op(A_10)·X_1;  (2) -op(A_20)·X_2 -> (0) solves X_0
// Only the owner row waits for its reduction, and with lookahead 1 it first sums, while Z travels,
// the part of its next partial that does not need X_k (added once X_k is solved).

#include "resident/potrs_2d.hpp"

namespace cala::detail {

template <class T>
void res_trsm_2d_trans(bool lower, Op op, bool unit, int lookahead, const Side<T>& a, const Side<T>& b,
                       Tickets<T>& tickets, bool staged) {
    const Grid2D& grid = *b.grid;
    const int p = grid.p(), r = grid.row(), c = grid.col();
    const Dist1D& R = a.layout.rows;
    const index_t nblk = R.num_blocks(), n_loc = b.n_loc();
    if (nblk == 0 || b.layout.n() == 0) return;
    device::Device& dev = *a.dev;
    const device::Scalar sc = device::scalar_of<T>();
    const T one(1), m1(-1), zero(0);
    const auto buf = trsm_buffers(a.layout, b.layout, op, lookahead, r, c);
    ResPanels<T> panels(a, lower, op, buf, tickets, staged);
    DeviceArray<T> zdev(dev, buf.x_elems);
    Buffer<T> zhost(buf.x_elems);
    std::vector<Request> zreq(static_cast<std::size_t>(buf.slots_x));
    const index_t slot_z = buf.wmax * n_loc;
    auto brow = [&](index_t i) { return b.data + i; };
    auto slot = [&](index_t s) { return static_cast<std::size_t>(s % buf.slots_x); };
    auto z_of = [&](index_t s) { return zdev.data() + (s % buf.slots_x) * slot_z; };
    auto poll = [&] {
        tickets.poll();
        test_all(zreq);
    };

    // z (w x n_loc, leading dimension ldz) := beta·z - op(panel(s) rows [i0, i1))·B(i0:i1, :).
    auto partial = [&](index_t s, index_t i0, index_t i1, const T* beta, T* z, index_t ldz) {
        if (n_loc == 0 || (i1 <= i0 && *beta != zero)) return;
        const auto sr = panels.rows(s);
        const auto [pa, ld] = panels.get(s);
        const index_t k = std::max<index_t>(i1 - i0, 0);  // k = 0: z := 0
        dev.gemm(sc, op, Op::N, sr.w, n_loc, k, &m1, pa + (k > 0 ? i0 - sr.p0 : 0), ld, brow(k > 0 ? i0 : 0), b.ld,
                 beta, z, ldz);
        poll();
    };
    // The first part of step s's partial on this rank: the owner row starts from B_k.
    auto first_partial = [&](index_t s, index_t i0, index_t i1, T* z) {
        const auto sr = panels.rows(s);
        if (sr.owner && n_loc > 0) dev.copy_from_peer(copy2d(z, sr.w, brow(sr.d0), b.ld, sr.w, n_loc), dev);
        partial(s, i0, i1, sr.owner ? &one : &zero, z, sr.w);
    };
    auto solve = [&](index_t s) {
        const auto sr = panels.rows(s);
        const auto [pa, ld] = panels.get(s);
        if (n_loc > 0)
            dev.trsm(sc, true, lower, op, unit, sr.w, n_loc, &one, pa + (sr.d0 - sr.p0), ld, brow(sr.d0), b.ld);
    };
    // Z_rc of step s to host memory, reduced to the owner row (its slot's last reduction done).
    auto reduce = [&](index_t s) {
        const auto sr = panels.rows(s);
        T* h = zhost.data() + (s % buf.slots_x) * slot_z;
        dev.synchronize();  // nothing still reads the host slot
        dev.copy_to_host(copy2d(h, sr.w, static_cast<const T*>(z_of(s)), sr.w, sr.w, n_loc));
        dev.synchronize();
        const index_t k = block_of_step(lower, op, nblk, s);
        zreq[slot(s)] = grid.col_comm().ireduce_sum(h, h, sr.w * n_loc, R.block_owner(k));
    };

    // Step s+1's partial begun early on the owner row of step s: the rows of X_k still to add.
    index_t rest0 = 0, rest1 = -1;  // [rest0, rest1); rest1 < 0: none
    // The owner row: Z landed, into B_k, solved.
    auto land = [&](index_t s) {
        const auto sr = panels.rows(s);
        zreq[slot(s)].wait();
        dev.copy_to_device(copy2d(brow(sr.d0), b.ld, static_cast<const T*>(zhost.data() + (s % buf.slots_x) * slot_z),
                                  sr.w, sr.w, n_loc));
        solve(s);
    };
    for (index_t t = 0; t <= std::min<index_t>(lookahead, nblk - 1); ++t) panels.post(t);
    for (index_t s = 0; s < nblk; ++s) {
        panels.wait(s);
        const StepRows sr = panels.rows(s);
        if (p == 1) {  // nothing to reduce: B_k takes the partial itself
            partial(s, sr.u0, sr.u1, &one, brow(sr.d0), b.ld);
            solve(s);
        } else if (n_loc > 0) {
            const bool begun = rest1 >= 0;
            if (!begun) zreq[slot(s)].wait();  // the slot's last reduction
            if (begun) partial(s, rest0, rest1, &one, z_of(s), sr.w);
            else first_partial(s, sr.u0, sr.u1, z_of(s));
            rest1 = -1;
            reduce(s);
            if (sr.owner && lookahead > 0 && s + 1 < nblk) {
                panels.wait(s + 1);
                zreq[slot(s + 1)].wait();
                first_partial(s + 1, sr.u0, sr.u1, z_of(s + 1));
                rest0 = sr.d0, rest1 = sr.d0 + sr.w;
            }
            if (sr.owner) land(s);
        }
        if (s + lookahead + 1 < nblk) panels.post(s + lookahead + 1);
    }
    wait_all(zreq);
    dev.synchronize();  // the slots are released at return
}

#define CALA_INST(T) \
    template void res_trsm_2d_trans<T>(bool, Op, bool, int, const Side<T>&, const Side<T>&, Tickets<T>&, bool);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::detail

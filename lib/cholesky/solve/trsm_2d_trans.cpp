// The tile loop of cala::trsm for op = T/C: B := op(A)⁻¹·B reading the stored triangle of A as
// it is (no transposed copy). Left-looking: X_k needs Σ_i op(A_ik)·X_i over the blocks i solved
// before it, and those X_i stay where they were solved (on the process rows that own them).
//
// A lower, op(A) upper (backward, k = K-1, ..., 0; A upper: forward, mirrored):
//   panel    process column k%q broadcasts its local rows of A(k:, k) along each process row
//            (the same panels as the op = N loop; `lookahead` steps ahead);
//   partial  every rank (r, c): Z_rc = -op(A(i, k))·B(i, c-cols) over its local rows of blocks
//            i > k (solved already, on this rank), one GEMM;
//   reduce   Z = Σ_r Z_rc down each process column to process row k%p (ireduce);
//   solve    process row k%p: B_k := op(A_kk)⁻¹·(B_k + Z).
// Only the owner row waits for a reduction; the others go on to the next partial at once.
// Lookahead (>= 1): while its reduction is in flight, the owner row of step s computes the part
// of its partial for step s+1 that does not involve block k (the rest follows after the solve).
//
//   2 x 1 grid, K = 3, A lower, block k on process row k%2:
//   k=2: (0) Z = 0,               (1) Z = 0               -> reduce to (0); (0) solves X_2
//   k=1: (0) Z = -op(A_21)·X_2,   (1) Z = 0               -> reduce to (1); (1) solves X_1
//   k=0: (0) Z = -op(A_20)·X_2,   (1) Z = -op(A_10)·X_1   -> reduce to (0); (0) solves X_0

#include <algorithm>
#include <vector>

#include "cholesky/solve/panels.hpp"

namespace cala::detail {

template <class T>
void trsm_2d_trans(bool lower, Op op, bool unit, int lookahead, const MatrixRef<T>& a, const MatrixRef<T>& b) {
    const Grid2D& grid = b.grid();
    const int p = grid.p(), r = grid.row(), c = grid.col();
    const Dist1D& R = a.layout().rows;
    const index_t nblk = R.num_blocks(), n_loc = b.n_loc();
    if (nblk == 0 || b.n() == 0) return;
    const auto buf = trsm_buffers(a.layout(), b.layout(), op, lookahead, r, c);
    Panels<T> panels(a, lower, op, buf);
    Buffer<T> zbuf(buf.x_elems);
    std::vector<Request> zreq(static_cast<std::size_t>(buf.slots_x));
    const index_t slot_z = buf.wmax * n_loc;
    auto poll = [&] {
        panels.poll();
        test_all(zreq);
    };
    auto z_of = [&](index_t s) { return zbuf.data() + (s % buf.slots_x) * slot_z; };

    // z (w x n_loc, leading dimension ldz) := beta·z - op(panel(s) rows [i0, i1))·B(i0:i1, :),
    // in chunks along the rows with MPI progress in between.
    auto partial = [&](index_t s, index_t i0, index_t i1, T beta, T* z, index_t ldz, bool progress) {
        const auto sr = panels.rows(s);
        if (n_loc == 0) return;
        if (i1 <= i0) {
            if (beta == T(0)) kernels::scale(sr.w, n_loc, T(0), z, ldz);
            return;
        }
        const auto pa = panels.get(s);
        const index_t step = chunk_width(i1 - i0, progress);
        for (index_t x0 = i0; x0 < i1; x0 += step) {
            const index_t nx = std::min(step, i1 - x0);
            kernels::gemm(op, Op::N, sr.w, n_loc, nx, T(-1), pa.data + (x0 - sr.p0), pa.ld, local_ptr(b, x0, 0), b.ld(),
                          x0 == i0 ? beta : T(1), z, ldz);
            if (progress) poll();
        }
    };
    auto solve = [&](index_t s) {
        const auto sr = panels.rows(s);
        const auto pa = panels.get(s);
        if (n_loc > 0)
            kernels::trsm(true, lower, op, unit, sr.w, n_loc, T(1), pa.data + (sr.d0 - sr.p0), pa.ld,
                          local_ptr(b, sr.d0, 0), b.ld());
    };

    const index_t ahead = std::min<index_t>(lookahead, nblk - 1);
    for (index_t s = 0; s <= ahead; ++s) panels.post(s);
    bool have_next = false;  // this rank already holds part of the next step's partial
    index_t prev_d0 = 0, prev_w = 0;  // rows of the block this rank solved at the previous step
    for (index_t s = 0; s < nblk; ++s) {
        panels.wait(s);
        const auto sr = panels.rows(s);
        const index_t k = block_of_step(lower, op, nblk, s);
        if (p == 1) {  // no reduction: the partial goes straight into B_k
            partial(s, sr.u0, sr.u1, T(1), local_ptr(b, sr.d0, 0), b.ld(), lookahead > 0);
            solve(s);
        } else if (n_loc > 0) {
            T* z = z_of(s);
            if (have_next) {
                partial(s, prev_d0, prev_d0 + prev_w, T(1), z, sr.w, false);
            } else {
                zreq[static_cast<std::size_t>(s % buf.slots_x)].wait();
                partial(s, sr.u0, sr.u1, T(0), z, sr.w, lookahead > 0);
            }
            have_next = false;
            zreq[static_cast<std::size_t>(s % buf.slots_x)] = grid.col_comm().ireduce_sum(z, z, sr.w * n_loc, R.block_owner(k));
            if (sr.owner) {
                if (lookahead > 0 && s + 1 < nblk) {
                    // The next partial over the rows solved before this step, while Z travels.
                    panels.wait(s + 1);
                    zreq[static_cast<std::size_t>((s + 1) % buf.slots_x)].wait();
                    partial(s + 1, sr.u0, sr.u1, T(0), z_of(s + 1), panels.rows(s + 1).w, true);
                    have_next = true, prev_d0 = sr.d0, prev_w = sr.w;
                }
                zreq[static_cast<std::size_t>(s % buf.slots_x)].wait();
                kernels::add(Op::N, sr.w, n_loc, z, sr.w, T(1), local_ptr(b, sr.d0, 0), b.ld());
                solve(s);
            }
        }
        if (s + lookahead + 1 < nblk) panels.post(s + lookahead + 1);
    }
    wait_all(zreq);
}

#define CALA_INST(T) \
    template void trsm_2d_trans<T>(bool, Op, bool, int, const MatrixRef<T>&, const MatrixRef<T>&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::detail

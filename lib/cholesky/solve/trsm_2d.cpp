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
// the rest of the update, which runs in chunks with MPI progress in between.
//
//   2 x 2 grid, R and A's columns start on process 0, K = 3, lower:
//   k=0: (r,0) -> (r,1) A(0:,0)|r-rows;  (0,c) solves B_0, (0,c) -> (1,c) X_0;  all update
//   k=1: (r,1) -> (r,0) A(1:,1)|r-rows;  (1,c) solves B_1, (1,c) -> (0,c) X_1;  all update
//   k=2: (r,0) -> (r,1) A(2:,2)|r-rows;  (0,c) solves B_2, (0,c) -> (1,c) X_2

#include <algorithm>
#include <vector>

#include "cholesky/solve/trsm_plan.hpp"
#include "core/workspace.hpp"
#include "kernels/blas.hpp"

namespace cala::detail {

namespace {

// Local row ranges of step k on process row r: the panel [p0, p1), the diagonal block
// [d0, d0 + w) (on the owner row only), the update [u0, u1).
struct StepRows {
    index_t p0, p1, d0, w, u0, u1;
    bool owner;
};

StepRows step_rows(const Dist1D& d, bool lower, index_t k, int r) {
    StepRows s{};
    const index_t g0 = d.block_start(k);
    s.w = d.block_size(k);
    s.owner = d.block_owner(k) == r;
    const index_t before = d.local_before(g0, r), after = before + (s.owner ? s.w : 0);
    if (lower) {
        s.p0 = before, s.p1 = d.local_size(r), s.d0 = before, s.u0 = after, s.u1 = s.p1;
    } else {
        s.p0 = 0, s.p1 = after, s.d0 = before, s.u0 = 0, s.u1 = before;
    }
    return s;
}

}  // namespace

template <class T>
void trsm_2d(bool lower, bool unit, int lookahead, const MatrixRef<T>& a, const MatrixRef<T>& b) {
    const Grid2D& grid = b.grid();
    const int p = grid.p(), q = grid.q(), r = grid.row(), c = grid.col();
    const Dist1D& R = a.layout().rows;
    const Dist1D& C = a.layout().cols;
    const index_t nblk = R.num_blocks(), n_loc = b.n_loc();
    if (nblk == 0 || b.n() == 0) return;
    const auto buf = trsm_buffers(a.layout(), b.layout(), lookahead, r, c);
    Buffer<T> abuf(buf.panel_elems), xbuf(buf.x_elems);
    std::vector<Request> preq(static_cast<std::size_t>(buf.slots_a)), xreq(static_cast<std::size_t>(buf.slots_x));
    const index_t slot_a = buf.wmax * std::max<index_t>(R.local_size(r), 1), slot_x = buf.wmax * n_loc;
    auto block_of_step = [&](index_t s) { return lower ? s : nblk - 1 - s; };
    auto poll = [&] {
        test_all(preq);
        test_all(xreq);
    };

    // Panel of step s: where its local rows of A(:, k) are read from (the slot, or A itself when q == 1).
    struct Panel {
        const T* data;
        index_t ld;
    };
    auto panel = [&](index_t s) -> Panel {
        const index_t k = block_of_step(s);
        const auto sr = step_rows(R, lower, k, r);
        if (q == 1) return {&a.local(sr.p0, C.to_local(C.block_start(k))), a.ld()};
        return {abuf.data() + (s % buf.slots_a) * slot_a, std::max<index_t>(sr.p1 - sr.p0, 1)};
    };
    auto post_panel = [&](index_t s) {
        const index_t k = block_of_step(s);
        const auto sr = step_rows(R, lower, k, r);
        const index_t h = sr.p1 - sr.p0;
        if (q == 1 || h == 0) return;
        T* dst = abuf.data() + (s % buf.slots_a) * slot_a;
        const int root = C.block_owner(k);
        if (c == root) kernels::copy(Op::N, h, sr.w, &a.local(sr.p0, C.to_local(C.block_start(k))), a.ld(), dst, h);
        preq[static_cast<std::size_t>(s % buf.slots_a)] = grid.row_comm().ibcast(dst, h * sr.w, root);
    };
    // X_s: where the solved block row is read from (the slot, or B itself when p == 1).
    auto x_of = [&](index_t s) -> Panel {
        const auto sr = step_rows(R, lower, block_of_step(s), r);
        if (p == 1) return {&b.local(sr.d0, 0), b.ld()};
        return {xbuf.data() + (s % buf.slots_x) * slot_x, std::max<index_t>(sr.w, 1)};
    };
    // The owner row solves its block row and every process column broadcasts it.
    auto solve_and_post = [&](index_t s) {
        const index_t k = block_of_step(s);
        const auto sr = step_rows(R, lower, k, r);
        if (sr.owner) {
            preq[static_cast<std::size_t>(s % buf.slots_a)].wait();
            const Panel pa = panel(s);
            if (n_loc > 0)
                kernels::trsm(true, lower, Op::N, unit, sr.w, n_loc, T(1), pa.data + (sr.d0 - sr.p0), pa.ld,
                              &b.local(sr.d0, 0), b.ld());
        }
        if (p == 1 || n_loc == 0) return;
        T* dst = xbuf.data() + (s % buf.slots_x) * slot_x;
        if (sr.owner) kernels::copy(Op::N, sr.w, n_loc, &b.local(sr.d0, 0), b.ld(), dst, sr.w);
        xreq[static_cast<std::size_t>(s % buf.slots_x)] = grid.col_comm().ibcast(dst, sr.w * n_loc, R.block_owner(k));
    };
    // B(rows [i0, i1), :) -= panel(s) rows · X_s, in chunks with MPI progress in between.
    auto update = [&](index_t s, index_t i0, index_t i1, bool progress) {
        const index_t rows = i1 - i0;
        if (rows <= 0 || n_loc == 0) return;
        const auto sr = step_rows(R, lower, block_of_step(s), r);
        const Panel pa = panel(s), x = x_of(s);
        constexpr index_t kMinChunk = 512, kMaxChunks = 4;
        const bool along_m = n_loc < rows;
        const index_t len = along_m ? rows : n_loc;
        const index_t chunks = progress ? std::clamp<index_t>(len / kMinChunk, 1, kMaxChunks) : 1;
        const index_t step = (len + chunks - 1) / chunks;
        for (index_t x0 = 0; x0 < len; x0 += step) {
            const index_t nx = std::min(step, len - x0);
            const index_t ri = along_m ? i0 + x0 : i0, nr = along_m ? nx : rows;
            const index_t cj = along_m ? 0 : x0, nc = along_m ? n_loc : nx;
            kernels::gemm(Op::N, Op::N, nr, nc, sr.w, T(-1), pa.data + (ri - sr.p0), pa.ld, x.data + cj * x.ld, x.ld,
                          T(1), &b.local(ri, cj), b.ld());
            if (progress) poll();
        }
    };

    const index_t ahead = std::min<index_t>(lookahead, nblk - 1);
    for (index_t s = 0; s <= ahead; ++s) post_panel(s);
    solve_and_post(0);
    for (index_t s = 0; s < nblk; ++s) {
        xreq[static_cast<std::size_t>(s % buf.slots_x)].wait();
        preq[static_cast<std::size_t>(s % buf.slots_a)].wait();
        const auto sr = step_rows(R, lower, block_of_step(s), r);
        index_t u0 = sr.u0, u1 = sr.u1;
        if (lookahead > 0 && s + 1 < nblk) {
            // The next block row first: on its owner row it is the end of the update range
            // nearest the diagonal.
            const auto nx = step_rows(R, lower, block_of_step(s + 1), r);
            if (nx.owner) {
                if (lower) update(s, u0, u0 + nx.w, false), u0 += nx.w;
                else update(s, u1 - nx.w, u1, false), u1 -= nx.w;
            }
            solve_and_post(s + 1);
        }
        update(s, u0, u1, lookahead > 0);
        if (s + lookahead + 1 < nblk) post_panel(s + lookahead + 1);
        if (lookahead == 0 && s + 1 < nblk) solve_and_post(s + 1);
    }
}

#define CALA_INST(T) template void trsm_2d<T>(bool, bool, int, const MatrixRef<T>&, const MatrixRef<T>&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::detail

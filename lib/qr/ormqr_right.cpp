// cala::ormqr(Side::Right): C := C·Q or C·Qᴴ for the reflectors of cala::geqrf, on the 2D grid.
//
// A (n x k) holds V below its diagonal: V's rows are A's rows, over the process rows. C (m x n)
// needs them along its columns, over the process columns (the same nb and first block; any
// source process). Per panel l (forward for N: C·Q = C·P_0·P_1···; reverse for C: C·Qᴴ =
// C·P_last ᴴ···P_0ᴴ, P_l = I − V·T·Vᴴ):
//   T  [column co(l)] V's rows with the unit diagonal explicit, VᴴV summed down the column
//      (w², p > 1: every process row needs T, also those without panel rows), T by LAPACK's
//      larft recurrence
//   B  [T | V rows of process row r] broadcast along every process row from co(l) (q > 1)
//   G  V "transposed": in each process column c, every process row r' broadcasts down the column
//      the rows of its V that are C's columns on c (right_parts in geometry.hpp); merged in C's
//      local column order, that is V_c, the rows of V that meet C's local columns
//   U  W = C(:, my columns >= c0)·V_c, summed along the process row (m_loc x w, when the panel's
//      indices span several process columns); C(:, my columns >= c0) −= (W·T or W·Tᴴ)·V_cᴴ
//
//   2 x 2 grid, A's rows from process row 0, C's columns from process column 1, 4 blocks >= l:
//     block b:          0      1      2      3
//     V rows held by:  r0     r1     r0     r1        (B: every rank (r, c) has them for its r)
//     C columns on:    c1     c0     c1     c0
//     G in column 0: r1 broadcasts blocks 1, 3 down column 0 (r0 holds none of column 0's)
//       in column 1: r0 broadcasts blocks 0, 2 down column 1

#include <algorithm>

#include "core/workspace.hpp"
#include "kernels/blas.hpp"
#include "kernels/lapack_qr.hpp"
#include "qr/engine.hpp"

namespace cala::detail {

template <class T>
void ormqr_right_engine(const QrGeom& g, const Dist1D& ccols, int r, int c, const Comm& row, const Comm& col, Op op,
                        const T* a, index_t lda, const T* tau, T* cm, index_t ldc, index_t mc) {
    const index_t kt = g.kt(), nb = g.cols.nb;
    if (kt == 0) return;
    const index_t mloc = g.rows.local_size(r), ncl = ccols.local_size(c);
    Buffer<T> store(right_work(g, ccols, mc, r, c));
    T* tmat = store.data();
    T* gram = tmat + nb * nb + mloc * nb;
    T* parts = gram + nb * nb;
    T* vc = parts + ncl * nb;
    T* wbuf = vc + ncl * nb;
    T* zbuf = wbuf + mc * nb;
    const bool forward = op == Op::N;
    const int p = g.p();
    std::vector<Request> reqs;
    for (index_t s = 0; s < kt; ++s) {
        const index_t l = forward ? s : kt - 1 - s;
        const index_t w = g.w(l), mr = g.panel_rows(l, r), ldv = std::max<index_t>(1, mr);
        T* v = tmat + w * w;
        if (c == g.co(l)) {
            const T* pa = a + g.row0(l, r) + g.cols.local_before(g.c0(l), c) * lda;
            kernels::copy(Op::N, mr, w, pa, lda, v, ldv);
            if (r == g.ro(l))
                for (index_t j = 0; j < w; ++j) {
                    for (index_t i = 0; i < j && i < mr; ++i) v[i + j * ldv] = T(0);
                    if (j < mr) v[j + j * ldv] = T(1);
                }
            if (mr > 0) kernels::gemm(Op::C, Op::N, w, w, mr, T(1), v, ldv, v, ldv, T(0), gram, w);
            else kernels::scale(w, w, T(0), gram, w);
            if (p > 1) col.iallreduce_sum(gram, w * w).wait();  // every process row needs T
            kernels::larft_gram(w, gram, w, tau + g.c0(l), tmat, w);
        }
        if (g.q() > 1) row.ibcast(tmat, w * w + mr * w, g.co(l)).wait();

        // G: my rows of V that are C's columns on my process column, packed in index order, then
        // every process row's part broadcast down the column.
        const std::vector<index_t> cnt = right_parts(g, ccols, l, c);
        std::vector<index_t> off(static_cast<std::size_t>(p) + 1, 0);
        for (int i = 0; i < p; ++i) off[i + 1] = off[i] + cnt[i];
        const index_t nv = off[p], c0 = g.c0(l);
        {
            T* mine = parts + off[r] * w;
            const index_t ld = std::max<index_t>(1, cnt[r]);
            index_t k = 0;
            for (index_t i = 0; i < mr; ++i)
                if (ccols.owner(g.rows.to_global(g.row0(l, r) + i, r)) == c) {
                    for (index_t j = 0; j < w; ++j) mine[k + j * ld] = v[i + j * ldv];
                    ++k;
                }
        }
        reqs.clear();
        if (p > 1)
            for (int i = 0; i < p; ++i)
                if (cnt[i] > 0) reqs.push_back(col.ibcast(parts + off[i] * w, cnt[i] * w, i));
        wait_all(reqs);
        // V_c (nv x w) in C's local column order from column j0 on.
        const index_t j0 = ccols.local_before(c0, c), ldvc = std::max<index_t>(1, nv);
        std::vector<index_t> next(off.begin(), off.end() - 1);
        for (index_t jl = j0; jl < ncl; ++jl) {
            const int owner = g.rows.owner(ccols.to_global(jl, c));
            const index_t ld = std::max<index_t>(1, cnt[owner]);
            const index_t i = next[owner]++ - off[owner];
            const T* src = parts + off[owner] * w;
            for (index_t j = 0; j < w; ++j) vc[(jl - j0) + j * ldvc] = src[i + j * ld];
        }

        // U: W = C·V_c summed along the row, C −= (W·op(T))·V_cᴴ.
        const bool reduce = std::min<index_t>(g.q(), g.mt() - l) > 1;
        if (mc == 0 || (nv == 0 && !reduce)) continue;
        T* cc = cm + j0 * ldc;
        if (nv > 0) kernels::gemm(Op::N, Op::N, mc, w, nv, T(1), cc, ldc, vc, ldvc, T(0), wbuf, mc);
        else kernels::scale(mc, w, T(0), wbuf, mc);
        if (reduce) row.iallreduce_sum(wbuf, mc * w).wait();
        if (nv == 0) continue;
        kernels::gemm(Op::N, forward ? Op::N : Op::C, mc, w, w, T(1), wbuf, mc, tmat, w, T(0), zbuf, mc);
        kernels::gemm(Op::N, Op::C, mc, nv, w, T(-1), zbuf, mc, vc, ldvc, T(1), cc, ldc);
    }
}

#define CALA_INST(T)                                                                                            \
    template void ormqr_right_engine<T>(const QrGeom&, const Dist1D&, int, int, const Comm&, const Comm&, Op,    \
                                        const T*, index_t, const T*, T*, index_t, index_t);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::detail

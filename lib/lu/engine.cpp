// cala::getrf's panel loop on one rank (geometry.hpp: steps T, I, X, P, B, U).

#include <algorithm>

#include "core/workspace.hpp"
#include "kernels/blas.hpp"
#include "kernels/lapack_lu.hpp"
#include "lu/engine.hpp"

namespace cala::detail {

template <class T>
index_t getrf_engine(const LuArgs& args, T* a, index_t lda, std::vector<index_t>& ipiv) {
    const LuGeom& g = args.g;
    const int r = args.row, c = args.col;
    const Comm& rowc = *args.row_comm;
    const Comm& colc = *args.col_comm;
    const index_t m_loc = g.rows.local_size(r), n_loc = g.cols.local_size(c);
    ipiv.assign(static_cast<std::size_t>(g.kmax()), 0);
    index_t info = 0;
    for (index_t l = 0; l < g.steps(); ++l) {
        const index_t k0 = g.start(l), kb = g.width(l);
        const int pr = g.ro(l), pc = g.co(l);
        const index_t words = kb * (kb + 2);
        // T, I: the tournament in column pc; its root's result down the column, then along rows.
        Buffer<T> top(words);
        if (c == pc) {
            tournament(g, l, r, colc, a, lda, top.data());
            colc.ibcast(top.data(), words, pr).wait();
        }
        rowc.ibcast(top.data(), words, pc).wait();
        for (index_t i = 0; i < kb; ++i) {
            const index_t w = decode_row(top[i + kb * kb], top[i + (kb + 1) * kb]);
            ipiv[static_cast<std::size_t>(k0 + i)] = w;
        }
        // The winners' rows as LAPACK's interchange sequence: row k0+i with the current place of w_i.
        // (w_i cannot sit where an earlier winner was taken from: only place k0+j sends it on.)
        for (index_t i = 0; i < kb; ++i) {
            index_t w = ipiv[static_cast<std::size_t>(k0 + i)];
            for (index_t j = 0; j < i; ++j)
                if (w == k0 + j) w = ipiv[static_cast<std::size_t>(k0 + j)];
            ipiv[static_cast<std::size_t>(k0 + i)] = w;
        }
        for (index_t j = 0; j < kb; ++j)
            if (info == 0 && top[j + j * kb] == T(0)) info = k0 + j + 1;
        // X: the interchanges on all my columns.
        exchange_rows(g.rows, r, colc, k0, kb, step_moves(ipiv, k0, kb), a, lda, n_loc);
        // P: L21 and U12.
        const index_t lrb = g.row_from(k0 + kb, r), mrest = m_loc - lrb;
        const index_t lcr = g.col_from(k0 + kb, c), nrest = n_loc - lcr;
        const index_t lc0 = c == pc ? g.cols.to_local(k0) : 0;
        const index_t lr0 = r == pr ? g.rows.to_local(k0) : 0;
        if (c == pc) {
            if (r == pr) kernels::copy(Op::N, kb, kb, top.data(), kb, a + lr0 + lc0 * lda, lda);
            kernels::trsm_right_upper_lu(mrest, kb, top.data(), kb, a + lrb + lc0 * lda, lda);
        }
        if (r == pr) kernels::trsm(true, true, Op::N, true, kb, nrest, T(1), top.data(), kb, a + lr0 + lcr * lda, lda);
        // B: L21 along the rows, U12 down the columns.
        Buffer<T> lb(mrest * kb), ub(kb * nrest);
        if (c == pc) kernels::copy(Op::N, mrest, kb, a + lrb + lc0 * lda, lda, lb.data(), std::max<index_t>(1, mrest));
        if (r == pr) kernels::copy(Op::N, kb, nrest, a + lr0 + lcr * lda, lda, ub.data(), kb);
        Request rl = rowc.ibcast(lb.data(), mrest * kb, pc);
        Request ru = colc.ibcast(ub.data(), kb * nrest, pr);
        rl.wait();
        ru.wait();
        // U: the trailing update.
        kernels::gemm(Op::N, Op::N, mrest, nrest, kb, T(-1), lb.data(), std::max<index_t>(1, mrest), ub.data(), kb,
                      T(1), a + lrb + lcr * lda, lda);
    }
    return info;
}

#define CALA_INST(T) template index_t getrf_engine<T>(const LuArgs&, T*, index_t, std::vector<index_t>&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::detail

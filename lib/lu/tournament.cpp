// Tournament pivoting (CALU, Grigori-Demmel-Xiang 2011) on the ranks of one process column.
//
//   p = 4, root pr = 1 (relative rows v = (r − pr) mod p):
//     each rank: getrf on its rows >= k0 of the panel -> kb candidate rows (original values)
//     level 1:  v=1 ─▶ v=0,  v=3 ─▶ v=2          (kb x (kb+2): values, then row indices)
//     level 2:  v=2 ─▶ v=0                       each receiver stacks 2 sets, getrf, keeps kb
//   The root's last getrf gives the winners in pivot order and their L11\U11.
// A set with fewer than kb real rows (few rows left) is padded with zero rows of index −1; the
// padding never wins while a real row is left (getrf keeps the real rows on top: a zero row is
// never a strictly larger pivot), and the root always has at least kb real rows (m − k0 >= kb).

#include <cmath>
#include <vector>

#include "core/trace.hpp"
#include "core/workspace.hpp"
#include "kernels/blas.hpp"
#include "kernels/lapack_lu.hpp"
#include "lu/engine.hpp"

namespace cala::detail {

template <class T>
void encode_row(index_t idx, T* hi, T* lo) {
    const index_t x = idx + 1;  // 0: padding
    *hi = T(static_cast<real_t<T>>(x >> 20));
    *lo = T(static_cast<real_t<T>>(x & ((index_t{1} << 20) - 1)));
}

template <class T>
index_t decode_row(const T& hi, const T& lo) {
    const auto h = static_cast<index_t>(std::real(hi)), l = static_cast<index_t>(std::real(lo));
    return (h << 20) + l - 1;
}

namespace {

// The kb best rows of the R x kb rows (ld ldv) with global indices idx into set (kb x (kb+2)),
// by getrf on a copy; lu (kb x kb) receives the copy's L11\U11 when not null.
template <class T>
void select(index_t kb, index_t R, const T* v, index_t ldv, const std::vector<index_t>& idx, T* set, T* lu) {
    const index_t keep = std::min(R, kb);
    trace::Span sp(trace::Kind::Panel, "tournament getrf");
    std::vector<index_t> perm(static_cast<std::size_t>(R));
    for (index_t i = 0; i < R; ++i) perm[static_cast<std::size_t>(i)] = i;
    if (R > 0) {
        const index_t ld = R;
        Buffer<T> work(R * kb);
        kernels::copy(Op::N, R, kb, v, ldv, work.data(), ld);
        std::vector<index_t> piv;
        kernels::getrf(R, kb, work.data(), ld, piv);
        for (std::size_t i = 0; i < piv.size(); ++i) std::swap(perm[i], perm[static_cast<std::size_t>(piv[i])]);
        if (lu != nullptr) kernels::copy(Op::N, keep, kb, work.data(), ld, lu, kb);
    }
    kernels::scale(kb, kb + 2, T(0), set, kb);
    for (index_t i = 0; i < kb; ++i) {
        const index_t src = i < keep ? perm[static_cast<std::size_t>(i)] : -1;
        if (src >= 0)
            for (index_t j = 0; j < kb; ++j) set[i + j * kb] = v[src + j * ldv];
        encode_row(src >= 0 ? idx[static_cast<std::size_t>(src)] : index_t{-1}, set + i + kb * kb,
                   set + i + (kb + 1) * kb);
    }
}

// Real rows (index >= 0) of a candidate set, stacked into v (ld ldv) from row `at` on.
template <class T>
index_t stack(index_t kb, const T* set, T* v, index_t ldv, index_t at, std::vector<index_t>& idx) {
    index_t n = 0;
    for (index_t i = 0; i < kb; ++i) {
        const index_t g = decode_row(set[i + kb * kb], set[i + (kb + 1) * kb]);
        if (g < 0) continue;
        for (index_t j = 0; j < kb; ++j) v[at + n + j * ldv] = set[i + j * kb];
        idx.push_back(g);
        ++n;
    }
    return n;
}

}  // namespace

template <class T>
void tournament(const LuGeom& g, index_t l, int r, const Comm& col_comm, const T* a, index_t lda, T* top) {
    constexpr int kTag = 3101;
    const index_t k0 = g.start(l), kb = g.width(l);
    const int pc = g.co(l);
    const index_t lr0 = g.row_from(k0, r), mr = g.rows.local_size(r) - lr0;
    const index_t lc0 = g.cols.to_local(k0);
    (void)pc;
    const auto role = g.tree_role(l, r);
    const index_t words = kb * (kb + 2);
    Buffer<T> set(words), other(words), lu(kb * kb);
    std::vector<index_t> idx(static_cast<std::size_t>(mr));
    for (index_t i = 0; i < mr; ++i) idx[static_cast<std::size_t>(i)] = g.rows.to_global(lr0 + i, r);
    // The local round: getrf on my rows of the panel (the root's last round gives L11\U11).
    select(kb, mr, a + lr0 + lc0 * lda, lda, idx, set.data(), role.receives == 0 ? lu.data() : nullptr);
    // The tree: receive from v + s at each level s where v mod 2s == 0, then send once.
    const int pp = g.p(), root = g.ro(l);
    const int v = (r - root + pp) % pp;
    int got = 0;
    Buffer<T> both(2 * kb * kb);
    for (int s = 1; s < pp; s *= 2) {
        if (v % (2 * s) == s) {
            Request q = col_comm.isend(set.data(), words, (v - s + root) % pp, kTag);
            trace::Span sp(trace::Kind::Wait, "candidates sent");
            q.wait();
            break;
        }
        if (v + s >= pp) continue;
        Request q = col_comm.irecv(other.data(), words, (v + s + root) % pp, kTag);
        {
            trace::Span sp(trace::Kind::Wait, "candidates");
            q.wait();
        }
        ++got;
        std::vector<index_t> ids;
        index_t n = stack(kb, set.data(), both.data(), 2 * kb, 0, ids);
        n += stack(kb, other.data(), both.data(), 2 * kb, n, ids);
        select(kb, n, both.data(), 2 * kb, ids, set.data(), got == role.receives ? lu.data() : nullptr);
    }
    if (r != root) return;
    kernels::copy(Op::N, kb, kb, lu.data(), kb, top, kb);
    // The winners w_i (in pivot order) as LAPACK's interchange sequence: row k0+i with the current
    // place of w_i (w_i cannot sit where an earlier winner was taken from: only place k0+j, j < i,
    // sends it on).
    std::vector<index_t> seq(static_cast<std::size_t>(kb));
    for (index_t i = 0; i < kb; ++i) {
        index_t w = decode_row(set[i + kb * kb], set[i + (kb + 1) * kb]);
        for (index_t j = 0; j < i; ++j)
            if (w == k0 + j) w = seq[static_cast<std::size_t>(j)];
        seq[static_cast<std::size_t>(i)] = w;
        encode_row(w, top + i + kb * kb, top + i + (kb + 1) * kb);
    }
}

#define CALA_INST(T)                                                                               \
    template void tournament<T>(const LuGeom&, index_t, int, const Comm&, const T*, index_t, T*);  \
    template void encode_row<T>(index_t, T*, T*);                                                  \
    template index_t decode_row<T>(const T&, const T&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::detail

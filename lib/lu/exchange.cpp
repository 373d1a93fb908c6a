// The interchanges of one LU step as a fixed exchange pattern (engine.hpp: exchange_rows).
//
//   p = 3, the diagonal block row D = rows [k0, k0 + kb) on process row 1, pivots w0 (row 0)
//   and w1 (row 2) chosen for D's first two places; every process column at once:
//
//     row 0 ──── D (kb x w, from row 1) ────▶ writes D's row that moves into w0
//     row 1 ◀─── Σ (kb x w: w0's row from 0, w1's from 2, zeros elsewhere) ──── rows 0, 2
//     row 2 ──── D (kb x w, from row 1) ────▶ writes D's row that moves into w1
//
// The words depend on kb and the local width only, never on which rows win.

#include <algorithm>
#include <map>

#include "core/workspace.hpp"
#include "kernels/blas.hpp"
#include "lu/engine.hpp"

namespace cala::detail {

Moves step_moves(const std::vector<index_t>& ipiv, index_t k0, index_t kb) {
    std::map<index_t, index_t> at;  // position -> the original row it holds (touched ones only)
    auto held = [&](index_t pos) {
        const auto it = at.find(pos);
        return it == at.end() ? pos : it->second;
    };
    for (index_t i = k0; i < k0 + kb; ++i) {
        const index_t j = ipiv[static_cast<std::size_t>(i)];
        if (j == i) continue;
        const index_t hi = held(i), hj = held(j);
        at[i] = hj;
        at[j] = hi;
    }
    Moves out;
    for (const auto& [pos, src] : at)
        if (pos != src) out.emplace_back(pos, src);
    return out;
}

Moves inverse_moves(const Moves& m) {
    Moves out;
    out.reserve(m.size());
    for (const auto& [pos, src] : m) out.emplace_back(src, pos);
    std::sort(out.begin(), out.end());
    return out;
}

namespace {

template <class T>
void copy_row(index_t w, const T* src, index_t lds, T* dst, index_t ldd) {
    for (index_t j = 0; j < w; ++j) dst[j * ldd] = src[j * lds];
}

}  // namespace

template <class T>
void exchange_rows(const Dist1D& rows, int r, const Comm& col_comm, index_t k0, index_t kb, const Moves& moves, T* a,
                   index_t lda, index_t w) {
    if (kb == 0 || w == 0) return;
    const int pr = rows.owner(k0);
    const bool root = r == pr;
    auto in_d = [&](index_t g) { return g >= k0 && g < k0 + kb; };
    const index_t n = kb * w;
    Buffer<T> d(n), part(n), sum(root ? n : 0);
    const index_t lr_d = root ? rows.to_local(k0) : 0;
    if (root) kernels::copy(Op::N, kb, w, a + lr_d, lda, d.data(), kb);
    kernels::scale(kb, w, T(0), part.data(), kb);
    for (const auto& [pos, src] : moves)
        if (in_d(pos) && !in_d(src) && rows.owner(src) == r)
            copy_row(w, a + rows.to_local(src), lda, part.data() + (pos - k0), kb);
    Request rb = col_comm.ibcast(d.data(), n, pr);
    Request rr = col_comm.ireduce_sum(part.data(), root ? sum.data() : part.data(), n, pr);
    rb.wait();
    rr.wait();
    for (const auto& [pos, src] : moves) {
        if (rows.owner(pos) != r) continue;
        T* dst = a + rows.to_local(pos);
        if (in_d(src)) copy_row(w, d.data() + (src - k0), kb, dst, lda);
        else copy_row(w, sum.data() + (pos - k0), kb, dst, lda);
    }
}

#define CALA_INST(T)                                                                                          \
    template void exchange_rows<T>(const Dist1D&, int, const Comm&, index_t, index_t, const Moves&, T*, index_t, \
                                   index_t);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::detail

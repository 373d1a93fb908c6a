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

// For each column of `cols` (x counts them in order): f(column index, x). Column by column, so
// that the rows a step touches are read within one column at a time (not along a row: a stride
// of lda, a page per element).
template <class F>
void for_columns(const ColRanges& cols, F&& f) {
    index_t x = 0;
    for (const auto& [first, count] : cols)
        for (index_t j = first; j < first + count; ++j, ++x) f(j, x);
}

}  // namespace

template <class T>
void exchange_rows(const Dist1D& rows, int r, const Comm& col_comm, index_t k0, index_t kb, const Moves& moves, T* a,
                   index_t lda, const ColRanges& cols, ExchangeBuffers<T>& ws) {
    index_t w = 0;
    for (const auto& rg : cols) w += rg.second;
    if (kb == 0 || w == 0) return;
    auto in_d = [&](index_t g) { return g >= k0 && g < k0 + kb; };
    if (col_comm.size() == 1) {
        // One process row: the moves in place (local rows are global), column by column.
        std::vector<T> tmp(moves.size());
        for_columns(cols, [&](index_t j, index_t) {
            T* col = a + j * lda;
            for (std::size_t i = 0; i < moves.size(); ++i) tmp[i] = col[moves[i].second];
            for (std::size_t i = 0; i < moves.size(); ++i) col[moves[i].first] = tmp[i];
        });
        return;
    }
    const int pr = rows.owner(k0);
    const bool root = r == pr;
    const index_t n = kb * w;
    ws.reserve(n);
    T* d = ws.d.data();
    T* part = ws.part.data();
    T* sum = ws.sum.data();
    if (root) {
        const index_t lr_d = rows.to_local(k0);
        for_columns(cols, [&](index_t j, index_t x) {
            std::copy(a + lr_d + j * lda, a + lr_d + kb + j * lda, d + x * kb);
        });
    }
    // (local row, row of the kb-row buffers): what I send into D; what I write, from D or the sum.
    std::vector<std::pair<index_t, index_t>> give, from_d, from_sum;
    for (const auto& [pos, src] : moves) {
        if (in_d(pos) && !in_d(src) && rows.owner(src) == r) give.emplace_back(rows.to_local(src), pos - k0);
        if (rows.owner(pos) != r) continue;
        if (in_d(src)) from_d.emplace_back(rows.to_local(pos), src - k0);
        else from_sum.emplace_back(rows.to_local(pos), pos - k0);
    }
    for_columns(cols, [&](index_t j, index_t x) {
        T* p = part + x * kb;
        std::fill(p, p + kb, T(0));
        for (const auto& [lr, bi] : give) p[bi] = a[lr + j * lda];
    });
    Request rb = col_comm.ibcast(d, n, pr);
    Request rr = col_comm.ireduce_sum(part, root ? sum : part, n, pr);
    rb.wait();
    rr.wait();
    for_columns(cols, [&](index_t j, index_t x) {
        T* col = a + j * lda;
        for (const auto& [lr, bi] : from_d) col[lr] = d[x * kb + bi];
        for (const auto& [lr, bi] : from_sum) col[lr] = sum[x * kb + bi];
    });
}

#define CALA_INST(T)                                                                                          \
    template void exchange_rows<T>(const Dist1D&, int, const Comm&, index_t, index_t, const Moves&, T*, index_t, \
                                   const ColRanges&, ExchangeBuffers<T>&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::detail

#include "model/one_row.hpp"

#include <algorithm>
#include <cstdlib>

#include "matrix/redist_plan.hpp"
#include "model/costs.hpp"

namespace cala::detail {

std::optional<BlockCyclic> one_row_layout(const BlockCyclic& a, bool forced, std::int64_t limit, std::size_t elem_size) {
    if (a.q() != 1 || a.p() == 1 || a.m() == 0 || a.n() == 0) return std::nullopt;
    const BlockCyclic w(a.m(), a.n(), a.rows.nb, a.cols.nb, 1, a.p());
    if (!forced) {
        if (limit == 0)
            if (const char* e = std::getenv("CALA_MAX_MEMORY_MB")) limit = static_cast<std::int64_t>(std::atof(e) * 1048576.0);
        index_t most = 0;
        for (int c = 0; c < w.q(); ++c) most = std::max(most, w.cols.local_size(c));
        if (limit > 0 && 3 * most * w.m() * static_cast<std::int64_t>(elem_size) > limit) return std::nullopt;
    }
    return w;
}

OneRowCost one_row_cost(const BlockCyclic& a, const BlockCyclic& work, int row, std::size_t elem_size) {
    // p x 1: rank = row in either grid order; 1 x p is row-major (Grid3D's layer).
    const Placement user = user_placement(a, GridOrder::RowMajor), one = user_placement(work, GridOrder::RowMajor);
    const RedistTraffic in = redist_traffic(RedistGeometry(Op::N, a, work), user, one, row);
    const RedistTraffic out = redist_traffic(RedistGeometry(Op::N, work, a), one, user, row);
    const auto es = static_cast<std::int64_t>(elem_size);
    OneRowCost c;
    c.move.words = in.words + out.words;
    c.move.words_recv = in.recv_others + out.recv_others;
    c.move.msgs = in.msgs + out.msgs;
    c.store_bytes = local_elems(work, 0, row) * es;
    c.buffer_bytes = std::max(in.send_total + in.recv_others, out.send_total + out.recv_others) * es;
    return c;
}

Cost with_one_row(const Cost& inner, const OneRowCost& move) {
    Cost c = inner;
    c.words += move.move.words;
    c.words_recv += move.move.words_recv;
    c.msgs += move.move.msgs;
    c.extra_bytes = move.store_bytes + std::max(move.buffer_bytes, inner.extra_bytes);
    return c;
}

}  // namespace cala::detail

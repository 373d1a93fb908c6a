#pragma once
// The one-process-row plan of a p x 1 grid's factorization (LuVariant::OneRow,
// QrVariant::OneRow): the matrix moved onto the 1 x p grid of the same ranks (rank r, process
// row r, becomes process column r; the same blocks), factored there and moved back. The plan
// and its traffic; the move itself is on_one_row (matrix/one_row.hpp).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include "cala/layout.hpp"
#include "cala/model.hpp"

namespace cala::detail {

/// The 1 x p layout for a p x 1 layout `a` (p > 1, not empty), when `forced`, or when the copy
/// and the redistributions' buffers (3 local shares at most) fit `limit` bytes (0: reads
/// CALA_MAX_MEMORY_MB; no limit if unset); nothing otherwise.
std::optional<BlockCyclic> one_row_layout(const BlockCyclic& a, bool forced, std::int64_t limit, std::size_t elem_size);

/// The plan of a factorization whose variant enum V has TwoD and OneRow: OneRow and the one-row
/// layout where one_row_layout gives one (asked for, or Auto and the copy fits), else TwoD and `a`.
template <class V>
std::pair<V, BlockCyclic> one_row_plan(const BlockCyclic& a, V variant, std::int64_t limit, std::size_t elem_size) {
    if (variant != V::TwoD)
        if (const auto w = one_row_layout(a, variant == V::OneRow, limit, elem_size)) return {V::OneRow, *w};
    return {V::TwoD, a};
}

/// What moving `a` (p x 1) onto `work` (its one_row_layout) and back adds on process row `row`:
/// words and messages in `move`; the copy's bytes, and the larger of the two redistributions'
/// buffers (packed and received), in bytes.
struct OneRowCost {
    Cost move;
    std::int64_t store_bytes = 0, buffer_bytes = 0;
};
OneRowCost one_row_cost(const BlockCyclic& a, const BlockCyclic& work, int row, std::size_t elem_size);

/// `inner` (the algorithm's cost on `work` at process (0, row)) with the move added: traffic
/// summed, workspace = the copy + the larger of the move's buffers and the algorithm's.
Cost with_one_row(const Cost& inner, const OneRowCost& move);

}  // namespace cala::detail

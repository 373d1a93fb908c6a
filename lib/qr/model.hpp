#pragma once
// The cost of cala::geqrf when some panels take the gathered path (lib/qr/panel.cpp): a panel
// spanning several process rows with an exactly zero column is factored by LAPACK on its root
// (tau = 0 there, as LAPACK and ScaLAPACK), its rows gathered and sent back instead of the TSQR
// tree. geqrf_cost is this with no such panel; the tests name the panels they make so.

#include <cstddef>
#include <vector>

#include "cala/qr.hpp"

namespace cala::detail {

/// geqrf_cost on process (row, col), the panels listed in `gathered` (panel indices of A's
/// layout) taking the gathered path where they span several process rows (none do under OneRow).
Cost geqrf_cost_gathered(const BlockCyclic& a, const QrOptions& opts, int row, int col, std::size_t elem_size,
                         bool is_complex, const std::vector<index_t>& gathered);

/// The layout cala::geqrf factors: A's (TwoD), or its one-row layout (OneRow: model/one_row.hpp).
struct QrPlan {
    QrVariant variant = QrVariant::TwoD;
    BlockCyclic work;
    bool convert() const noexcept { return variant == QrVariant::OneRow; }
};
QrPlan qr_plan(const BlockCyclic& a, const QrOptions& o, std::size_t elem_size);

}  // namespace cala::detail

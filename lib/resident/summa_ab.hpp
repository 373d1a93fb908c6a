#pragma once
// Internal: the resident A- and B-stationary SUMMA engines (lib/resident/summa_ab.cpp). Operands
// already checked and laid out as the plan says (gemm/plan.hpp, variant A: A' with C's rows and
// Bt (n x k) with A''s columns; variant B: B' with C's columns and At (k x m) with B''s rows);
// all three on `dev`.

#include <algorithm>

#include "gemm/plan.hpp"
#include "resident/stage.hpp"

namespace cala::detail {

/// Some group of the panel loop spans more than one block (its pieces are put together on
/// the device, in one more slot).
inline bool multi_block(const std::vector<std::pair<index_t, index_t>>& groups) {
    return std::any_of(groups.begin(), groups.end(), [](const auto& g) { return g.second - g.first > 1; });
}

/// Device memory the A- or B-stationary engine allocates on process (row, col), in elements:
/// the slots of the panels in flight, of the partial sums in flight, and (variant A, groups of
/// several blocks) the panel Bt's pieces are put together in.
index_t resident_slots_ab(const GemmPlan& plan, const BlockCyclic& c, int row, int col);

/// C := alpha·A'·op(B) + beta·C, op(B) = kop(Bt): Bt's block rows down the process columns,
/// partial C reduced along the process rows onto the owner of each block column of C.
template <class T>
void resident_summa_a(const GemmPlan& plan, T alpha, const Side<T>& a, const Side<T>& bt, T beta, const Side<T>& c,
                      bool nccl, int ordinal);

/// C := alpha·op(A)·B' + beta·C, op(A) = kop(At): At's block columns along the process rows,
/// partial C (transposed) reduced down the process columns onto the owner of each block row.
template <class T>
void resident_summa_b(const GemmPlan& plan, T alpha, const Side<T>& at, const Side<T>& b, T beta, const Side<T>& c,
                      bool nccl, int ordinal);

}  // namespace cala::detail

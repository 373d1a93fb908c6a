#pragma once
// Internal: the resident stationary-C SUMMA engine (lib/resident/summa_c.cpp). Operands already
// checked and laid out as the plan says (gemm/plan.hpp, variant C: A' with C's rows, B' with C's
// columns, k blocked alike); all three on `dev`.

#include "gemm/plan.hpp"
#include "resident/stage.hpp"

namespace cala::detail {

/// Device memory the engine allocates on process (row, col), in elements: the A' and B' slots
/// of the panels in flight and, where a group spans several k-blocks of B', the panel they are
/// put together in. The same count resident_gemm_cost's memory uses.
index_t resident_slots(const GemmPlan& plan, const BlockCyclic& c, int row, int col);

template <class T>
void resident_summa_c(const GemmPlan& plan, T alpha, const Side<T>& a, const Side<T>& b, T beta, const Side<T>& c,
                      bool nccl, int ordinal);

}  // namespace cala::detail

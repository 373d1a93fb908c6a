#pragma once
// Internal: the resident stationary-C SUMMA engine (lib/resident/summa_c.cpp). Operands already
// checked and laid out as the plan says (gemm/plan.hpp, variant C: A' with C's rows, B' with C's
// columns, k blocked alike); all three on `dev`.

#include "gemm/plan.hpp"
#include "resident/stage.hpp"
#include "resident/triangle.hpp"

namespace cala::detail {

/// Device memory the engine allocates on process (row, col), in elements: the A' and B' slots
/// of the panels in flight and, where a group spans several k-blocks of B', the panel they are
/// put together in (the A- and B-stationary plans: resident_slots_ab's). The same count
/// resident_gemm_cost's memory uses.
index_t resident_slots(const GemmPlan& plan, const BlockCyclic& c, int row, int col);

/// herk's or syrk's update: only the `uplo` triangle of C (square tiles) is written, B' is A''s
/// conjugate transpose (herk) or transpose (symmetric: syrk), the diagonal tiles by Device::herk
/// from A''s rows with the real alpha and beta (host scalars of the real type) or by
/// Device::syrk with alpha and beta of T, the tiles off them by Device::gemm.
struct TriangleUpdate {
    Uplo uplo;
    const void* alpha;  ///< real_t<T> (herk) or T (symmetric)
    const void* beta;   ///< the same type as alpha
    bool symmetric = false;
};

/// The `uplo` triangle of C's local array := beta·C + alpha·A'·B' for one group of depth k
/// (first: beta applies, else 1), A' local rows like C's (lda), B' local columns like C's (ldb);
/// k = 0: the triangle scaled by beta. Local; issued on the device.
template <class T>
void triangle_update(device::Device& dev, const TriangleUpdate& tu, const Side<T>& c, index_t k, T alpha,
                     const T* ap, index_t lda, const T* bp, index_t ldb, bool first);

/// The engine; `tri` (herk, syrk) restricts each group's product to C's triangle.
template <class T>
void resident_summa_c(const GemmPlan& plan, T alpha, const Side<T>& a, const Side<T>& b, T beta, const Side<T>& c,
                      bool nccl, int ordinal, const TriangleUpdate* tri = nullptr);

}  // namespace cala::detail

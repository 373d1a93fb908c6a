#pragma once
// 2.5D / 3D SUMMA over a Grid3D, with the user's operands and result in their own 2D layouts.

#include "cala/grid3d.hpp"
#include "cala/matrix.hpp"
#include "core/workspace.hpp"
#include "gemm/plan3d.hpp"

namespace cala::detail {

template <class T>
struct LocalStore {
    Buffer<T> buf;
    index_t ld = 1;
    T* data() const { return buf.data(); }
};

/// A and B in the layer layouts of a Plan3D (replicated ones on every layer), on this rank.
template <class T>
class Layered {
public:
    /// Collective over g3.comm(): moves the user's matrix into place (counted).
    void bring_a(const Plan3D& plan, const Grid3D& g3, const MatrixRef<T>& a);
    void bring_b(const Plan3D& plan, const Grid3D& g3, const MatrixRef<T>& b);
    /// Collective: the layers' products, the fiber reduction and the return into c (beta there).
    /// `release` frees A and B after the layer products (one-shot use).
    void multiply(const Plan3D& plan, const Grid3D& g3, T alpha, T beta, const MatrixRef<T>& c, bool release);

private:
    LocalStore<T> a_, b_;
};

/// C := alpha·op(A)·op(B) + beta·C. Collective over g3.comm(), whose ranks are those of the
/// user's grid (same communicator, same rank numbering). Arguments already validated.
template <class T>
void summa_3d(const Plan3D& plan, const Grid3D& g3, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta,
              const MatrixRef<T>& c);

}  // namespace cala::detail

#pragma once
// The ScaLAPACK references of cala-bench symm and syrk: PBLAS p?symm and p?syrk on cala's local
// storage (see scalapack_ref.hpp for why no copy is needed).
//
// cala-bench symm -> psymm -> p?symm_ (libscalapack-mpich) -> BLAS

#include "cala/symm.hpp"
#include "scalapack_ref.hpp"

namespace cala::bench {

/// C := alpha·A·B + beta·C (Left) or alpha·B·A + beta·C (Right), A symmetric with its `uplo`
/// triangle, by PBLAS p?symm. Collective over `g`, which must match the cala grid of a, b, c.
template <class T>
void psymm(const BlacsGrid& g, Side side, Uplo uplo, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta,
           const MatrixRef<T>& c);

/// C := alpha·A·Aᵀ + beta·C (the `uplo` triangle) by PBLAS p?syrk. Collective over `g`.
template <class T>
void psyrk(const BlacsGrid& g, Uplo uplo, T alpha, const MatrixRef<T>& a, T beta, const MatrixRef<T>& c);

}  // namespace cala::bench

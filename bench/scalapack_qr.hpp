#pragma once
// The ScaLAPACK reference of cala-bench geqrf: p?geqrf on cala's local storage.
//
// cala-bench geqrf -> scalapack_qr -> p?geqrf_ (libscalapack-mpich: pdgeqr2 panels, pdlarft,
//   pdlarfb, no lookahead) -> BLAS, LAPACK

#include <vector>

#include "cala/matrix.hpp"
#include "scalapack_ref.hpp"

namespace cala::bench {

/// QR of a (m x n, square blocks) by ScaLAPACK's p?geqrf on the local storage of a, with
/// omp_get_max_threads() BLAS threads per rank; tau receives LOCc(n) scalars (ScaLAPACK's local
/// tau). Collective over `g`, which must match a's cala grid (checked, cala::Error otherwise).
template <class T>
void pgeqrf(const BlacsGrid& g, const MatrixRef<T>& a, std::vector<T>& tau);

}  // namespace cala::bench

#pragma once
// cala-bench potrf's GPU reference, behind a host-callable function (no CUDA type here).

#include "cala/types.hpp"
#include "reference.hpp"

namespace cala::cuda {

/// In-core cuSOLVER Cholesky: the n x n host matrix a (column-major, leading dimension lda) is
/// copied to device memory (not timed), then cusolverDnXpotrf of its lower or upper triangle runs
/// on it, timed with events; `runs` times after one warm-up, the matrix copied in again before
/// each. *info: the last run's info. Throws cala::Error when the matrix does not fit.
template <class T>
RefTime incore_potrf(int ordinal, bool lower, index_t n, const T* a, index_t lda, int runs, index_t* info);

}  // namespace cala::cuda

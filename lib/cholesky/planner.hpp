#pragma once
// The Cholesky planner: resolves CholeskyVariant::Auto (2D on the user's grid, or a 2.5D grid
// p x q x h) from the model, under the memory limit.

#include "cala/cholesky.hpp"

namespace cala::detail {

/// opts with the variant and grid decided (what potrf runs). Throws cala::Error (the same on
/// every rank: the inputs agree) when no plan fits the memory limit.
CholeskyOptions resolve_potrf(Uplo uplo, const BlockCyclic& a, GridOrder order, const CholeskyOptions& opts,
                              std::size_t elem_size, bool is_complex);

}  // namespace cala::detail

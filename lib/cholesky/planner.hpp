#pragma once
// The Cholesky planner: resolves CholeskyVariant::Auto (2D on the user's grid, or a 2.5D grid
// p x q x h) from the model, under the memory limit.

#include <string>

#include "cala/cholesky.hpp"

namespace cala::detail {

/// opts with the variant and grid decided (what potrf runs). Throws cala::Error (the same on
/// every rank: the inputs agree) when no plan fits the memory limit.
CholeskyOptions resolve_potrf(Uplo uplo, const BlockCyclic& a, GridOrder order, const CholeskyOptions& opts,
                              std::size_t elem_size, bool is_complex);

/// Empty when the options are valid for a grid of nranks ranks, else "potrf: " and what is wrong.
std::string check_potrf_options(const CholeskyOptions& o, int nranks);
/// The arguments of the Cholesky model functions (plan_potrf, potrf_cost): a cala::Error
/// prefixed with fn when uplo, the shape of A, the options or elem_size are wrong.
void check_potrf_model(const char* fn, Uplo uplo, const BlockCyclic& a, const CholeskyOptions& o,
                       std::size_t elem_size);

}  // namespace cala::detail

#pragma once
// Internal pieces of the gemm entry points (lib/gemm/gemm.cpp, lib/gemm/gemm3d_entry.cpp).

#include <cstdint>
#include <string>

#include "cala/gemm.hpp"
#include "cala/grid3d.hpp"
#include "gemm/plan3d.hpp"

namespace cala::detail {

/// Empty when the arguments are valid on this rank, else a message naming the argument.
template <class T>
std::string check_gemm(Op op_a, Op op_b, const MatrixRef<T>& a, const MatrixRef<T>& b, const MatrixRef<T>& c,
                       const GemmOptions& o);
/// What every rank must pass alike.
template <class T>
std::uint64_t gemm_fingerprint(Op op_a, Op op_b, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta,
                               const MatrixRef<T>& c, const GemmOptions& o);
/// The p x q x c grid over the ranks of `user` (made once per shape and communicator).
const Grid3D& grid3d_for(const Grid2D& user, Shape3 g);
/// Drops every grid grid3d_for made (their communicators are freed with the last holder: a
/// Gemm3D keeps its own copy). Every rank calls it at the same point; no algorithm may be running.
void release_grid3d_cache() noexcept;

}  // namespace cala::detail

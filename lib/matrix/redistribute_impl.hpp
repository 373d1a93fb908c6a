#pragma once
// Internal helpers shared by the collective entry points: argument checks and the unchecked
// redistribution that algorithms call after their own (collective) validation.

#include <cstdint>
#include <string>

#include "cala/matrix.hpp"
#include "matrix/redist_plan.hpp"

namespace cala::detail {

template <class T>
void redistribute_unchecked(Op op, const MatrixRef<T>& src, const MatrixRef<T>& dst);

/// dst := op(src) (or, accumulating, dst := op(src) + beta·dst) between placements on
/// possibly different grids over `comm`. Collective over comm; a rank passes the local storage
/// of the process it holds in each placement (ignored where it holds none).
template <class T>
void redistribute_placed(Op op, const Comm& comm, const Placement& src, const T* sdata, index_t sld,
                         const Placement& dst, T* ddata, index_t dld, bool accumulate, T beta);

/// Empty if `l` fits grid `g` and g is the same grid as `ref`; else a message naming `name`.
std::string check_same_grid(const char* fn, const char* name, const Grid2D& g, const BlockCyclic& l,
                            const Grid2D& ref);
/// Empty if the local storage of `a` is usable (no null pointer with data, ld large enough).
template <class T>
std::string check_local(const char* fn, const char* name, const MatrixRef<T>& a);

/// FNV-1a fingerprint of arguments that every rank must pass alike.
std::uint64_t fingerprint(std::uint64_t h, const void* data, std::size_t bytes);
std::uint64_t fingerprint(std::uint64_t h, const BlockCyclic& l);

}  // namespace cala::detail

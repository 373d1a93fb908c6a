#pragma once
// Page-locked host memory for asynchronous copies: allocations (cudaHostAlloc) and registration
// of the caller's memory (cudaHostRegister), reference-counted per process so that several
// devices, or A and B being one matrix, pin a range once. No CUDA type appears here.

#include <cstddef>
#include <cstdint>

namespace cala::cuda {

/// Page-locked host memory of bytes, usable by every device (cudaHostAllocPortable).
/// Throws cala::Error when it cannot be had.
void* pinned_alloc(std::size_t bytes);
void pinned_free(void* p) noexcept;

/// Pins [p, p + bytes) unless it already is (cudaHostAlloc memory, or pinned by an earlier
/// call). Returns whether the range is page-locked afterwards; false means copies from it stay
/// pageable (correct, slower: CALA_CUDA_PIN=0 asks for that). Every call, true or false, is
/// matched by one unpin_range(p).
bool pin_range(const void* p, std::int64_t bytes);
void unpin_range(const void* p) noexcept;

}  // namespace cala::cuda

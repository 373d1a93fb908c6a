#pragma once
// Internal: cala::device_gemm on a list naming more than one kind of unit goes here (issue 19,
// item 4): the node runtime, one static allocation per chunk of C columns (each chunk's C tiles
// at most half the non-cpu units' memory), as the chunked engine chunks C.

#include "cala/device.hpp"
#include "cala/node.hpp"

namespace cala::node::detail {

template <class T>
void device_gemm_on_node(Op op_a, Op op_b, index_t m, index_t n, index_t k, T alpha, const T* a, index_t lda,
                         const T* b, index_t ldb, T beta, T* c, index_t ldc, const DeviceGemmOptions& opts,
                         DeviceGemmReport& rep);

}  // namespace cala::node::detail

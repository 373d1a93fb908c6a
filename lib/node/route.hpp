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

/// device_gemm's tile on such a list for elements of elem bytes: opts.tile, else 256 shrunk until
/// six tiles fit the smallest non-cpu unit's budget (before the min with a call's sizes).
index_t node_tile(const DeviceGemmOptions& opts, std::size_t elem);

/// At most the host workspace (bytes) that one device_gemm of m x n x k on opts.devices holds:
/// on the node, per "host" unit (a HostDevice: its tiles are counted workspace), min(its budget
/// rounded down to whole tiles, every A, B and C tile of the call at the call's tile, each tile
/// allocated whole); a call of smaller sizes on the same list holds no more. On the chunked
/// engine (one kind of device), each "host" device's budget. CUDA and cpu units: 0.
std::int64_t device_workspace_bound(const DeviceGemmOptions& opts, index_t m, index_t n, index_t k, std::size_t elem);

}  // namespace cala::node::detail

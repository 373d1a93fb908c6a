#pragma once
// Local updates into one C that stays on the devices: stationary-C SUMMA with devices (issue 29)
// runs one local update per panel group, and the chunked engine alone would copy the local C in
// and out for each (at n = 32768 on 2 x 1 with panels of 8192: four times 4.3 GB each way per
// rank, against 4.3 GB of A and B panels). Here C's tiles go to the devices at the first update
// (unless beta == 0), take every update in place, and come back once, at finish():
//
//   Accumulator(m, n, c, ldc, opts)     devices opened once (make_devices), nothing copied yet
//   update(op_a, op_b, k, alpha, A, B, beta)  -> chunked_gemm(plan of accumulate_plan, rc = C's tiles)
//   finish()                            C's tiles -> host, synchronize, released
//
// Where C and an update's inputs do not fit, the update is one chunked call as device_gemm runs
// it (C written back first if it was on the devices). A node's units (cpu in the list) are not
// devices: the caller routes those to device_gemm (the node runtime).

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "device/chunked.hpp"

namespace cala::device {

/// The plan of one update (m x n x k) of an accumulation: C in one block (b = Mt, c = Nt), never
/// streamed, tiles of the devices' preferred size (or opts.tile) limited by max(m, n) so that
/// every update has the same; nullopt where it does not fit the devices.
std::optional<LocalPlan> accumulate_plan(index_t m, index_t n, index_t k, std::size_t elem_size,
                                         const DeviceGemmOptions& opts, std::span<Device* const> devs);

template <class T>
class Accumulator {
public:
    /// C (m x n, column-major, ldc) in host memory, updated on the devices of opts (a list of
    /// one kind: uses_node(opts.devices) is a cala::Error).
    Accumulator(index_t m, index_t n, T* c, index_t ldc, const DeviceGemmOptions& opts);
    /// Releases C's device tiles without writing them back (finish() does that).
    ~Accumulator();
    Accumulator(const Accumulator&) = delete;
    Accumulator& operator=(const Accumulator&) = delete;

    /// C := alpha·op(A)·op(B) + beta·C with op(A) m x k and op(B) k x n (host memory).
    void update(Op op_a, Op op_b, index_t k, T alpha, const T* a, index_t lda, const T* b, index_t ldb, T beta);
    /// C back in host memory (a no-op when it is not on the devices).
    void finish();
    /// Whether C's tiles are on the devices now.
    bool holds_c() const { return held_; }

private:
    void release() noexcept;

    index_t m_, n_, ldc_;
    T* c_;
    DeviceGemmOptions opts_;
    std::vector<std::unique_ptr<Device>> devs_;
    std::vector<Device*> raw_;
    ResidentC rc_;
    bool held_ = false;
};

}  // namespace cala::device

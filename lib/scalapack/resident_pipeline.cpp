// p?gemm_ on one process (a 1 x 1 grid) on its device, the copies overlapping the product
// (resident_route.hpp: run_pipelined).
//
// A goes up whole; then C is done in column slices j = 0, 1, ... of width w, two device buffers
// for op(B)'s slice and two for C's, used in turn:
//
//   host -> device (in-stream)   A | B0 | B1 (C0, C1 first when beta != 0) | B2 ...
//   device (compute stream)          gemm0 | gemm1 | gemm2 ...
//   device -> host (out-stream)             C0   |  C1   ...
//
// The device orders each buffer's uses itself (CudaDevice: an event per memory block and stream),
// so slice j + 2's upload waits for gemm j only, and gemm j + 2 for C j's download only. The
// product on the device is gemm(op_a, op_b) on the slices as stored: op(B)'s columns j are B's
// columns (op_b = N) or B's rows (T, C), copied as they are.

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "core/check.hpp"
#include "device/device.hpp"
#include "scalapack/resident_route.hpp"

namespace cala::scalapack {

namespace {

// A device allocation released on every path.
struct DeviceBlock {
    device::Device& d;
    std::int64_t bytes;
    void* p;
    DeviceBlock(device::Device& dev, std::int64_t n) : d(dev), bytes(n), p(n > 0 ? dev.allocate(n) : nullptr) {}
    ~DeviceBlock() {
        if (p != nullptr) d.release(p, bytes);
    }
    DeviceBlock(const DeviceBlock&) = delete;
    DeviceBlock& operator=(const DeviceBlock&) = delete;
};

}  // namespace

index_t pipeline_slice(index_t n) {
    static const index_t forced = [] {
        const char* e = std::getenv("CALA_SHIM_DEVICE_SLICE");
        return e != nullptr ? static_cast<index_t>(std::strtoll(e, nullptr, 10)) : 0;
    }();
    return forced > 0 ? forced : std::max<index_t>(256, (n + 15) / 16);
}

template <class T>
void run_pipelined(const ResidentDevice& dev, Op op_a, Op op_b, T alpha, const MatrixRef<T>& a,
                   const MatrixRef<T>& b, T beta, const MatrixRef<T>& c) {
    device::Device& d = *dev.get();
    const index_t m = c.layout().m(), n = c.layout().n(), k = op_a == Op::N ? a.layout().n() : a.layout().m();
    const index_t ar = a.layout().m(), ac = a.layout().n();  // A as stored
    const index_t w = std::min(n, pipeline_slice(n));
    const index_t br = op_b == Op::N ? k : w, bc = op_b == Op::N ? w : k;  // one slice of B as stored
    const std::int64_t e = sizeof(T);
    // Everything allocated before C is written: a device too small fails here, C untouched.
    DeviceBlock da(d, ar * ac * e);
    DeviceBlock db0(d, br * bc * e), db1(d, br * bc * e), dc0(d, m * w * e), dc1(d, m * w * e);
    DeviceBlock* bs[2] = {&db0, &db1};
    DeviceBlock* cs[2] = {&dc0, &dc1};
    d.copy_to_device({da.p, std::max<index_t>(ar, 1), a.data(), a.ld(), ar, ac, sizeof(T)});
    const index_t slices = (n + w - 1) / w;
    for (index_t j = 0; j <= slices; ++j) {
        if (j < slices) {  // slice j up, its product issued
            const index_t j0 = j * w, wj = std::min(w, n - j0);
            void* bj = bs[j % 2]->p;
            void* cj = cs[j % 2]->p;
            if (op_b == Op::N) d.copy_to_device({bj, k, b.data() + j0 * b.ld(), b.ld(), k, wj, sizeof(T)});
            else d.copy_to_device({bj, w, b.data() + j0, b.ld(), wj, k, sizeof(T)});
            if (beta != T(0)) d.copy_to_device({cj, m, c.data() + j0 * c.ld(), c.ld(), m, wj, sizeof(T)});
            d.gemm(device::scalar_of<T>(), op_a, op_b, m, wj, k, &alpha, da.p, std::max<index_t>(ar, 1), bj,
                   op_b == Op::N ? k : w, &beta, cj, m);
        }
        if (j > 0) {  // slice j - 1 down (its product was issued before slice j's)
            const index_t j0 = (j - 1) * w, wj = std::min(w, n - j0);
            d.copy_to_host({c.data() + j0 * c.ld(), c.ld(), cs[(j - 1) % 2]->p, m, m, wj, sizeof(T)});
        }
    }
    d.synchronize();
}

#define CALA_INST(T)                                                                                              \
    template void run_pipelined<T>(const ResidentDevice&, Op, Op, T, const MatrixRef<T>&, const MatrixRef<T>&, T, \
                                   const MatrixRef<T>&);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::scalapack

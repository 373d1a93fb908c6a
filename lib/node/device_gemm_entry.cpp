// cala::device_gemm -> the node runtime (a list naming more than one kind of unit: node/route)
//                    | device_gemm_chunked (one kind of device: device/chunked)
// The entry sits above both engines it chooses between (device/ never includes node/).

#include <algorithm>
#include <complex>
#include <sstream>
#include <utility>

#include "cala/device.hpp"
#include "device/chunked.hpp"
#include "node/route.hpp"

namespace cala {

namespace {
void check_ld(const char* name, index_t ld, index_t rows) {
    if (ld < std::max<index_t>(rows, 1)) {
        std::ostringstream s;
        s << "device_gemm: " << name << " is " << ld << " but must be at least " << std::max<index_t>(rows, 1);
        throw Error(s.str());
    }
}
// A null pointer for an operand with elements is an error (not a crash in the first copy).
void check_ptr(const char* name, const void* p, index_t elems) {
    if (p == nullptr && elems > 0) {
        std::ostringstream s;
        s << "device_gemm: " << name << " is a null pointer with " << elems << " elements";
        throw Error(s.str());
    }
}
}  // namespace

template <class T>
void device_gemm(Op op_a, Op op_b, index_t m, index_t n, index_t k, T alpha, const T* a, index_t lda, const T* b,
                 index_t ldb, T beta, T* c, index_t ldc, const DeviceGemmOptions& opts) {
    if (m < 0 || n < 0 || k < 0) {
        std::ostringstream s;
        s << "device_gemm: sizes must be non-negative, got m=" << m << " n=" << n << " k=" << k;
        throw Error(s.str());
    }
    for (auto [name, op] : {std::pair{"op_a", op_a}, std::pair{"op_b", op_b}})
        if (op != Op::N && op != Op::T && op != Op::C) {
            std::ostringstream s;
            s << "device_gemm: " << name << " is " << static_cast<int>(op) << ", not an Op";
            throw Error(s.str());
        }
    check_ld("lda", lda, op_a == Op::N ? m : k);
    check_ld("ldb", ldb, op_b == Op::N ? k : n);
    check_ld("ldc", ldc, m);
    check_ptr("A", a, m * k);
    check_ptr("B", b, k * n);
    check_ptr("C", c, m * n);
    if (!uses_node(opts.devices))
        return device::device_gemm_chunked<T>(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, opts);
    DeviceGemmReport rep;  // several kinds of unit: the node runtime (cala/node.hpp)
    node::detail::device_gemm_on_node<T>(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, opts, rep);
    device::add_device_traffic(rep);
    if (opts.report) *opts.report = std::move(rep);
}

#define CALA_INST(T)                                                                                           \
    template void device_gemm<T>(Op, Op, index_t, index_t, index_t, T, const T*, index_t, const T*, index_t, T, \
                                 T*, index_t, const DeviceGemmOptions&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala

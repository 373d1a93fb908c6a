// HostDevice: "device memory" is counted host memory; copies are memcpy; gemm is kernels::gemm.

#include <complex>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>

#include "core/workspace.hpp"
#include "device/device.hpp"
#include "kernels/blas.hpp"

namespace cala::device {

HostDevice::HostDevice(std::int64_t budget_bytes, int threads) : budget_(budget_bytes), threads_(threads) {}

HostDevice::~HostDevice() = default;

void* HostDevice::allocate(std::int64_t bytes) {
    if (used_ + bytes > budget_) {
        std::ostringstream s;
        s << "HostDevice: allocating " << bytes << " bytes with " << used_ << " in use exceeds the budget of "
          << budget_ << " bytes";
        throw DeviceMemoryError(s.str());
    }
    void* p = detail::workspace_alloc(static_cast<std::size_t>(bytes));
    used_ += bytes;
    if (used_ > peak_) peak_ = used_;
    return p;
}

void HostDevice::release(void* p, std::int64_t bytes) noexcept {
    if (!p) return;
    detail::workspace_free(p, static_cast<std::size_t>(bytes));
    used_ -= bytes;
}

namespace {
void copy2d(const Copy2D& c) {
    const auto* src = static_cast<const char*>(c.src);
    auto* dst = static_cast<char*>(c.dst);
    const std::size_t col = c.elem * static_cast<std::size_t>(c.rows);
    for (index_t j = 0; j < c.cols; ++j)
        std::memcpy(dst + c.elem * static_cast<std::size_t>(j * c.ld_dst),
                    src + c.elem * static_cast<std::size_t>(j * c.ld_src), col);
}

template <class T>
void gemm_as(Op op_a, Op op_b, index_t m, index_t n, index_t k, const void* alpha, const void* a, index_t lda,
             const void* b, index_t ldb, const void* beta, void* c, index_t ldc) {
    kernels::gemm<T>(op_a, op_b, m, n, k, *static_cast<const T*>(alpha), static_cast<const T*>(a), lda,
                     static_cast<const T*>(b), ldb, *static_cast<const T*>(beta), static_cast<T*>(c), ldc);
}
}  // namespace

void HostDevice::copy_to_device(const Copy2D& c) { copy2d(c); }
void HostDevice::copy_to_host(const Copy2D& c) { copy2d(c); }
void HostDevice::copy_from_peer(const Copy2D& c, Device&) { copy2d(c); }

void HostDevice::gemm(Scalar s, Op op_a, Op op_b, index_t m, index_t n, index_t k, const void* alpha, const void* a,
                      index_t lda, const void* b, index_t ldb, const void* beta, void* c, index_t ldc) {
    switch (s) {
    case Scalar::S: gemm_as<float>(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); break;
    case Scalar::D: gemm_as<double>(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); break;
    case Scalar::C: gemm_as<std::complex<float>>(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); break;
    case Scalar::Z: gemm_as<std::complex<double>>(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); break;
    }
}

namespace {
// Calls f with a value-initialized T of the scalar type s (dispatch on the element type).
template <class F>
void with_type(Scalar s, F&& f) {
    switch (s) {
    case Scalar::S: f(float{}); break;
    case Scalar::D: f(double{}); break;
    case Scalar::C: f(std::complex<float>{}); break;
    case Scalar::Z: f(std::complex<double>{}); break;
    }
}
}  // namespace

void HostDevice::potrf(Scalar s, bool lower, index_t n, void* a, index_t lda, index_t offset) {
    with_type(s, [&](auto t) {
        using T = decltype(t);
        const index_t info = kernels::potrf<T>(lower, n, static_cast<T*>(a), lda);
        if (info != 0 && info_ == 0) info_ = info > 0 ? offset + info : info;
    });
}

index_t HostDevice::take_info() {
    const index_t info = info_;
    info_ = 0;
    return info;
}

void HostDevice::trsm(Scalar s, bool left, bool lower, Op op_a, bool unit, index_t m, index_t n, const void* alpha,
                      const void* a, index_t lda, void* b, index_t ldb) {
    with_type(s, [&](auto t) {
        using T = decltype(t);
        kernels::trsm<T>(left, lower, op_a, unit, m, n, *static_cast<const T*>(alpha), static_cast<const T*>(a), lda,
                         static_cast<T*>(b), ldb);
    });
}

void HostDevice::herk(Scalar s, bool lower, Op op_a, index_t n, index_t k, const void* alpha, const void* a,
                      index_t lda, const void* beta, void* c, index_t ldc) {
    with_type(s, [&](auto t) {
        using T = decltype(t);
        using R = real_t<T>;
        kernels::herk<T>(lower, op_a, n, k, *static_cast<const R*>(alpha), static_cast<const T*>(a), lda,
                         *static_cast<const R*>(beta), static_cast<T*>(c), ldc);
    });
}

void HostDevice::syrk(Scalar s, bool lower, Op op_a, index_t n, index_t k, const void* alpha, const void* a,
                      index_t lda, const void* beta, void* c, index_t ldc) {
    with_type(s, [&](auto t) {
        using T = decltype(t);
        kernels::syrk<T>(lower, op_a, n, k, *static_cast<const T*>(alpha), static_cast<const T*>(a), lda,
                         *static_cast<const T*>(beta), static_cast<T*>(c), ldc);
    });
}

void HostDevice::add(Scalar s, Op op, index_t m, index_t n, const void* x, index_t ldx, const void* beta, void* c,
                     index_t ldc) {
    with_type(s, [&](auto t) {
        using T = decltype(t);
        kernels::add<T>(op, m, n, static_cast<const T*>(x), ldx, *static_cast<const T*>(beta), static_cast<T*>(c), ldc);
    });
}

namespace {
CudaFactory& cuda_factory() {
    static CudaFactory f;
    return f;
}
}  // namespace

void register_cuda_factory(CudaFactory f) { cuda_factory() = std::move(f); }

std::vector<std::unique_ptr<Device>> make_devices(const std::string& spec_in, std::int64_t cap_bytes) {
    std::string spec = spec_in;
    if (spec.empty()) {
        const char* env = std::getenv("CALA_DEVICES");
        spec = env && *env ? env : "host";
    }
    std::vector<std::unique_ptr<Device>> out;
    std::stringstream ss(spec);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (item == "host") {
            out.push_back(std::make_unique<HostDevice>(cap_bytes > 0 ? cap_bytes : (std::int64_t{1} << 30)));
            continue;
        }
        char* end = nullptr;
        const long ord = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || ord < 0)
            throw Error("device_gemm: device list entry '" + item + "' of '" + spec +
                        "' is neither 'host' nor a CUDA ordinal");
        if (!cuda_factory())
            throw Error("device_gemm: CUDA device " + item + " requested but libcala_cuda is not loaded "
                        "(cala built without CUDA, or the program does not link cala_cuda)");
        out.push_back(cuda_factory()(static_cast<int>(ord), cap_bytes));
    }
    if (out.empty()) throw Error("device_gemm: empty device list '" + spec + "'");
    return out;
}

}  // namespace cala::device

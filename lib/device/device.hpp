#pragma once
// Layer 6: a device is a processing unit with its own memory budget. The chunked engine sees
// only this interface; HostDevice is here, CudaDevice in cuda/ (nothing here names CUDA).
//
// Device memory is opaque (void*); tiles are column-major with a leading dimension. Operations
// may be asynchronous; on one device each is ordered after the earlier operations that touch the
// same memory (HostDevice: all complete on issue; CudaDevice: streams ordered by events), and
// synchronize() waits for all of them.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>
#include <complex>

#include "cala/error.hpp"
#include "cala/types.hpp"

namespace cala::device {

enum class Scalar { S, D, C, Z };

template <class T> constexpr Scalar scalar_of();
template <> constexpr Scalar scalar_of<float>() { return Scalar::S; }
template <> constexpr Scalar scalar_of<double>() { return Scalar::D; }
template <> constexpr Scalar scalar_of<std::complex<float>>() { return Scalar::C; }
template <> constexpr Scalar scalar_of<std::complex<double>>() { return Scalar::Z; }

/// An allocation would exceed the device's memory budget.
class DeviceMemoryError : public Error {
public:
    using Error::Error;
};

/// A 2D copy: rows x cols elements of elem bytes, column-major on both sides.
struct Copy2D {
    void* dst;
    index_t ld_dst;
    const void* src;
    index_t ld_src;
    index_t rows, cols;
    std::size_t elem;
};

class Device {
public:
    virtual ~Device() = default;
    virtual std::string name() const = 0;
    /// Bytes this device may hold (a cap below the physical memory, or the physical memory).
    virtual std::int64_t budget_bytes() const = 0;
    virtual std::int64_t used_bytes() const = 0;
    virtual std::int64_t peak_bytes() const = 0;
    virtual void reset_peak() = 0;
    /// Device memory of bytes; throws DeviceMemoryError past the budget.
    virtual void* allocate(std::int64_t bytes) = 0;
    virtual void release(void* p, std::int64_t bytes) noexcept = 0;
    virtual void copy_to_device(const Copy2D& c) = 0;     ///< src in host memory
    virtual void copy_to_host(const Copy2D& c) = 0;       ///< dst in host memory
    /// src lives on device from, dst on this device; the copy is ordered after the work already
    /// issued on from that writes src, and before any later reuse of src's memory by from
    /// (HostDevice: complete on issue).
    virtual void copy_from_peer(const Copy2D& c, Device& from) = 0;
    /// c := alpha·op(a)·op(b) + beta·c on device tiles; alpha, beta point to host scalars of s.
    virtual void gemm(Scalar s, Op op_a, Op op_b, index_t m, index_t n, index_t k, const void* alpha,
                      const void* a, index_t lda, const void* b, index_t ldb, const void* beta, void* c,
                      index_t ldc) = 0;
    virtual void synchronize() = 0;

    // Optional, with defaults that fit a device whose operations complete on issue (HostDevice).

    /// Device memory holding host tile src (src.dst is ignored; the tile lands with leading
    /// dimension src.ld_dst): a device that still holds that host tile may hand it back without
    /// a copy (*moved = false); otherwise a new block of bytes is filled (*moved = true).
    /// Released with release(p, bytes) like any allocation.
    virtual void* load(const Copy2D& src, std::int64_t bytes, bool* moved) {
        void* p = allocate(bytes);
        Copy2D c = src;
        c.dst = p;
        try {
            copy_to_device(c);
        } catch (...) {
            release(p, bytes);
            throw;
        }
        *moved = true;
        return p;
    }
    /// The chunk barrier of the engine: after it, tiles used so far may be released. A device
    /// that orders reuse of released memory itself (CudaDevice: events) may return before its
    /// work completes; synchronize() is the full wait.
    virtual void barrier() { synchronize(); }
    /// A call is about to read and write these host ranges (the operands): a device may pin them
    /// for asynchronous copies and must forget which host tiles it holds (the data may have
    /// changed since an earlier call). end_host_ranges() undoes it once the call has synchronized.
    virtual void begin_host_ranges(const std::vector<std::pair<const void*, std::int64_t>>& ranges) {
        (void)ranges;
    }
    virtual void end_host_ranges() noexcept {}
    /// Tiles this device found resident instead of copying them (load with *moved = false).
    virtual std::int64_t tiles_reused() const { return 0; }
    /// The chunked engine's tile when the caller names none: 256 for a team of cores, larger
    /// where one tile product must fill a GPU (CudaDevice: 2048).
    virtual index_t preferred_tile() const { return 256; }
    /// A mark of the products issued on this device so far; wait_mark(m) returns once they have
    /// completed (and releases the mark). A caller bounds the work in flight with it instead of
    /// synchronize(), which also waits for every copy. Devices that complete on issue: 0, no wait.
    virtual std::uint64_t mark() { return 0; }
    virtual void wait_mark(std::uint64_t m) { (void)m; }

    // Factorization kernels on device tiles (the streamed Cholesky, potrf_streamed.hpp). A device
    // that has none throws cala::Error naming itself. Ordered like gemm: after the earlier
    // operations that write what they read, and before later ones that touch what they write.

    /// Cholesky of the n x n tile a, its lower or upper triangle (LAPACK ?potrf; the other strict
    /// triangle is not touched). A failed pivot is not returned here (that would wait for the
    /// device): the device keeps the first nonzero info since the last take_info(), as
    /// offset + LAPACK's info (offset: the tile's global row, so that the kept value is the
    /// global index of the failed minor).
    virtual void potrf(Scalar s, bool lower, index_t n, void* a, index_t lda, index_t offset) {
        (void)s, (void)lower, (void)n, (void)a, (void)lda, (void)offset;
        throw Error("Device " + name() + ": no potrf");
    }
    /// The first nonzero info kept by potrf since the last call (0: none), then forgets it. Waits
    /// for the potrf calls issued so far (not for the copies).
    virtual index_t take_info() { return 0; }
    /// b := alpha·op(a)⁻¹·b (left) or alpha·b·op(a)⁻¹ (right), a triangular (lower or upper, unit
    /// diagonal or not), b m x n; alpha points to a host scalar of s.
    virtual void trsm(Scalar s, bool left, bool lower, Op op_a, bool unit, index_t m, index_t n, const void* alpha,
                      const void* a, index_t lda, void* b, index_t ldb) {
        (void)s, (void)left, (void)lower, (void)op_a, (void)unit, (void)m, (void)n, (void)alpha, (void)a, (void)lda,
            (void)b, (void)ldb;
        throw Error("Device " + name() + ": no trsm");
    }
    /// c := alpha·op(a)·op(a)ᴴ + beta·c on the lower or upper triangle of the n x n tile c (op N:
    /// a is n x k; C: k x n). Real types: syrk (op C means T). alpha, beta point to host scalars
    /// of the real type of s. beta == 0: c is not read.
    virtual void herk(Scalar s, bool lower, Op op_a, index_t n, index_t k, const void* alpha, const void* a,
                      index_t lda, const void* beta, void* c, index_t ldc) {
        (void)s, (void)lower, (void)op_a, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)beta, (void)c,
            (void)ldc;
        throw Error("Device " + name() + ": no herk");
    }
    /// c := alpha·op(a)·op(a)ᵀ + beta·c on the lower or upper triangle of the n x n tile c (op N:
    /// a is n x k; T: k x n), no conjugation: BLAS ?syrk of every type. alpha, beta point to host
    /// scalars of s. beta == 0: c is not read. Real types: herk's (the default).
    virtual void syrk(Scalar s, bool lower, Op op_a, index_t n, index_t k, const void* alpha, const void* a,
                      index_t lda, const void* beta, void* c, index_t ldc) {
        if (s == Scalar::C || s == Scalar::Z) throw Error("Device " + name() + ": no complex syrk");
        herk(s, lower, op_a, n, k, alpha, a, lda, beta, c, ldc);
    }
    /// c := op(x) + beta·c, c m x n (op T / C: x is n x m); beta points to a host scalar of s.
    /// beta == 0: c is not read. (BLAS-like ?geam; the reduced partial sums of the resident
    /// A- and B-stationary SUMMA land in C through it.)
    virtual void add(Scalar s, Op op, index_t m, index_t n, const void* x, index_t ldx, const void* beta, void* c,
                     index_t ldc) {
        (void)s, (void)op, (void)m, (void)n, (void)x, (void)ldx, (void)beta, (void)c, (void)ldc;
        throw Error("Device " + name() + ": no add");
    }
};

/// A team of CPU cores with a memory budget: device memory is host memory it owns and counts;
/// copies are memcpy, gemm (potrf, trsm, herk, syrk) is kernels:: on the calling thread's OpenMP team.
class HostDevice final : public Device {
public:
    explicit HostDevice(std::int64_t budget_bytes, int threads = 0);
    ~HostDevice() override;
    std::string name() const override { return "host"; }
    std::int64_t budget_bytes() const override { return budget_; }
    std::int64_t used_bytes() const override { return used_; }
    std::int64_t peak_bytes() const override { return peak_; }
    void reset_peak() override { peak_ = used_; }
    void* allocate(std::int64_t bytes) override;
    void release(void* p, std::int64_t bytes) noexcept override;
    void copy_to_device(const Copy2D& c) override;
    void copy_to_host(const Copy2D& c) override;
    void copy_from_peer(const Copy2D& c, Device& from) override;
    void gemm(Scalar s, Op op_a, Op op_b, index_t m, index_t n, index_t k, const void* alpha, const void* a,
              index_t lda, const void* b, index_t ldb, const void* beta, void* c, index_t ldc) override;
    void synchronize() override {}
    void potrf(Scalar s, bool lower, index_t n, void* a, index_t lda, index_t offset) override;
    index_t take_info() override;
    void trsm(Scalar s, bool left, bool lower, Op op_a, bool unit, index_t m, index_t n, const void* alpha,
              const void* a, index_t lda, void* b, index_t ldb) override;
    void herk(Scalar s, bool lower, Op op_a, index_t n, index_t k, const void* alpha, const void* a, index_t lda,
              const void* beta, void* c, index_t ldc) override;
    void syrk(Scalar s, bool lower, Op op_a, index_t n, index_t k, const void* alpha, const void* a, index_t lda,
              const void* beta, void* c, index_t ldc) override;
    void add(Scalar s, Op op, index_t m, index_t n, const void* x, index_t ldx, const void* beta, void* c,
             index_t ldc) override;

private:
    std::int64_t budget_;
    int threads_;
    std::int64_t used_ = 0, peak_ = 0;
    index_t info_ = 0;  // the first nonzero potrf info since take_info()
};

/// Makes CUDA device `ordinal` with a cap (0: its free memory); registered by libcala_cuda.
using CudaFactory = std::function<std::unique_ptr<Device>(int ordinal, std::int64_t cap_bytes)>;
void register_cuda_factory(CudaFactory f);
/// Parses a device list ("host,host", "0,1"; empty: CALA_DEVICES, else "host").
std::vector<std::unique_ptr<Device>> make_devices(const std::string& spec, std::int64_t cap_bytes);

}  // namespace cala::device

// potrf_streamed: left-looking blocked Cholesky of a host matrix on one device (see the header).

#include "device/potrf_streamed.hpp"

#include <algorithm>
#include <complex>
#include <cstdlib>
#include <utility>
#include <vector>

#include "core/check.hpp"

namespace cala::device {

namespace {

index_t width(index_t n, index_t nb, index_t j) { return std::min(nb, n - j * nb); }

/// The device memory of one call: the blocks, released (after the device's pending work) and the
/// host range unpinned on every exit, normal or not.
struct Held {
    Device& dev;
    std::vector<std::pair<void*, std::int64_t>> blocks;
    bool ranges = false;
    explicit Held(Device& d) : dev(d) {}
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;
    ~Held() {
        try {
            dev.synchronize();
        } catch (...) {  // a destructor does not throw; the blocks are released all the same
        }
        for (auto& [p, bytes] : blocks) dev.release(p, bytes);
        if (ranges) dev.end_host_ranges();
    }
};

}  // namespace

StreamedPotrfReport streamed_potrf_model(index_t n, index_t nb, std::size_t elem) {
    StreamedPotrfReport r;
    r.nb = nb;
    r.blocks = n > 0 ? ceil_div(n, nb) : 0;
    for (index_t j = 0; j < r.blocks; ++j) {
        const index_t w = width(n, nb, j), rows = n - j * nb;
        r.h2d_elems += rows * w;
        r.d2h_elems += rows * w;
        r.device_bytes += rows * w * static_cast<std::int64_t>(elem);
        r.device_calls += (rows > w ? 2 * j : j) + 1 + (rows > w ? 1 : 0);
    }
    return r;
}

index_t streamed_potrf_block(const Device& dev) {
    if (const char* e = std::getenv("CALA_STREAMED_NB"); e && *e) {
        char* end = nullptr;
        const long v = std::strtol(e, &end, 10);
        if (*end != '\0' || v <= 0)
            throw Error(detail::cat("potrf_streamed: CALA_STREAMED_NB is '", e, "', not a positive integer"));
        return v;
    }
    return std::min<index_t>(dev.preferred_tile(), 1024);
}

template <class T>
index_t potrf_streamed(Device& dev, bool lower, index_t n, T* a, index_t lda, index_t nb, StreamedPotrfReport* report) {
    using detail::cat;
    using R = real_t<T>;
    if (n < 0) throw Error(cat("potrf_streamed: n must be >= 0, got ", n));
    if (lda < std::max<index_t>(1, n)) throw Error(cat("potrf_streamed: lda is ", lda, ", less than max(1, n = ", n, ")"));
    if (nb < 0) throw Error(cat("potrf_streamed: nb must be >= 0, got ", nb));
    if (nb == 0) nb = streamed_potrf_block(dev);
    const std::size_t elem = sizeof(T);
    const StreamedPotrfReport model = streamed_potrf_model(n, nb, elem);
    if (report) *report = StreamedPotrfReport{.nb = nb};
    if (n == 0) return 0;
    const std::int64_t free_bytes = dev.budget_bytes() - dev.used_bytes();
    if (model.device_bytes > free_bytes)
        throw Error(cat("potrf_streamed: the triangle of n = ", n, " in blocks of ", nb, " needs ", model.device_bytes,
                        " bytes on ", dev.name(), ", which has ", free_bytes, " free of its budget of ",
                        dev.budget_bytes(), " bytes"));

    const Scalar s = scalar_of<T>();
    const index_t nblk = model.blocks;
    Held held(dev);
    std::vector<T*> blk(static_cast<std::size_t>(nblk));
    for (index_t j = 0; j < nblk; ++j) {
        const std::int64_t bytes = (n - j * nb) * width(n, nb, j) * static_cast<std::int64_t>(elem);
        try {
            blk[j] = static_cast<T*>(dev.allocate(bytes));
        } catch (const DeviceMemoryError& e) {
            throw Error(cat("potrf_streamed: block ", j, " of ", nblk, " (", bytes, " bytes) does not fit on ",
                            dev.name(), ": ", e.what()));
        }
        held.blocks.emplace_back(blk[j], bytes);
    }
    dev.begin_host_ranges({{a, static_cast<std::int64_t>(((n - 1) * lda + n) * static_cast<index_t>(elem))}});
    held.ranges = true;
    (void)dev.take_info();  // a stale info of an earlier call that did not finish

    // Block j: lower, rows j0..n-1 of columns j0..j0+w-1 (ld r); upper, rows j0..j0+w-1 of
    // columns j0..n-1 (ld w). The host side of it starts at a(j0, j0).
    auto copy_of = [&](index_t j, bool in) {
        const index_t j0 = j * nb, w = width(n, nb, j), r = n - j0;
        const index_t rows = lower ? r : w, cols = lower ? w : r;
        T* host = a + j0 + j0 * lda;
        return in ? Copy2D{blk[j], rows, host, lda, rows, cols, elem} : Copy2D{host, lda, blk[j], rows, rows, cols, elem};
    };
    StreamedPotrfReport done{.nb = nb, .blocks = nblk, .device_bytes = model.device_bytes};
    auto copy_in = [&](index_t j) {
        if (j >= nblk) return;
        const Copy2D c = copy_of(j, true);
        dev.copy_to_device(c);
        done.h2d_elems += c.rows * c.cols;
    };
    auto copy_out = [&](index_t j) {
        const Copy2D back = copy_of(j, false);
        dev.copy_to_host(back);
        done.d2h_elems += back.rows * back.cols;
    };
    // Blocks 0..ahead first; block j + ahead + 1 after step j's kernels are issued, so that a
    // device whose copies hold the host (CudaDevice packing pageable memory into its staging
    // slots) has the GPU computing meanwhile. The in-stream stays `ahead` blocks ahead.
    constexpr index_t ahead = 2;
    for (index_t j = 0; j <= ahead; ++j) copy_in(j);
    const T one(1), mone(-1);
    const R rone(1), rmone(-1);
    for (index_t j = 0; j < nblk; ++j) {
        const index_t j0 = j * nb, w = width(n, nb, j), r = n - j0;
        T* d = blk[j];
        for (index_t i = 0; i < j; ++i) {  // the update by every finished block
            const index_t i0 = i * nb, wi = width(n, nb, i), ri = n - i0;
            if (lower) {
                const T* p = blk[i] + (j0 - i0);  // rows j0.. of block i
                dev.herk(s, true, Op::N, w, wi, &rmone, p, ri, &rone, d, r);
                if (r > w) dev.gemm(s, Op::N, Op::C, r - w, w, wi, &mone, p + w, ri, p, ri, &one, d + w, r);
            } else {
                const T* p = blk[i] + (j0 - i0) * wi;  // columns j0.. of block i
                dev.herk(s, false, Op::C, w, wi, &rmone, p, wi, &rone, d, w);
                if (r > w) dev.gemm(s, Op::C, Op::N, w, r - w, wi, &mone, p, wi, p + w * wi, wi, &one, d + w * w, w);
            }
            done.device_calls += r > w ? 2 : 1;
        }
        dev.potrf(s, lower, w, d, lower ? r : w, j0);
        ++done.device_calls;
        if (r > w) {
            if (lower) dev.trsm(s, false, true, Op::C, false, r - w, w, &one, d, r, d + w, r);
            else dev.trsm(s, true, false, Op::C, false, w, r - w, &one, d, w, d + w * w, w);
            ++done.device_calls;
        }
        copy_in(j + ahead + 1);
        // Block j - 1 goes back now that step j is issued: a device whose copies out wait for the
        // GPU (staging slots) holds the caller there while the GPU computes step j.
        if (j > 0) copy_out(j - 1);
    }
    copy_out(nblk - 1);
    dev.synchronize();
    const index_t info = dev.take_info();
    if (info < 0) throw Error(cat("potrf_streamed: ", dev.name(), " reported info ", info, " (a bad argument)"));
    if (report) *report = done;
    return info;
}

#define CALA_INST(T) \
    template index_t potrf_streamed<T>(Device&, bool, index_t, T*, index_t, index_t, StreamedPotrfReport*);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::device

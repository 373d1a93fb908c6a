// Stager: pageable host copies through page-locked slots (staging.hpp).

#include "staging.hpp"

#include <cuda_runtime.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "cuda_check.hpp"

namespace cala::cuda {

namespace {
constexpr std::size_t kSlotBytes = std::size_t{32} << 20;
constexpr int kSlots = 8;  // per direction: copies in never wait for a copy out (which waits for the GPU)

// Process-wide free list of pinned slots (never freed: a CudaDevice is made per call).
std::mutex& pool_mutex() {
    static std::mutex m;
    return m;
}
std::vector<void*>& pool_free() {
    static auto* v = new std::vector<void*>;
    return *v;
}
void* take_slot() {
    {
        std::lock_guard lock(pool_mutex());
        if (!pool_free().empty()) {
            void* p = pool_free().back();
            pool_free().pop_back();
            return p;
        }
    }
    void* p = nullptr;
    CALA_CHECK_CUDA(cudaHostAlloc(&p, kSlotBytes, cudaHostAllocPortable));
    return p;
}
void give_slot(void* p) noexcept {
    std::lock_guard lock(pool_mutex());
    pool_free().push_back(p);
}

// Column-major rows x cols of elem bytes from (src, lds) to (dst, ldd), on the OpenMP team when large.
void copy_cols(char* dst, std::size_t ldd, const char* src, std::size_t lds, std::size_t col_bytes, index_t cols) {
    if (ldd == col_bytes && lds == col_bytes) {
        const std::size_t total = col_bytes * static_cast<std::size_t>(cols);
        const int parts = total >= (std::size_t{1} << 20) ? std::max(1, omp_get_max_threads()) : 1;
#pragma omp parallel for schedule(static) if (parts > 1)
        for (int t = 0; t < parts; ++t) {
            const std::size_t lo = total * t / parts, hi = total * (t + 1) / parts;
            std::memcpy(dst + lo, src + lo, hi - lo);
        }
        return;
    }
    const int team = col_bytes * static_cast<std::size_t>(cols) >= (std::size_t{1} << 20) ? omp_get_max_threads() : 1;
#pragma omp parallel for schedule(static) num_threads(team)
    for (index_t j = 0; j < cols; ++j)
        std::memcpy(dst + ldd * static_cast<std::size_t>(j), src + lds * static_cast<std::size_t>(j), col_bytes);
}
}  // namespace

HostCopyMode host_copy_mode() {
    const char* e = std::getenv("CALA_CUDA_PIN");
    if (!e || !*e || std::strcmp(e, "stage") == 0) return HostCopyMode::Stage;
    if (std::strcmp(e, "0") == 0) return HostCopyMode::Pageable;
    return HostCopyMode::Register;
}

struct Stager::Impl {
    struct Pending {  // a device->host copy landed (or landing) in the slot
        char* dst = nullptr;
        std::size_t ldd = 0, col_bytes = 0;
        index_t cols = 0;
    };
    struct Slot {
        void* host = nullptr;
        cudaEvent_t ev = nullptr;
        bool recorded = false;
        bool pending = false;
        Pending p;
    };
    /// One direction's slots, reused in issue order.
    struct Ring {
        Slot slot[kSlots];
        int next = 0;
    };
    Ring in, out;

    void unpack(Slot& s) {
        if (!s.pending) return;
        copy_cols(s.p.dst, s.p.ldd, static_cast<const char*>(s.host), s.p.col_bytes, s.p.col_bytes, s.p.cols);
        s.pending = false;
    }
    /// The slot's last copy done and its data (if device->host) in host memory.
    void settle(Slot& s) {
        if (s.recorded) CALA_CHECK_CUDA(cudaEventSynchronize(s.ev));
        unpack(s);
    }
    Slot& acquire(Ring& r) {
        Slot& s = r.slot[r.next];
        r.next = (r.next + 1) % kSlots;
        if (!s.host) {
            s.host = take_slot();
            CALA_CHECK_CUDA(cudaEventCreateWithFlags(&s.ev, cudaEventDisableTiming));
        }
        settle(s);
        return s;
    }
    /// Pending host writes that overlap [lo, hi) land before the host reads that range.
    void settle_overlap(const char* lo, const char* hi) {
        for (int i = 0; i < kSlots; ++i)  // oldest first: overlapping writes land in issue order
            if (Slot& s = out.slot[(out.next + i) % kSlots]; s.pending) {
                const char* a = s.p.dst;
                const char* b = a + s.p.ldd * static_cast<std::size_t>(s.p.cols - 1) + s.p.col_bytes;
                if (a < hi && lo < b) settle(s);
            }
    }
};

Stager::Stager() : impl_(std::make_unique<Impl>()) {}

Stager::~Stager() {
    try {
        drain();
    } catch (...) {
    }
    for (auto* r : {&impl_->in, &impl_->out})
        for (auto& s : r->slot) {
            if (s.ev) cudaEventDestroy(s.ev);
            if (s.host) give_slot(s.host);
        }
}

void Stager::to_device(const device::Copy2D& c, void* stream) {
    if (c.rows == 0 || c.cols == 0) return;
    auto st = static_cast<cudaStream_t>(stream);
    const std::size_t col = c.elem * static_cast<std::size_t>(c.rows);
    const std::size_t lds = c.elem * static_cast<std::size_t>(c.ld_src), ldd = c.elem * static_cast<std::size_t>(c.ld_dst);
    const char* src = static_cast<const char*>(c.src);
    char* dst = static_cast<char*>(c.dst);
    if (c.cols == 1 || (lds == col && ldd == col)) {  // contiguous: slot-sized pieces of the bytes
        const std::size_t total = col * static_cast<std::size_t>(c.cols);
        impl_->settle_overlap(src, src + total);
        for (std::size_t off = 0; off < total; off += kSlotBytes) {
            const std::size_t len = std::min(kSlotBytes, total - off);
            auto& s = impl_->acquire(impl_->in);
            copy_cols(static_cast<char*>(s.host), len, src + off, len, len, 1);
            CALA_CHECK_CUDA(cudaMemcpyAsync(dst + off, s.host, len, cudaMemcpyHostToDevice, st));
            CALA_CHECK_CUDA(cudaEventRecord(s.ev, st));
            s.recorded = true;
        }
        return;
    }
    if (col > kSlotBytes) {  // one column past a slot: the driver's pageable copy
        CALA_CHECK_CUDA(cudaMemcpy2DAsync(dst, ldd, src, lds, col, static_cast<std::size_t>(c.cols),
                                          cudaMemcpyHostToDevice, st));
        return;
    }
    impl_->settle_overlap(src, src + lds * static_cast<std::size_t>(c.cols - 1) + col);
    const index_t per = static_cast<index_t>(kSlotBytes / col);
    for (index_t j0 = 0; j0 < c.cols; j0 += per) {
        const index_t w = std::min(per, c.cols - j0);
        auto& s = impl_->acquire(impl_->in);
        copy_cols(static_cast<char*>(s.host), col, src + lds * static_cast<std::size_t>(j0), lds, col, w);
        CALA_CHECK_CUDA(cudaMemcpy2DAsync(dst + ldd * static_cast<std::size_t>(j0), ldd, s.host, col, col,
                                          static_cast<std::size_t>(w), cudaMemcpyHostToDevice, st));
        CALA_CHECK_CUDA(cudaEventRecord(s.ev, st));
        s.recorded = true;
    }
}

void Stager::to_host(const device::Copy2D& c, void* stream) {
    if (c.rows == 0 || c.cols == 0) return;
    auto st = static_cast<cudaStream_t>(stream);
    const std::size_t col = c.elem * static_cast<std::size_t>(c.rows);
    const std::size_t lds = c.elem * static_cast<std::size_t>(c.ld_src), ldd = c.elem * static_cast<std::size_t>(c.ld_dst);
    const char* src = static_cast<const char*>(c.src);
    char* dst = static_cast<char*>(c.dst);
    if (c.cols == 1 || (lds == col && ldd == col)) {  // contiguous: slot-sized pieces of the bytes
        const std::size_t total = col * static_cast<std::size_t>(c.cols);
        impl_->settle_overlap(dst, dst + total);
        for (std::size_t off = 0; off < total; off += kSlotBytes) {
            const std::size_t len = std::min(kSlotBytes, total - off);
            auto& s = impl_->acquire(impl_->out);
            CALA_CHECK_CUDA(cudaMemcpyAsync(s.host, src + off, len, cudaMemcpyDeviceToHost, st));
            CALA_CHECK_CUDA(cudaEventRecord(s.ev, st));
            s.recorded = true;
            s.pending = true;
            s.p = {dst + off, len, len, 1};
        }
        return;
    }
    if (col > kSlotBytes) {
        drain();  // earlier staged writes first, then the driver's pageable copy
        CALA_CHECK_CUDA(cudaMemcpy2DAsync(dst, ldd, src, lds, col, static_cast<std::size_t>(c.cols),
                                          cudaMemcpyDeviceToHost, st));
        return;
    }
    impl_->settle_overlap(dst, dst + ldd * static_cast<std::size_t>(c.cols - 1) + col);  // write order
    const index_t per = static_cast<index_t>(kSlotBytes / col);
    for (index_t j0 = 0; j0 < c.cols; j0 += per) {
        const index_t w = std::min(per, c.cols - j0);
        auto& s = impl_->acquire(impl_->out);
        CALA_CHECK_CUDA(cudaMemcpy2DAsync(s.host, col, src + lds * static_cast<std::size_t>(j0), lds, col,
                                          static_cast<std::size_t>(w), cudaMemcpyDeviceToHost, st));
        CALA_CHECK_CUDA(cudaEventRecord(s.ev, st));
        s.recorded = true;
        s.pending = true;
        s.p = {dst + ldd * static_cast<std::size_t>(j0), ldd, col, w};
    }
}

void Stager::drain() {
    // Oldest first, so that overlapping writes land in issue order; then the copies in (their
    // slots may go back to the pool after this).
    for (auto* r : {&impl_->out, &impl_->in})
        for (int i = 0; i < kSlots; ++i) impl_->settle(r->slot[(r->next + i) % kSlots]);
}

void Stager::poll() {
    auto& r = impl_->out;
    for (int i = 0; i < kSlots; ++i) {
        auto& s = r.slot[(r.next + i) % kSlots];
        if (!s.pending) continue;
        const cudaError_t rc = cudaEventQuery(s.ev);
        if (rc == cudaErrorNotReady) break;  // later ones are not done either (one stream order)
        CALA_CHECK_CUDA(rc);
        impl_->unpack(s);
    }
}

}  // namespace cala::cuda

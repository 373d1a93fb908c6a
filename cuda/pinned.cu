// Pinned host memory: a process-wide, reference-counted registry of cudaHostRegister ranges.

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "cuda_check.hpp"
#include "pinned.hpp"

namespace cala::cuda {

namespace {
struct Entry {
    int refs = 0;
    bool ours = false;    // registered here (unregistered at refs == 0)
    bool locked = false;  // page-locked, by us or before us
};
std::mutex& registry_mutex() {
    static std::mutex m;
    return m;
}
std::map<const void*, Entry>& registry() {
    static auto* r = new std::map<const void*, Entry>;  // never destroyed: used from late destructors
    return *r;
}
bool pinning_wanted() {
    const char* e = std::getenv("CALA_CUDA_PIN");
    return !(e && std::strcmp(e, "0") == 0);
}
}  // namespace

void* pinned_alloc(std::size_t bytes) {
    void* p = nullptr;
    CALA_CHECK_CUDA(cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocPortable));
    return p;
}

void pinned_free(void* p) noexcept {
    if (p) cudaFreeHost(p);
}

bool pin_range(const void* p, std::int64_t bytes) {
    std::lock_guard lock(registry_mutex());
    Entry& e = registry()[p];
    if (e.refs++ > 0) return e.locked;
    if (!p || bytes <= 0 || !pinning_wanted()) return false;
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, p) == cudaSuccess && attr.type == cudaMemoryTypeHost)
        return e.locked = true;
    (void)cudaGetLastError();
    const cudaError_t rc =
        cudaHostRegister(const_cast<void*>(p), static_cast<std::size_t>(bytes), cudaHostRegisterPortable);
    if (rc == cudaSuccess) return e.ours = e.locked = true;
    (void)cudaGetLastError();
    if (rc != cudaErrorHostMemoryAlreadyRegistered) {
        static bool warned = false;
        if (!warned)
            std::fprintf(stderr, "cala: cudaHostRegister of %lld bytes failed (%s); copies stay pageable\n",
                         static_cast<long long>(bytes), cudaGetErrorString(rc));
        warned = true;
    }
    return e.locked = rc == cudaErrorHostMemoryAlreadyRegistered;
}

void unpin_range(const void* p) noexcept {
    std::lock_guard lock(registry_mutex());
    auto it = registry().find(p);
    if (it == registry().end() || --it->second.refs > 0) return;
    if (it->second.ours) cudaHostUnregister(const_cast<void*>(p));
    registry().erase(it);
}

}  // namespace cala::cuda

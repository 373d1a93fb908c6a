#pragma once
// Buffer<T>: a counted, 64-byte aligned, uninitialized workspace array (see cala/memory.hpp).

#include <cstddef>
#include <cstdint>
#include <utility>

namespace cala::detail {

void* workspace_alloc(std::size_t bytes);
void workspace_free(void* p, std::size_t bytes) noexcept;
/// Counts memory cala holds that workspace_alloc did not give (a node-shared region) in
/// memory_stats: +bytes when it is taken, -bytes when it is given back.
void count_workspace(std::int64_t bytes) noexcept;

template <class T>
class Buffer {
public:
    Buffer() = default;
    explicit Buffer(std::int64_t n)
        : p_(n > 0 ? static_cast<T*>(workspace_alloc(sizeof(T) * static_cast<std::size_t>(n))) : nullptr),
          n_(n > 0 ? n : 0) {}
    Buffer(Buffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
    Buffer& operator=(Buffer&& o) noexcept {
        std::swap(p_, o.p_);
        std::swap(n_, o.n_);
        return *this;
    }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    ~Buffer() { workspace_free(p_, sizeof(T) * static_cast<std::size_t>(n_)); }

    T* data() const noexcept { return p_; }
    std::int64_t size() const noexcept { return n_; }
    T& operator[](std::int64_t i) const noexcept { return p_[i]; }

private:
    T* p_ = nullptr;
    std::int64_t n_ = 0;
};

}  // namespace cala::detail

#pragma once
// Internal: a resident or host matrix seen alike (grid, layout, memory), and the staged
// redistribution between any two of them that redistribute and the resident gemm share.

#include <algorithm>
#include <memory>
#include <string>

#include "cala/resident.hpp"
#include "core/workspace.hpp"
#include "device/device.hpp"
#include "gemm/plan.hpp"

namespace cala::detail {

/// One side of a redistribution: a local array on `dev` (nullptr: host memory).
template <class T>
struct Side {
    const Grid2D* grid;
    BlockCyclic layout;
    device::Device* dev;
    T* data;
    index_t ld;
    index_t m_loc() const noexcept { return layout.rows.local_size(grid->row()); }
    index_t n_loc() const noexcept { return layout.cols.local_size(grid->col()); }
};

template <class T>
Side<T> side_of(const ResidentMatrix<T>& a) {
    return {&a.grid(), a.layout(), a.device().get(), a.data(), a.ld()};
}
template <class T>
Side<T> side_of(const MatrixRef<T>& a) {
    return {&a.grid(), a.layout(), nullptr, a.data(), a.ld()};
}

/// A 2D copy of rows x cols elements of T.
template <class T>
device::Copy2D copy2d(T* dst, index_t ld_dst, const T* src, index_t ld_src, index_t rows, index_t cols) {
    return {dst, ld_dst, src, ld_src, rows, cols, sizeof(T)};
}

/// Device memory (n elements of T on d), released at scope exit.
template <class T>
class DeviceArray {
public:
    DeviceArray(device::Device& d, index_t n) : d_(&d), bytes_(n * static_cast<std::int64_t>(sizeof(T))) {
        if (n > 0) p_ = static_cast<T*>(d.allocate(bytes_));
    }
    ~DeviceArray() {
        if (p_) d_->release(p_, bytes_);
    }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
    T* data() const noexcept { return p_; }

private:
    device::Device* d_;
    std::int64_t bytes_;
    T* p_ = nullptr;
};

/// A local array (rows x cols, leading dimension ld) of device memory copied into host memory
/// (the device's earlier operations complete first).
template <class T>
Buffer<T> to_host(device::Device& dev, const T* data, index_t ld, index_t rows, index_t cols) {
    Buffer<T> h(rows * cols);
    if (rows > 0 && cols > 0) {
        dev.copy_to_host(copy2d(h.data(), rows, data, ld, rows, cols));
        dev.synchronize();
    }
    return h;
}

/// rows x cols of host memory (leading dimension rows) into a device local array; complete on return.
template <class T>
void to_device(device::Device& dev, T* data, index_t ld, const T* host, index_t rows, index_t cols) {
    if (rows == 0 || cols == 0) return;
    dev.copy_to_device(copy2d(data, ld, host, std::max<index_t>(rows, 1), rows, cols));
    dev.synchronize();
}

/// Empty when src and dst can be redistributed (op(src) has dst's shape, layouts fit their
/// grids, the grids' communicators are congruent), else a message naming the argument.
template <class T>
std::string check_resident_redistribute(const char* fn, Op op, const Side<T>& src, const Side<T>& dst);

/// dst := op(src) through host memory: a device side is copied to a host buffer first (src) or
/// after (dst); the move itself is redistribute_placed over dst's communicator. Collective;
/// arguments already checked on every rank.
template <class T>
void redistribute_staged(Op op, const Side<T>& src, const Side<T>& dst);

/// The operand a resident product reads: `user` itself where the plan leaves it in place,
/// else a device array in the plan's layout (held by `store`) that op(user) is redistributed
/// into (staged). Collective over user's grid.
template <class T>
Side<T> materialize_operand(const Operand& x, const Side<T>& user, device::Device& dev,
                            std::unique_ptr<DeviceArray<T>>& store) {
    if (!x.moves) return user;
    const Grid2D& grid = *user.grid;
    const index_t m_loc = x.layout.rows.local_size(grid.row()), n_loc = x.layout.cols.local_size(grid.col());
    store = std::make_unique<DeviceArray<T>>(dev, m_loc * n_loc);
    const Side<T> dst{&grid, x.layout, &dev, store->data(), std::max<index_t>(m_loc, 1)};
    redistribute_staged(x.redist_op, user, dst);
    return dst;
}

}  // namespace cala::detail

#include <cstdlib>
#include <cstring>
#include <new>

#include "cala/matrix.hpp"
#include "core/check.hpp"

namespace cala {

template <class T>
MatrixRef<T>::MatrixRef(Grid2D grid, BlockCyclic layout, T* data, index_t ld)
    : grid_(std::move(grid)), layout_(layout), data_(data), ld_(ld) {}

template <class T>
MatrixRef<T> MatrixRef<T>::sub(index_t i, index_t j, index_t m, index_t n) const {
    const BlockCyclic s = layout_.sub(i, j, m, n);  // throws when out of range
    const index_t li = layout_.rows.local_before(i, grid_.row());
    const index_t lj = layout_.cols.local_before(j, grid_.col());
    T* p = data_ == nullptr ? nullptr : data_ + li + lj * ld_;
    return MatrixRef<T>(grid_, s, p, ld_);
}

template <class T>
void DistMatrix<T>::Free::operator()(T* p) const noexcept { std::free(p); }

namespace {
template <class T>
T* allocate_local(index_t count) {
    if (count == 0) return nullptr;
    const std::size_t bytes = (sizeof(T) * static_cast<std::size_t>(count) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, bytes);
    if (p == nullptr) throw std::bad_alloc();
    std::memset(p, 0, bytes);
    return static_cast<T*>(p);
}
}  // namespace

template <class T>
DistMatrix<T>::DistMatrix(const Grid2D& grid, index_t m, index_t n, index_t mb, index_t nb, int rsrc, int csrc)
    : DistMatrix(grid, BlockCyclic(m, n, mb, nb, grid.p(), grid.q(), rsrc, csrc)) {}

template <class T>
DistMatrix<T>::DistMatrix(const Grid2D& grid, const BlockCyclic& layout)
    : store_(nullptr),
      ref_(grid, layout, nullptr, 1) {
    using detail::cat;
    if (layout.p() != grid.p() || layout.q() != grid.q())
        throw Error(cat("DistMatrix: layout is for a ", layout.p(), " x ", layout.q(), " grid, the grid is ",
                        grid.p(), " x ", grid.q()));
    const index_t m_loc = layout.rows.local_size(grid.row());
    const index_t n_loc = layout.cols.local_size(grid.col());
    const index_t ld = m_loc > 1 ? m_loc : 1;
    store_.reset(allocate_local<T>(m_loc * n_loc));
    ref_ = MatrixRef<T>(grid, layout, store_.get(), ld);
}

#define CALA_INST(T) template class MatrixRef<T>; template class DistMatrix<T>;
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala

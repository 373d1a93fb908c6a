#pragma once
// DistMatrix<T> (owns its local block-cyclic storage) and MatrixRef<T> (a view of one).
//
// Local storage is ScaLAPACK's: the rank's local rows x local columns, column-major, with a
// leading dimension ld >= max(1, local rows). A MatrixRef of a submatrix A(i:i+m, j:j+n) points
// at the first local element of the submatrix and carries the submatrix's own layout, so
// algorithms see no offsets.

#include <cstddef>
#include <memory>
#include <vector>

#include "cala/grid.hpp"
#include "cala/layout.hpp"

namespace cala {

/// A view of a distributed matrix: shallow (copying it does not copy data).
template <class T>
class MatrixRef {
public:
    /// Wraps local storage `data` (ld >= local rows) laid out by `layout` on `grid`.
    /// The layout's p x q must match the grid's (checked by the algorithms, collectively).
    MatrixRef(Grid2D grid, BlockCyclic layout, T* data, index_t ld);

    const Grid2D& grid() const noexcept { return grid_; }
    const BlockCyclic& layout() const noexcept { return layout_; }
    index_t m() const noexcept { return layout_.m(); }
    index_t n() const noexcept { return layout_.n(); }
    index_t m_loc() const noexcept { return layout_.rows.local_size(grid_.row()); }
    index_t n_loc() const noexcept { return layout_.cols.local_size(grid_.col()); }
    T* data() const noexcept { return data_; }
    index_t ld() const noexcept { return ld_; }
    T& local(index_t i_loc, index_t j_loc) const noexcept { return data_[i_loc + j_loc * ld_]; }

    /// View of the submatrix rows [i, i+m), columns [j, j+n). Throws cala::Error if out of range.
    MatrixRef sub(index_t i, index_t j, index_t m, index_t n) const;

private:
    Grid2D grid_;
    BlockCyclic layout_;
    T* data_;
    index_t ld_;
};

/// A distributed matrix owning its local storage (64-byte aligned, zero-initialized).
template <class T>
class DistMatrix {
public:
    /// m x n in mb x nb blocks on `grid`, block (0, 0) on process (rsrc, csrc). Local, no
    /// communication; throws cala::Error on bad sizes.
    DistMatrix(const Grid2D& grid, index_t m, index_t n, index_t mb, index_t nb, int rsrc = 0,
               int csrc = 0);
    DistMatrix(const Grid2D& grid, const BlockCyclic& layout);

    MatrixRef<T> view() const noexcept { return ref_; }
    operator MatrixRef<T>() const noexcept { return ref_; }
    MatrixRef<T> sub(index_t i, index_t j, index_t m, index_t n) const { return ref_.sub(i, j, m, n); }

    const Grid2D& grid() const noexcept { return ref_.grid(); }
    const BlockCyclic& layout() const noexcept { return ref_.layout(); }
    index_t m() const noexcept { return ref_.m(); }
    index_t n() const noexcept { return ref_.n(); }
    index_t m_loc() const noexcept { return ref_.m_loc(); }
    index_t n_loc() const noexcept { return ref_.n_loc(); }
    T* data() const noexcept { return ref_.data(); }
    index_t ld() const noexcept { return ref_.ld(); }
    T& local(index_t i_loc, index_t j_loc) const noexcept { return ref_.local(i_loc, j_loc); }

private:
    struct Free { void operator()(T* p) const noexcept; };
    std::unique_ptr<T, Free> store_;
    MatrixRef<T> ref_;
};

/// Collective over the grid: dst := op(src). Any block-cyclic layout to any other on the same
/// grid (the pdgemr2d of cala, with transposition). Traffic is counted as isend/irecv.
template <class T>
void redistribute(Op op, const MatrixRef<T>& src, const MatrixRef<T>& dst);

/// Collective over the grid: the whole matrix, column-major m x n with ld = max(1, m), on `root`
/// (a rank of grid.comm()); an empty vector elsewhere.
template <class T>
std::vector<T> gather(const MatrixRef<T>& a, int root = 0);

/// Collective over the grid: a := global (m x n column-major, leading dimension ldg) held on root.
template <class T>
void scatter(const T* global, index_t ldg, const MatrixRef<T>& a, int root = 0);

}  // namespace cala

#pragma once
// TiledMatrix<T>: a distributed matrix whose tiles are placed by a table rather than
// block-cyclically -- the lower half of a symmetric matrix on SBC or TBC, and the B and C
// operands paired with it -- and redistribute between it and block-cyclic matrices.
//
// A TileLayout cuts an m x n matrix into row blocks of mb and column blocks of nb (the last
// ones partial) and puts tile (i, j) on one rank of the grid's communicator, or on none (a tile
// that is not stored, e.g. above the diagonal). A rank stores its tiles one after the other in
// column-major tile order, each tile column-major with leading dimension = its row count.
//
//   lower(SBC r=4, n = 10, nb = 3):   tiles 4 x 4, (i, j) on sym.owner(i, j) for i >= j
//   paired(SBC r=4, Left, n = 5, nb = 2): 10 x 5 in 3 x 2 tiles, tile (i, j) on
//       row_set(i mod 4)[j mod 4]: B's block row i lives on the ranks that hold A's block
//       row and column i, spread over them by column blocks.

#include <algorithm>
#include <memory>
#include <vector>

#include "cala/layout.hpp"
#include "cala/matrix.hpp"
#include "cala/model.hpp"

namespace cala {

/// Where the tiles of an m x n matrix live (pure arithmetic, no MPI). Cheap to copy.
class TileLayout {
public:
    /// What a layout was made for.
    enum class Role { Lower, Left, Right };

    TileLayout() = default;
    /// The lower half of a symmetric matrix on `sym` (tiles (i, j), i >= j).
    static TileLayout lower(const SymmetricLayout& sym);
    /// An operand of SYMM/SYRK paired with `sym`: Left: sym.n() x n, tile (i, j) on
    /// sym.row_set(i mod T)[j mod |set|]; Right: n x sym.n(), tile (j, i) on that same rank.
    /// `nb` is the block size along n. Throws cala::Error on n < 0 or nb < 1.
    static TileLayout paired(const SymmetricLayout& sym, Side side, index_t n, index_t nb);

    index_t m() const noexcept { return m_; }
    index_t n() const noexcept { return n_; }
    index_t mb() const noexcept { return mb_; }
    index_t nb() const noexcept { return nb_; }
    int nprocs() const noexcept { return sym_ ? sym_->nprocs() : 1; }
    index_t row_blocks() const noexcept { return ceil_div(m_, mb_); }
    index_t col_blocks() const noexcept { return ceil_div(n_, nb_); }
    index_t tile_rows(index_t i) const noexcept { return std::min(mb_, m_ - i * mb_); }
    index_t tile_cols(index_t j) const noexcept { return std::min(nb_, n_ - j * nb_); }
    /// Rank holding tile (i, j), or -1 if the tile is not stored.
    int owner(index_t i, index_t j) const noexcept;
    /// Elements `rank` stores.
    index_t local_elements(int rank) const noexcept;
    /// The symmetric layout this one was made from, and for what.
    const SymmetricLayout& symmetric() const noexcept { return *sym_; }
    Role role() const noexcept { return role_; }

    /// Same shape, role and symmetric layout.
    friend bool operator==(const TileLayout& a, const TileLayout& b) {
        return a.m_ == b.m_ && a.n_ == b.n_ && a.mb_ == b.mb_ && a.nb_ == b.nb_ && a.role_ == b.role_ &&
               (a.sym_ == b.sym_ || (a.sym_ && b.sym_ && *a.sym_ == *b.sym_));
    }

private:
    index_t m_ = 0, n_ = 0, mb_ = 1, nb_ = 1;
    Role role_ = Role::Lower;
    std::shared_ptr<const SymmetricLayout> sym_;
    std::shared_ptr<const std::vector<index_t>> elems_;  ///< per rank
};

/// A matrix on a TileLayout over the ranks of a grid's communicator (the grid's shape plays no
/// part). Owns this rank's tiles, zero-initialized. Local, no communication.
template <class T>
class TiledMatrix {
public:
    /// Throws cala::Error if the layout is for another rank count than grid.comm().size().
    TiledMatrix(const Grid2D& grid, const TileLayout& layout);

    const Grid2D& grid() const noexcept { return grid_; }
    const TileLayout& layout() const noexcept { return layout_; }
    index_t m() const noexcept { return layout_.m(); }
    index_t n() const noexcept { return layout_.n(); }
    /// Tile (i, j) on its owner (leading dimension layout().tile_rows(i)); nullptr elsewhere.
    T* tile(index_t i, index_t j) const noexcept;
    /// Elements stored on this rank.
    index_t local_elements() const noexcept { return size_; }

private:
    struct Free { void operator()(T* p) const noexcept; };
    Grid2D grid_;
    TileLayout layout_;
    std::shared_ptr<std::vector<index_t>> offset_;  ///< per tile (column-major), -1: not here
    std::unique_ptr<T, Free> store_;
    index_t size_ = 0;
};

/// Collective over the grid: copies every element stored in both src and dst; elements of dst
/// that src does not store are left as they are (a 2DBC matrix into a lower layout keeps the
/// lower tiles; back, only those tiles are written). Same communicator on both sides (else
/// cala::Error on every rank). Traffic is counted as isend/irecv, one message per pair of ranks.
template <class T>
void redistribute(const MatrixRef<T>& src, const TiledMatrix<T>& dst);
template <class T>
void redistribute(const TiledMatrix<T>& src, const MatrixRef<T>& dst);
template <class T>
void redistribute(const TiledMatrix<T>& src, const TiledMatrix<T>& dst);

/// Exact words and messages communicator rank `rank` moves in the redistribute above (a
/// block-cyclic side is on a grid of the given order).
Cost redistribute_cost(const BlockCyclic& src, GridOrder order, const TileLayout& dst, int rank);
Cost redistribute_cost(const TileLayout& src, const BlockCyclic& dst, GridOrder order, int rank);
Cost redistribute_cost(const TileLayout& src, const TileLayout& dst, int rank);

}  // namespace cala

// TileLayout (lower half of a symmetric layout, operands paired with it) and TiledMatrix.

#include <cstdlib>
#include <cstring>
#include <new>

#include "cala/tiled_matrix.hpp"
#include "core/check.hpp"

namespace cala {

TileLayout TileLayout::lower(const SymmetricLayout& sym) {
    TileLayout t;
    t.m_ = t.n_ = sym.n();
    t.mb_ = t.nb_ = sym.nb();
    t.role_ = Role::Lower;
    t.sym_ = std::make_shared<const SymmetricLayout>(sym);
    auto e = std::make_shared<std::vector<index_t>>(static_cast<std::size_t>(sym.nprocs()));
    for (int r = 0; r < sym.nprocs(); ++r) (*e)[static_cast<std::size_t>(r)] = sym.local_elements(r);
    t.elems_ = std::move(e);
    return t;
}

TileLayout TileLayout::paired(const SymmetricLayout& sym, Side side, index_t n, index_t nb) {
    using detail::cat;
    if (n < 0) throw Error(cat("TileLayout::paired: n is ", n, ", must be >= 0"));
    if (nb < 1) throw Error(cat("TileLayout::paired: nb is ", nb, ", must be >= 1"));
    TileLayout t;
    t.role_ = side == Side::Left ? Role::Left : Role::Right;
    t.m_ = side == Side::Left ? sym.n() : n;
    t.n_ = side == Side::Left ? n : sym.n();
    t.mb_ = side == Side::Left ? sym.nb() : nb;
    t.nb_ = side == Side::Left ? nb : sym.nb();
    t.sym_ = std::make_shared<const SymmetricLayout>(sym);
    auto e = std::make_shared<std::vector<index_t>>(static_cast<std::size_t>(sym.nprocs()), 0);
    for (index_t j = 0; j < t.col_blocks(); ++j)
        for (index_t i = 0; i < t.row_blocks(); ++i)
            (*e)[static_cast<std::size_t>(t.owner(i, j))] += t.tile_rows(i) * t.tile_cols(j);
    t.elems_ = std::move(e);
    return t;
}

int TileLayout::owner(index_t i, index_t j) const noexcept {
    if (!sym_) return 0;
    if (role_ == Role::Lower) return i >= j ? sym_->owner(i, j) : -1;
    // b: the symmetric matrix's block index; x: the block index along n. The block row b goes to
    // its row set, column blocks dealt round it, starting one further at each pattern repetition.
    const index_t b = role_ == Role::Left ? i : j, x = role_ == Role::Left ? j : i;
    const auto& set = sym_->row_set(sym_->row_of(b));
    const auto k = static_cast<index_t>(set.size());
    return set[static_cast<std::size_t>((x + b / sym_->pattern_size()) % k)];
}

index_t TileLayout::local_elements(int rank) const noexcept {
    if (!elems_) return rank == 0 ? m_ * n_ : 0;
    return rank >= 0 && rank < nprocs() ? (*elems_)[static_cast<std::size_t>(rank)] : 0;
}

template <class T>
void TiledMatrix<T>::Free::operator()(T* p) const noexcept { std::free(p); }

template <class T>
TiledMatrix<T>::TiledMatrix(const Grid2D& grid, const TileLayout& layout)
    : grid_(grid), layout_(layout), offset_(std::make_shared<std::vector<index_t>>()) {
    using detail::cat;
    if (layout.nprocs() != grid.comm().size())
        throw Error(cat("TiledMatrix: the layout is for ", layout.nprocs(), " ranks, the grid has ",
                        grid.comm().size()));
    const int me = grid.comm().rank();
    const index_t R = layout.row_blocks(), C = layout.col_blocks();
    offset_->assign(static_cast<std::size_t>(R * C), -1);
    for (index_t j = 0; j < C; ++j)
        for (index_t i = 0; i < R; ++i)
            if (layout.owner(i, j) == me) {
                (*offset_)[static_cast<std::size_t>(i + j * R)] = size_;
                size_ += layout.tile_rows(i) * layout.tile_cols(j);
            }
    if (size_ > 0) {
        const std::size_t bytes = (sizeof(T) * static_cast<std::size_t>(size_) + 63) / 64 * 64;
        void* p = std::aligned_alloc(64, bytes);
        if (p == nullptr) throw std::bad_alloc();
        std::memset(p, 0, bytes);
        store_.reset(static_cast<T*>(p));
    }
}

template <class T>
T* TiledMatrix<T>::tile(index_t i, index_t j) const noexcept {
    const index_t R = layout_.row_blocks();
    if (i < 0 || j < 0 || i >= R || j >= layout_.col_blocks()) return nullptr;
    const index_t off = (*offset_)[static_cast<std::size_t>(i + j * R)];
    return off < 0 ? nullptr : store_.get() + off;
}

#define CALA_INST(T) template class TiledMatrix<T>;
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala

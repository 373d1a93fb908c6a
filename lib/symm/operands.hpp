#pragma once
// The operands of symm/hemm (2DBC MatrixRef or SBC/TBC TiledMatrix) as the engine sees them:
// argument checks (a message naming the argument, "" when fine), the agreed fingerprint, tile
// accessors, and the engine's geometry. Shared by the 2D entry points (symm.cpp) and the s-slice
// 3D ones (symm3d.cpp).

#include <string>
#include <utility>

#include "cala/symm.hpp"
#include "core/check.hpp"
#include "matrix/redistribute_impl.hpp"
#include "matrix/tiled_plan.hpp"
#include "symm/engine.hpp"

namespace cala::detail {

inline bool same_comm(const Comm& a, const Comm& b) {
    int result = MPI_UNEQUAL;
    CALA_CHECK_MPI(MPI_Comm_compare(a.get(), b.get(), &result));
    return result == MPI_IDENT || result == MPI_CONGRUENT;
}

template <class T>
std::uint64_t symm_scalars_fp(const char* fn, Side side, Uplo uplo, T alpha, T beta) {
    std::uint64_t h = fingerprint(1469598103934665603ull, fn, std::char_traits<char>::length(fn));
    const int v[2] = {static_cast<int>(side), static_cast<int>(uplo)};
    h = fingerprint(h, v, sizeof v);
    h = fingerprint(h, &alpha, sizeof alpha);
    return fingerprint(h, &beta, sizeof beta);
}

/// Tile (i, j) of a block-cyclic operand on its owner.
template <class T>
TileAt<T> tiles_of(const MatrixRef<T>& x) {
    return [x](index_t i, index_t j) {
        const BlockCyclic& l = x.layout();
        return std::pair<T*, index_t>{
            x.data() + l.rows.to_local(l.rows.block_start(i)) + l.cols.to_local(l.cols.block_start(j)) * x.ld(), x.ld()};
    };
}

/// Tile (i, j) of a tiled operand on its owner; swap: tile (j, i).
template <class T>
TileAt<T> tiles_of(const TiledMatrix<T>& x, bool swap = false) {
    return [&x, swap](index_t i, index_t j) {
        if (swap) std::swap(i, j);
        return std::pair<T*, index_t>{x.tile(i, j), x.layout().tile_rows(i)};
    };
}

template <class T>
std::string symm_check(const char* fn, Side side, Uplo, const MatrixRef<T>& a, const MatrixRef<T>& b,
                       const MatrixRef<T>& c) {
    std::string e = check_same_grid(fn, "A", a.grid(), a.layout(), c.grid());
    if (e.empty()) e = check_same_grid(fn, "B", b.grid(), b.layout(), c.grid());
    if (e.empty()) e = check_same_grid(fn, "C", c.grid(), c.layout(), c.grid());
    if (!e.empty()) return e;
    const BlockCyclic &al = a.layout(), &bl = b.layout(), &cl = c.layout();
    if (a.m() != a.n()) return cat(fn, ": A is ", a.m(), " x ", a.n(), ", must be square");
    if (al.rows.nb != al.cols.nb || al.rows.ib != al.cols.ib)
        return cat(fn, ": A's tiles are not square (row blocks ", al.rows.nb, " first ", al.rows.ib, ", column blocks ",
                   al.cols.nb, " first ", al.cols.ib, ")");
    const index_t bm = side == Side::Left ? b.m() : b.n();
    if (bm != a.m())
        return cat(fn, ": B is ", b.m(), " x ", b.n(), ", its ", side == Side::Left ? "rows" : "columns", " must match A's ",
                   a.m());
    if (!(cl == bl)) return cat(fn, ": C's layout differs from B's (", c.m(), " x ", c.n(), " vs ", b.m(), " x ", b.n(), ")");
    const Dist1D& bd = side == Side::Left ? bl.rows : bl.cols;
    const Dist1D& ad = side == Side::Left ? al.rows : al.cols;
    if (!(bd == ad))
        return cat(fn, ": B's ", side == Side::Left ? "rows" : "columns", " are not distributed like A's (block ", bd.nb,
                   " from process ", bd.src, " vs ", ad.nb, " from ", ad.src, "); redistribute B and C first");
    for (const auto& [name, x] : {std::pair{"A", &a}, std::pair{"B", &b}, std::pair{"C", &c}})
        if (e = check_local(fn, name, *x); !e.empty()) return e;
    return {};
}

template <class T>
std::string symm_check(const char* fn, Side side, Uplo uplo, const TiledMatrix<T>& a, const TiledMatrix<T>& b,
                       const TiledMatrix<T>& c) {
    const auto role = side == Side::Left ? TileLayout::Role::Left : TileLayout::Role::Right;
    if (!same_comm(a.grid().comm(), c.grid().comm()) || !same_comm(b.grid().comm(), c.grid().comm()))
        return cat(fn, ": A, B and C live on different communicators");
    if (a.layout().role() != TileLayout::Role::Lower)
        return cat(fn, ": A's layout is not the lower half of a symmetric layout (TileLayout::lower)");
    if (uplo == Uplo::Upper)
        return cat(fn, ": uplo is Upper but A's layout (", a.layout().symmetric().describe(),
                   ") stores the lower half only");
    if (b.layout().role() != role || !(b.layout().symmetric() == a.layout().symmetric()))
        return cat(fn, ": B's layout is not TileLayout::paired(A's layout, ", side == Side::Left ? "Left" : "Right",
                   ", n, nb)");
    if (!(c.layout() == b.layout()))
        return cat(fn, ": C's layout differs from B's (", c.m(), " x ", c.n(), " vs ", b.m(), " x ", b.n(), ")");
    return {};
}

/// The engine's view of checked operands: geometry and tile accessors (Right: B and C addressed
/// by (A block, n block)).
template <class T>
struct SymmOperands {
    SymmGeometry g;
    TileAt<T> a, b, c;
};

template <class T>
SymmOperands<T> symm_operands(Side side, Uplo uplo, const MatrixRef<T>& a, const MatrixRef<T>& b,
                              const MatrixRef<T>& c) {
    SymmOperands<T> o{geometry_2dbc(side, uplo == Uplo::Lower, a.layout(), b.layout(), c.grid().order()),
                      tiles_of(a), tiles_of(b), tiles_of(c)};
    if (side == Side::Right) {
        o.b = [f = o.b](index_t l, index_t x) { return f(x, l); };
        o.c = [f = o.c](index_t l, index_t x) { return f(x, l); };
    }
    return o;
}

template <class T>
SymmOperands<T> symm_operands(Side side, Uplo, const TiledMatrix<T>& a, const TiledMatrix<T>& b,
                              const TiledMatrix<T>& c) {
    return {geometry_tiled(side, a.layout(), b.layout()), tiles_of(a), tiles_of(b, side == Side::Right),
            tiles_of(c, side == Side::Right)};
}

}  // namespace cala::detail

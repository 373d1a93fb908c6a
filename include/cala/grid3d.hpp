#pragma once
// cala::Grid3D: c layers of p x q process grids, with fiber communicators across layers.

#include <memory>
#include <optional>

#include "cala/grid.hpp"

namespace cala {

/// p x q x c grid over the first p·q·c ranks of a duplicate of `comm`; further ranks are idle
/// (they hold no layer and take part only in moving data from and to the user's layout).
///
///   2 x 2 x 2 over 8 ranks: layer h = rank / 4, (row, col) row-major in the layer
///     layer 0: 0 1    layer 1: 4 5     fiber (0, 1, :) = ranks {1, 5}
///              2 3             6 7     layer_grid() of rank 6 = ranks {4, 5, 6, 7}
class Grid3D {
public:
    /// Collective over `comm`. Throws cala::Error on every rank if p, q, c < 1 or p·q·c > size.
    Grid3D(const Comm& comm, int p, int q, int c);

    int p() const noexcept;
    int q() const noexcept;
    int c() const noexcept;
    bool active() const noexcept;  ///< false on idle ranks
    int layer() const noexcept;    ///< this rank's layer, -1 if idle
    int row() const noexcept;
    int col() const noexcept;
    const Comm& comm() const noexcept;         ///< all ranks, idle ones included
    const Grid2D& layer_grid() const;          ///< this rank's layer (active ranks only)
    const Comm& fiber_comm() const;            ///< the c ranks (h, row, col) of this (row, col); rank == layer
    int rank_of(int h, int r, int c) const noexcept { return (h * p() + r) * q() + c; }

private:
    struct State;
    std::shared_ptr<const State> s_;
};

}  // namespace cala

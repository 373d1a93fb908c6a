#pragma once
// The tile geometry of a Cholesky factorization on p x q x h ranks, shared by the engine
// (lib/cholesky/engine.cpp, panel.cpp) and the cost model (lib/cholesky/model.cpp), so that
// the two walk the same schedule. Pure arithmetic, no MPI.
//
// Tiles are the square blocks of the working layout: tile i covers rows and columns
// [start(i), start(i) + size(i)). Tile (i, j) lives at process row ro(i), column co(j) of every
// layer (each layer holds a full p x q share: on its home layer the matrix, on the others the
// partial sums of the updates that layer ran). Block row i's home layer, which also solves the
// panel tiles of that row, is t(i) = (i mod h·p) div p.
//
// Step l (thesis Alg. 12/21/22):
//   A  [h > 1] all-reduce of tile (l, l) across the fiber at (ro(l), co(l))
//   B  potrf of tile (l, l) on every layer (replicated)
//   C  broadcast of L(l, l) down column co(l) in each layer that solves a panel tile
//   D  [h > 1] reduce of the panel tiles of row r with home layer t to layer t (one message)
//   E  trsm of the panel tiles on their home layers
//   F  [h > 1] the solved tiles (Repl) or their column slices (ReplPart) to the update layers
//   G  in each update layer: the panel rows of process row r broadcast along the row (one
//      message), the tiles of columns c whose rows are r' broadcast down column c from r'
//   H  trailing update (herk on diagonal tiles, gemm below) in the update layers

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cala/cholesky.hpp"
#include "cala/layout.hpp"

namespace cala::detail {

struct CholGeom {
    Dist1D rows, cols;  ///< the working layout: same n, nb, ib; p and q ranks
    int h = 1;
    bool part = false;  ///< ReplPart: every panel split into h column slices
    int delay = 1;      ///< 2D: panels per group of delayed trailing updates (groups start at multiples)

    index_t mt() const noexcept { return rows.num_blocks(); }
    index_t start(index_t i) const noexcept { return rows.block_start(i); }
    index_t size(index_t i) const noexcept { return rows.block_size(i); }
    int p() const noexcept { return rows.nprocs; }
    int q() const noexcept { return cols.nprocs; }
    int ro(index_t i) const noexcept { return rows.block_owner(i); }
    int co(index_t j) const noexcept { return cols.block_owner(j); }
    /// Home layer of block row i (where its tiles live in the layered layout and are solved).
    int home(index_t i) const noexcept { return h == 1 ? 0 : static_cast<int>((i % (index_t(h) * p())) / p()); }
    /// The first and last panel of step l's group of delayed updates.
    index_t group_first(index_t l) const noexcept { return l - l % delay; }
    index_t group_last(index_t l) const noexcept { return std::min<index_t>(mt() - 1, group_first(l) + delay - 1); }
    /// Layer that runs the trailing update of step l (Repl).
    int update_layer(index_t l) const noexcept { return static_cast<int>(l % h); }
    /// Columns [first, second) of tile column l that layer s updates with (whole tile for Repl).
    std::pair<index_t, index_t> slice(index_t l, int s) const noexcept {
        const index_t b = size(l);
        if (!part) return update_layer(l) == s ? std::pair<index_t, index_t>{0, b} : std::pair<index_t, index_t>{0, 0};
        const index_t w = b / h, extra = b % h;
        const index_t s0 = s * w + std::min<index_t>(s, extra);
        return {s0, s0 + w + (s < extra ? 1 : 0)};
    }
    /// Panel tiles of step l in process row r whose home layer is t (t < 0: any layer).
    std::vector<index_t> panel_rows(index_t l, int r, int t) const {
        std::vector<index_t> out;
        for (index_t i = l + 1; i < mt(); ++i)
            if (ro(i) == r && (t < 0 || home(i) == t)) out.push_back(i);
        return out;
    }
    /// Rows (elements) of a set of tiles.
    index_t rows_of(const std::vector<index_t>& tiles) const noexcept {
        index_t s = 0;
        for (index_t i : tiles) s += size(i);
        return s;
    }
    /// Whether layer t solves any panel tile of step l (and so needs L(l, l)).
    bool layer_solves(index_t l, int t) const noexcept {
        for (index_t i = l + 1; i < mt(); ++i)
            if (home(i) == t) return true;
        return false;
    }
    /// Tiles j > l of column c whose rows are r': what (r', c) broadcasts down column c in step G.
    std::vector<index_t> column_tiles(index_t l, int rprime, int c) const {
        std::vector<index_t> out;
        for (index_t j = l + 1; j < mt(); ++j)
            if (ro(j) == rprime && co(j) == c) out.push_back(j);
        return out;
    }
};

}  // namespace cala::detail

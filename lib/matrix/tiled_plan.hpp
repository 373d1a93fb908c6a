#pragma once
// Redistribution between any two tiled placements (block-cyclic or table-placed): who sends
// which rectangles to whom. Pure arithmetic, shared by redistribute and its cost model.
//
// Each dimension is cut where either side starts a block; every rectangle of the two cuts lies
// in one source tile and one destination tile, so it has one source rank and one destination
// rank (or none, where a side does not store it). Rectangles travel in one order both sides
// know: column pieces ascending, then row pieces ascending, each rectangle column-major.

#include <cstdint>
#include <functional>
#include <vector>

#include "cala/tiled_matrix.hpp"

namespace cala::detail {

/// A placement: block cuts of rows and columns (n, nb, ib of a Dist1D; its owners unused) and
/// the communicator rank holding tile (i, j), or -1 where the tile is not stored.
struct TileMap {
    Dist1D rows, cols;
    std::function<int(index_t, index_t)> owner;
};
TileMap tile_map(const BlockCyclic& l, GridOrder order);
TileMap tile_map(const TileLayout& l);

/// A piece [g0, g1) of one dimension inside source block sb and destination block db.
struct Piece {
    index_t g0, g1, sb, db;
};
std::vector<Piece> pieces(const Dist1D& s, const Dist1D& d);

/// Calls f(row piece, column piece, source rank, destination rank) for every rectangle both
/// sides store, in the order of the wire.
template <class F>
void for_each_rect(const TileMap& src, const TileMap& dst, const std::vector<Piece>& rp, const std::vector<Piece>& cp,
                   F&& f) {
    for (const auto& c : cp)
        for (const auto& r : rp) {
            const int s = src.owner(r.sb, c.sb);
            if (s < 0) continue;
            const int d = dst.owner(r.db, c.db);
            if (d >= 0) f(r, c, s, d);
        }
}

/// Elements `rank` sends to and receives from each rank (its own share included).
struct TiledCounts {
    std::vector<std::int64_t> send, recv;
};
TiledCounts tiled_counts(const TileMap& src, const TileMap& dst, int rank, int nranks);
/// The Traffic convention of cala/comm.hpp for those counts.
Cost tiled_cost(const TiledCounts& c, int rank);

/// FNV-1a fingerprint of a tile layout (shape, role, pattern), for argument agreement.
std::uint64_t fingerprint(std::uint64_t h, const TileLayout& l);

}  // namespace cala::detail

#include "matrix/tiled_plan.hpp"

#include <algorithm>

namespace cala::detail {

TileMap tile_map(const BlockCyclic& l, GridOrder order) {
    const int p = l.p(), q = l.q();
    return {l.rows, l.cols, [l, order, p, q](index_t i, index_t j) {
                const int r = l.rows.block_owner(i), c = l.cols.block_owner(j);
                return order == GridOrder::RowMajor ? r * q + c : c * p + r;
            }};
}

TileMap tile_map(const TileLayout& l) {
    return {Dist1D(l.m(), l.mb(), 1), Dist1D(l.n(), l.nb(), 1), [l](index_t i, index_t j) { return l.owner(i, j); }};
}

std::vector<Piece> pieces(const Dist1D& s, const Dist1D& d) {
    std::vector<Piece> out;
    index_t g = 0;
    while (g < s.n) {
        const index_t bs = s.block_of(g), bd = d.block_of(g);
        const index_t end = std::min(s.block_start(bs) + s.block_size(bs), d.block_start(bd) + d.block_size(bd));
        out.push_back({g, end, bs, bd});
        g = end;
    }
    return out;
}

TiledCounts tiled_counts(const TileMap& src, const TileMap& dst, int rank, int nranks) {
    TiledCounts c{std::vector<std::int64_t>(static_cast<std::size_t>(nranks), 0),
                  std::vector<std::int64_t>(static_cast<std::size_t>(nranks), 0)};
    for_each_rect(src, dst, pieces(src.rows, dst.rows), pieces(src.cols, dst.cols),
                  [&](const Piece& r, const Piece& col, int s, int d) {
                      const std::int64_t w = (r.g1 - r.g0) * (col.g1 - col.g0);
                      if (s == rank) c.send[static_cast<std::size_t>(d)] += w;
                      if (d == rank) c.recv[static_cast<std::size_t>(s)] += w;
                  });
    return c;
}

Cost tiled_cost(const TiledCounts& c, int rank) {
    Cost cost;
    for (std::size_t r = 0; r < c.send.size(); ++r) {
        if (static_cast<int>(r) == rank) continue;
        if (c.send[r] > 0) cost.words += c.send[r], cost.msgs += 1;
        if (c.recv[r] > 0) cost.words += c.recv[r], cost.words_recv += c.recv[r], cost.msgs += 1;
    }
    return cost;
}

}  // namespace cala::detail

namespace cala {

Cost redistribute_cost(const BlockCyclic& src, GridOrder order, const TileLayout& dst, int rank) {
    const auto c = detail::tiled_counts(detail::tile_map(src, order), detail::tile_map(dst), rank, dst.nprocs());
    return detail::tiled_cost(c, rank);
}

Cost redistribute_cost(const TileLayout& src, const BlockCyclic& dst, GridOrder order, int rank) {
    const auto c = detail::tiled_counts(detail::tile_map(src), detail::tile_map(dst, order), rank, src.nprocs());
    return detail::tiled_cost(c, rank);
}

Cost redistribute_cost(const TileLayout& src, const TileLayout& dst, int rank) {
    const auto c = detail::tiled_counts(detail::tile_map(src), detail::tile_map(dst), rank, src.nprocs());
    return detail::tiled_cost(c, rank);
}

}  // namespace cala

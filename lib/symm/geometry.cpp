// Where A's, B's and C's tiles and the row sets are, for 2DBC and for the symmetric layouts.

#include <algorithm>
#include <map>

#include "symm/engine.hpp"

namespace cala::detail {

SymmGeometry geometry_2dbc(Side side, bool lower, const BlockCyclic& a, const BlockCyclic& b, GridOrder order) {
    const int p = a.p(), q = a.q();
    auto rank_of = [p, q, order](int r, int c) { return order == GridOrder::RowMajor ? r * q + c : c * p + r; };
    SymmGeometry g;
    g.nblk = a.rows.num_blocks();
    g.bsize = [rows = a.rows](index_t l) { return rows.block_size(l); };
    g.ncut = side == Side::Left ? b.cols : b.rows;
    g.lower = lower;
    g.owner_a = [a, rank_of](index_t i, index_t j) { return rank_of(a.rows.block_owner(i), a.cols.block_owner(j)); };
    if (side == Side::Left)
        g.owner_bc = [b, rank_of](index_t l, index_t x) { return rank_of(b.rows.block_owner(l), b.cols.block_owner(x)); };
    else
        g.owner_bc = [b, rank_of](index_t l, index_t x) { return rank_of(b.rows.block_owner(x), b.cols.block_owner(l)); };
    // One set per (process row, process column) pair that a diagonal block lands on.
    std::map<std::pair<int, int>, int> key;
    std::vector<int> set_of(static_cast<std::size_t>(g.nblk));
    for (index_t l = 0; l < g.nblk; ++l) {
        const std::pair<int, int> k{a.rows.block_owner(l), a.cols.block_owner(l)};
        auto [it, fresh] = key.emplace(k, static_cast<int>(g.sets.size()));
        if (fresh) {
            std::vector<int> set;
            for (int c = 0; c < q; ++c) set.push_back(rank_of(k.first, c));
            for (int r = 0; r < p; ++r) set.push_back(rank_of(r, k.second));
            std::sort(set.begin(), set.end());
            set.erase(std::unique(set.begin(), set.end()), set.end());
            g.sets.push_back(std::move(set));
        }
        set_of[static_cast<std::size_t>(l)] = it->second;
    }
    g.set_of = [set_of = std::move(set_of)](index_t l) { return set_of[static_cast<std::size_t>(l)]; };
    return g;
}

SymmGeometry geometry_tiled(Side side, const TileLayout& a, const TileLayout& b) {
    const SymmetricLayout& sym = a.symmetric();
    SymmGeometry g;
    g.nblk = sym.num_blocks();
    g.bsize = [nb = sym.nb(), n = sym.n()](index_t l) { return std::min(nb, n - l * nb); };
    g.ncut = side == Side::Left ? Dist1D(b.n(), b.nb(), 1) : Dist1D(b.m(), b.mb(), 1);
    g.lower = true;
    g.owner_a = [a](index_t i, index_t j) { return a.owner(i, j); };
    if (side == Side::Left) g.owner_bc = [b](index_t l, index_t x) { return b.owner(l, x); };
    else g.owner_bc = [b](index_t l, index_t x) { return b.owner(x, l); };
    for (int t = 0; t < sym.pattern_size(); ++t) g.sets.push_back(sym.row_set(t));
    g.set_of = [t = sym.pattern_size()](index_t l) { return static_cast<int>(l % t); };
    return g;
}

}  // namespace cala::detail

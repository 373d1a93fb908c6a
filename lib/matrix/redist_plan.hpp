#pragma once
// Who sends which elements to whom in a redistribution dst := op(src). Pure arithmetic, shared
// by the implementation (lib/matrix/redistribute.cpp) and the cost model (lib/model/).
//
// A Placement says where every element lives: a block-cyclic layout over a (possibly virtual)
// p x q process grid and the communicator rank that holds each process coordinate. Source and
// destination may use different grids over the same communicator: a user's 2D grid, one layer
// of a 3D grid, or a virtual p x (c·q) grid that spreads blocks over c layers.
//
// Each dimension of the source is cut into segments on which both the source owner and the
// destination owner are constant. With op = N, source rows pair with destination rows; with
// op = T or C, source rows become destination columns, so they pair with destination columns.
//
//   src rows: nb = 4 over 2 procs     | 0 0 0 0 | 1 1 1 1 | 0 0
//   dst rows: nb = 3 over 2 procs     | 0 0 0 | 1 1 1 | 0 0 0 | 1
//   segments (src->dst):                0->0 | 0->1 | 1->1 | 1->0 | 0->0 | 0->1

#include <cstdint>
#include <vector>

#include "cala/grid.hpp"
#include "cala/layout.hpp"

namespace cala::detail {

struct Segment {
    index_t g0, g1;  ///< global index range of the source dimension
    int sproc, dproc;
};

/// Segments of [0, s.n) where s's owner and d's owner are constant (s.n == d.n).
std::vector<Segment> segments(const Dist1D& s, const Dist1D& d);

/// Where the elements of a matrix live: layout over a p x q grid, and the rank (in the
/// communicator of the redistribution) of process (r, c) at ranks[r * q + c].
struct Placement {
    BlockCyclic layout;
    std::vector<int> ranks;
    /// Process index r * q + c held by `rank`, or -1.
    int index_of(int rank) const noexcept;
};
/// The placement of a matrix with layout l on grid g (ranks of g.comm()).
Placement placement_of(const Grid2D& g, const BlockCyclic& l);

struct RedistGeometry {
    bool transposed;
    std::vector<Segment> rows;  ///< source rows paired with dst rows (N) or dst columns (T, C)
    std::vector<Segment> cols;  ///< source columns paired with dst columns (N) or dst rows (T, C)
    int sp, sq, dp, dq;         ///< source and destination grid shapes

    RedistGeometry(Op op, const BlockCyclic& src, const BlockCyclic& dst);
    /// Destination coordinates of the rectangle (row segment dproc x, column segment dproc y).
    int dst_row(int x, int y) const noexcept { return transposed ? y : x; }
    int dst_col(int x, int y) const noexcept { return transposed ? x : y; }
    /// (x, y) of destination process (dr, dc).
    int x_of(int dr, int dc) const noexcept { return transposed ? dc : dr; }
    int y_of(int dr, int dc) const noexcept { return transposed ? dr : dc; }
};

/// Elements source process (sr, sc) sends to each destination process (index dr * dq + dc).
std::vector<std::int64_t> send_counts(const RedistGeometry& g, int sr, int sc);
/// Elements destination process (dr, dc) receives from each source process (index sr * sq + sc).
std::vector<std::int64_t> recv_counts(const RedistGeometry& g, int dr, int dc);

/// Words and messages `rank` moves (to and from other ranks), and its workspace: what it packs
/// (everything it sends, its own share included) plus what it receives from others.
struct RedistTraffic {
    std::int64_t words = 0, msgs = 0, send_total = 0, recv_others = 0;  ///< words: sent + received
};
RedistTraffic redist_traffic(const RedistGeometry& g, const Placement& src, const Placement& dst, int rank);

}  // namespace cala::detail

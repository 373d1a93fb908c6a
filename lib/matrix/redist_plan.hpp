#pragma once
// Who sends which elements to whom in redistribute(op, src -> dst). Pure arithmetic, shared by
// the implementation (lib/matrix/redistribute.cpp) and the cost model (lib/model/).
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

#include "cala/layout.hpp"

namespace cala::detail {

struct Segment {
    index_t g0, g1;  ///< global index range of the source dimension
    int sproc, dproc;
};

/// Segments of [0, s.n) where s's owner and d's owner are constant (s.n == d.n).
std::vector<Segment> segments(const Dist1D& s, const Dist1D& d);

struct RedistGeometry {
    bool transposed;
    std::vector<Segment> rows;  ///< source rows paired with dst rows (N) or dst columns (T, C)
    std::vector<Segment> cols;  ///< source columns paired with dst columns (N) or dst rows (T, C)
    int p, q;

    RedistGeometry(Op op, const BlockCyclic& src, const BlockCyclic& dst);
    /// Destination grid coordinates of the rectangle (row segment dproc x, column segment dproc y).
    int dst_row(int x, int y) const noexcept { return transposed ? y : x; }
    int dst_col(int x, int y) const noexcept { return transposed ? x : y; }
};

/// Elements process (r, c) sends to (as source) and receives from (as destination) every
/// process, indexed by the process's rank in row-major grid order r * q + c.
struct RedistCounts {
    std::vector<std::int64_t> send, recv;
};
RedistCounts redist_counts(const RedistGeometry& g, int r, int c);

}  // namespace cala::detail

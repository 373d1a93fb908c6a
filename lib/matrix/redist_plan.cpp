#include "matrix/redist_plan.hpp"

#include <algorithm>

namespace cala::detail {

std::vector<Segment> segments(const Dist1D& s, const Dist1D& d) {
    std::vector<Segment> out;
    index_t g = 0;
    while (g < s.n) {
        const index_t bs = s.block_of(g), bd = d.block_of(g);
        const index_t end = std::min(s.block_start(bs) + s.block_size(bs), d.block_start(bd) + d.block_size(bd));
        out.push_back({g, end, s.block_owner(bs), d.block_owner(bd)});
        g = end;
    }
    return out;
}

RedistGeometry::RedistGeometry(Op op, const BlockCyclic& src, const BlockCyclic& dst)
    : transposed(op != Op::N),
      rows(segments(src.rows, transposed ? dst.cols : dst.rows)),
      cols(segments(src.cols, transposed ? dst.rows : dst.cols)),
      p(src.p()),
      q(src.q()) {}

namespace {
// Total segment length per (sproc, dproc) pair, as a [nsrc][ndst] table.
std::vector<std::int64_t> histogram(const std::vector<Segment>& segs, int nsrc, int ndst) {
    std::vector<std::int64_t> h(static_cast<std::size_t>(nsrc) * ndst, 0);
    for (const auto& s : segs) h[static_cast<std::size_t>(s.sproc) * ndst + s.dproc] += s.g1 - s.g0;
    return h;
}
}  // namespace

RedistCounts redist_counts(const RedistGeometry& g, int r, int c) {
    // Row segments: sproc in [0, p), dproc in [0, q) if transposed else [0, p); likewise columns.
    const int rd = g.transposed ? g.q : g.p, cd = g.transposed ? g.p : g.q;
    const auto hr = histogram(g.rows, g.p, rd), hc = histogram(g.cols, g.q, cd);
    RedistCounts out{std::vector<std::int64_t>(static_cast<std::size_t>(g.p) * g.q, 0),
                     std::vector<std::int64_t>(static_cast<std::size_t>(g.p) * g.q, 0)};
    // As source (r, c): rectangle (x, y) goes to destination (dst_row(x, y), dst_col(x, y)).
    for (int x = 0; x < rd; ++x)
        for (int y = 0; y < cd; ++y) {
            const std::int64_t n = hr[static_cast<std::size_t>(r) * rd + x] * hc[static_cast<std::size_t>(c) * cd + y];
            out.send[static_cast<std::size_t>(g.dst_row(x, y)) * g.q + g.dst_col(x, y)] += n;
        }
    // As destination (r, c): the row segment's dproc is x, the column segment's is y, with
    // (dst_row(x, y), dst_col(x, y)) == (r, c).
    const int x = g.transposed ? c : r, y = g.transposed ? r : c;
    for (int sr = 0; sr < g.p; ++sr)
        for (int sc = 0; sc < g.q; ++sc)
            out.recv[static_cast<std::size_t>(sr) * g.q + sc] =
                hr[static_cast<std::size_t>(sr) * rd + x] * hc[static_cast<std::size_t>(sc) * cd + y];
    return out;
}

}  // namespace cala::detail

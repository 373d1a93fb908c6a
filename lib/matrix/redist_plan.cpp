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

int Placement::index_of(int rank) const noexcept {
    const auto it = std::find(ranks.begin(), ranks.end(), rank);
    return it == ranks.end() ? -1 : static_cast<int>(it - ranks.begin());
}

Placement placement_of(const Grid2D& g, const BlockCyclic& l) {
    Placement pl{l, std::vector<int>(static_cast<std::size_t>(l.p()) * l.q())};
    for (int r = 0; r < l.p(); ++r)
        for (int c = 0; c < l.q(); ++c) pl.ranks[static_cast<std::size_t>(r) * l.q() + c] = g.rank_of(r, c);
    return pl;
}

RedistGeometry::RedistGeometry(Op op, const BlockCyclic& src, const BlockCyclic& dst)
    : transposed(op != Op::N),
      rows(segments(src.rows, transposed ? dst.cols : dst.rows)),
      cols(segments(src.cols, transposed ? dst.rows : dst.cols)),
      sp(src.p()), sq(src.q()), dp(dst.p()), dq(dst.q()) {}

namespace {
// Total segment length per (sproc, dproc) pair, as a [nsrc][ndst] table.
std::vector<std::int64_t> histogram(const std::vector<Segment>& segs, int nsrc, int ndst) {
    std::vector<std::int64_t> h(static_cast<std::size_t>(nsrc) * ndst, 0);
    for (const auto& s : segs) h[static_cast<std::size_t>(s.sproc) * ndst + s.dproc] += s.g1 - s.g0;
    return h;
}
}  // namespace

std::vector<std::int64_t> send_counts(const RedistGeometry& g, int sr, int sc) {
    const int nx = g.transposed ? g.dq : g.dp, ny = g.transposed ? g.dp : g.dq;
    const auto hr = histogram(g.rows, g.sp, nx), hc = histogram(g.cols, g.sq, ny);
    std::vector<std::int64_t> out(static_cast<std::size_t>(g.dp) * g.dq, 0);
    for (int x = 0; x < nx; ++x)
        for (int y = 0; y < ny; ++y)
            out[static_cast<std::size_t>(g.dst_row(x, y)) * g.dq + g.dst_col(x, y)] =
                hr[static_cast<std::size_t>(sr) * nx + x] * hc[static_cast<std::size_t>(sc) * ny + y];
    return out;
}

std::vector<std::int64_t> recv_counts(const RedistGeometry& g, int dr, int dc) {
    const int nx = g.transposed ? g.dq : g.dp, ny = g.transposed ? g.dp : g.dq;
    const auto hr = histogram(g.rows, g.sp, nx), hc = histogram(g.cols, g.sq, ny);
    const int x = g.x_of(dr, dc), y = g.y_of(dr, dc);
    std::vector<std::int64_t> out(static_cast<std::size_t>(g.sp) * g.sq, 0);
    for (int sr = 0; sr < g.sp; ++sr)
        for (int sc = 0; sc < g.sq; ++sc)
            out[static_cast<std::size_t>(sr) * g.sq + sc] =
                hr[static_cast<std::size_t>(sr) * nx + x] * hc[static_cast<std::size_t>(sc) * ny + y];
    return out;
}

RedistTraffic redist_traffic(const RedistGeometry& g, const Placement& src, const Placement& dst, int rank) {
    RedistTraffic t;
    if (const int s = src.index_of(rank); s >= 0) {
        const auto send = send_counts(g, s / g.sq, s % g.sq);
        for (std::size_t d = 0; d < send.size(); ++d) {
            t.send_total += send[d];
            if (dst.ranks[d] != rank && send[d] > 0) t.words += send[d], t.msgs += 1;
        }
    }
    if (const int d = dst.index_of(rank); d >= 0) {
        const auto recv = recv_counts(g, d / g.dq, d % g.dq);
        for (std::size_t s = 0; s < recv.size(); ++s)
            if (src.ranks[s] != rank && recv[s] > 0) t.words += recv[s], t.msgs += 1, t.recv_others += recv[s];
    }
    return t;
}

}  // namespace cala::detail

// Parameter choice (seed section 3.2.3-3.2.4) and the transfer model (seed equation (1)).

#include <algorithm>
#include <sstream>
#include <string>

#include "device/chunked.hpp"

namespace cala::device {

namespace {
/// Columns j in [j0, j1) with j mod g == dev.
index_t cols_of(index_t j0, index_t j1, int g, int dev) {
    if (j1 <= j0) return 0;
    auto upto = [&](index_t j) { return j / g + (j % g > dev ? 1 : 0); };  // count in [0, j)
    return upto(j1) - upto(j0);
}
}  // namespace

std::int64_t tiles_needed(const ChunkedShape& s, const ChunkedPlan& p) {
    const index_t cg = ceil_div(p.c, s.g);
    const index_t l = p.lookahead;
    std::int64_t need = p.b * cg;
    switch (p.regime) {
    case 'a':
        need += s.mt * s.kt + s.kt * ceil_div(s.nt, s.g);
        // Streamed C: the finished block until its last share goes back, and the next block,
        // coming in a share per chunk.
        if (p.stream_c) need += 2 * p.b * cg;
        break;
    case 'b': need += (l + 1) * p.b * p.d + s.kt * cg + l * cg * p.d; break;
    default: need += (l + 1) * (p.b + cg) * p.d; break;
    }
    return need;
}

namespace {
/// The streamed-C plan when the caller forces nothing that contradicts it and it fits in regime
/// 'a': C in 2 x 2 blocks (kept whole where forced), chunks of one k tile, three chunks ahead,
/// so that each block's copies of C run under the products of its neighbours.
bool plan_stream(const ChunkedShape& s, std::int64_t mem, const DeviceGemmOptions& o, ChunkedPlan& p) {
    if (o.stream_c == 0 || (o.regime && o.regime != 'a')) return false;
    ChunkedPlan q = p;
    q.stream_c = true, q.regime = 'a';
    if (o.stream_c < 0) {
        if (o.b > 0 || o.c > 0 || o.d > 0 || s.mt * ceil_div(s.nt, s.g) > mem * 3 / 4) return false;
        q.b = ceil_div(s.mt, 2), q.c = ceil_div(s.nt, 2), q.d = 1;
        if (q.c >= s.g && q.c < s.nt) q.c -= q.c % s.g;
        if (o.lookahead < 0) q.lookahead = 3;
    }
    if (tiles_needed(s, q) > mem) {
        if (o.stream_c > 0) throw Error("device_gemm: stream_c = 1 does not fit in the device memory");
        return false;
    }
    p = q;
    return true;
}
}  // namespace

ChunkedPlan plan_chunked(const ChunkedShape& s, index_t tile, std::int64_t mem, const DeviceGemmOptions& o) {
    ChunkedPlan p{tile, o.b, o.c, o.d, o.lookahead, 'c'};
    const std::int64_t cap = mem * 3 / 4;  // the C block takes about 75% of a device
    if (p.b <= 0 || p.c <= 0) {
        index_t b = 0, c = 0;
        if (s.mt * ceil_div(s.nt, s.g) <= cap) {
            b = s.mt, c = s.nt;  // case c1: all of C fits
        } else {
            index_t q = 1;
            while (q < std::max(s.mt, s.nt) && (q + 1) * ceil_div(q + 1, s.g) <= cap) ++q;
            b = std::min(q, s.mt), c = std::min(q, s.nt);
            while (b == s.mt && c < s.nt && b * ceil_div(c + 1, s.g) <= cap) ++c;
            while (c == s.nt && b < s.mt && (b + 1) * ceil_div(c, s.g) <= cap) ++b;
            if (c >= s.g && c < s.nt) c -= c % s.g;  // every device gets the same share of a block
        }
        if (p.b <= 0) p.b = std::max<index_t>(b, 1);
        if (p.c <= 0) p.c = std::max<index_t>(c, 1);
    }
    p.b = std::min(p.b, s.mt), p.c = std::min(p.c, s.nt);
    if (p.lookahead < 0) p.lookahead = (p.b == s.mt && p.c == s.nt) ? 1 : 2;
    for (;;) {
        if (p.d <= 0 || o.d <= 0) {
            p.d = 0;
            for (index_t d = s.kt; d >= 1; --d) {
                ChunkedPlan q = p;
                q.d = d, q.regime = 'c';
                if (tiles_needed(s, q) <= mem) { p.d = d; break; }
            }
        }
        ChunkedPlan q = p;
        q.regime = 'c';
        if (p.d > 0 && tiles_needed(s, q) <= mem) break;
        // Does not fit: drop lookahead, then halve the larger block side (unless forced).
        if (o.lookahead < 0 && p.lookahead > 0) { --p.lookahead; continue; }
        if (o.b <= 0 && p.b > 1 && (p.b >= p.c || o.c > 0 || p.c == 1)) { p.b = (p.b + 1) / 2; continue; }
        if (o.c <= 0 && p.c > 1) { p.c = (p.c + 1) / 2; continue; }
        std::ostringstream e;
        e << "device_gemm: b=" << p.b << " c=" << p.c << " d=" << std::max<index_t>(p.d, 1) << " l=" << p.lookahead
          << " need " << tiles_needed(s, q) << " tiles of " << tile << "x" << tile << " per device but only "
          << mem << " fit in the device memory";
        throw Error(e.str());
    }
    auto fits = [&](char r) { ChunkedPlan q = p; q.regime = r; return tiles_needed(s, q) <= mem; };
    if (o.regime) {
        if (o.regime != 'a' && o.regime != 'b' && o.regime != 'c')
            throw Error(std::string("device_gemm: regime must be 'a', 'b' or 'c', not '") + o.regime + "'");
        if (!fits(o.regime))
            throw Error(std::string("device_gemm: regime '") + o.regime + "' does not fit in the device memory");
        p.regime = o.regime;
    } else {
        p.regime = fits('a') ? 'a' : fits('b') ? 'b' : 'c';
    }
    if (o.stream_c != 0 && o.stream_c != 1 && o.stream_c != -1)
        throw Error("device_gemm: stream_c must be -1, 0 or 1, not " + std::to_string(o.stream_c));
    plan_stream(s, mem, o, p);
    return p;
}

std::vector<DeviceTraffic> model_traffic(const ChunkedShape& s, const ChunkedPlan& p, bool beta_nonzero, bool c_out) {
    std::vector<DeviceTraffic> t(static_cast<std::size_t>(s.g));
    const index_t x_blocks = ceil_div(s.mt, p.b), y_blocks = ceil_div(s.nt, p.c);
    for (int g = 0; g < s.g; ++g) {
        const index_t nc = cols_of(0, s.nt, s.g, g);
        auto& d = t[static_cast<std::size_t>(g)];
        d.h2d += (beta_nonzero ? s.mt * nc : 0) + (p.regime == 'c' ? x_blocks : 1) * s.kt * nc;  // C, B
        if (c_out) d.d2h += s.mt * nc;
        if (p.regime == 'a' && nc > 0) (g == 0 ? d.h2d : d.d2d) += s.mt * s.kt;  // A once, device 0 shares it
    }
    if (p.regime != 'a') {
        for (index_t y = 0; y < y_blocks; ++y) {  // A once per block column, the lowest device shares it
            const index_t j0 = y * p.c, j1 = std::min(j0 + p.c, s.nt);
            bool leader = true;
            for (int g = 0; g < s.g; ++g) {
                if (cols_of(j0, j1, s.g, g) == 0) continue;
                (leader ? t[g].h2d : t[g].d2d) += s.mt * s.kt;
                leader = false;
            }
        }
    }
    return t;
}

}  // namespace cala::device

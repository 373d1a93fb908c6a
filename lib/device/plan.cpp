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

ChunkedShape chunked_shape(index_t m, index_t n, index_t k, index_t t, index_t split, int g) {
    const index_t ks = t / split;
    return {ceil_div(m, t), ceil_div(n, t), ceil_div(k, ks), g};
}

std::int64_t tiles_needed(const ChunkedShape& s, const ChunkedPlan& p) {
    const index_t cg = ceil_div(p.c, s.g);
    const index_t l = p.lookahead;
    std::int64_t need = p.split * p.b * cg;  // the C block, p.split slabs a tile
    switch (p.regime) {
    case 'a':
        need += s.mt * s.kt + s.kt * ceil_div(s.nt, s.g);
        // Streamed C: the finished block until its last share goes back, and the next block,
        // coming in a share per chunk.
        if (p.stream_c) need += 2 * p.split * p.b * cg;
        break;
    case 'b': need += (l + 1) * p.b * p.d + s.kt * cg + l * cg * p.d; break;
    default: need += (l + 1) * (p.b + cg) * p.d; break;
    }
    return need;
}

std::int64_t needed_bytes(const ChunkedShape& s, const ChunkedPlan& p, std::size_t elem_size) {
    return tiles_needed(s, p) * p.tile * (p.tile / p.split) * static_cast<std::int64_t>(elem_size);
}

namespace {
void check_stream_c(const DeviceGemmOptions& o) {
    if (o.stream_c != 0 && o.stream_c != 1 && o.stream_c != -1)
        throw Error("device_gemm: stream_c must be -1, 0 or 1, not " + std::to_string(o.stream_c));
}

/// The streamed-C plan when the caller forces nothing that contradicts it and it fits in regime
/// 'a': C in 2 x 2 blocks (kept whole where forced), chunks of one k tile, three chunks ahead,
/// so that each block's copies of C run under the products of its neighbours.
bool plan_stream(const ChunkedShape& s, std::int64_t mem, const DeviceGemmOptions& o, ChunkedPlan& p) {
    if (o.stream_c == 0 || (o.regime && o.regime != 'a') || p.split != 1) return false;
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

ChunkedPlan plan_chunked(const ChunkedShape& s, index_t tile, std::int64_t mem_slabs, const DeviceGemmOptions& o,
                         index_t split) {
    ChunkedPlan p{tile, o.b, o.c, o.d > 0 ? o.d * split : o.d, o.lookahead, 'c', false, split};
    const std::int64_t mem = mem_slabs;
    const std::int64_t cap = mem / split * 3 / 4;  // the C block takes about 75% of a device (in tiles)
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
        if (o.d <= 0) {
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
    check_stream_c(o);
    plan_stream(s, mem, o, p);
    return p;
}

ChunkedPlan plan_half_depth(const ChunkedShape& s, index_t tile, std::int64_t mem, const DeviceGemmOptions& o) {
    check_stream_c(o);
    if (o.stream_c == 1) throw Error("device_gemm: stream_c = 1 takes whole tiles (k_split 1)");
    if (o.regime && o.regime != 'a' && o.regime != 'b' && o.regime != 'c')
        throw Error(std::string("device_gemm: regime must be 'a', 'b' or 'c', not '") + o.regime + "'");
    const index_t split = 2;
    const int l_hi = o.lookahead >= 0 ? o.lookahead : 2, l_lo = o.lookahead >= 0 ? o.lookahead : 0;
    ChunkedPlan best{};
    std::int64_t best_bytes = -1;
    // Ordering: a lookahead of at least 1 (the copies under the products) first, then fewer
    // bytes, then the larger lookahead, the deeper chunk.
    auto better = [&](const ChunkedPlan& q, std::int64_t bytes) {
        if (best_bytes < 0) return true;
        const bool ov = q.lookahead >= 1, best_ov = best.lookahead >= 1;
        if (ov != best_ov) return ov;
        if (bytes != best_bytes) return bytes < best_bytes;
        if (q.lookahead != best.lookahead) return q.lookahead > best.lookahead;
        return q.d > best.d;
    };
    for (index_t b = o.b > 0 ? std::min(o.b, s.mt) : 1; b <= (o.b > 0 ? std::min(o.b, s.mt) : s.mt); ++b)
        for (index_t c = o.c > 0 ? std::min(o.c, s.nt) : 1; c <= (o.c > 0 ? std::min(o.c, s.nt) : s.nt); ++c) {
            if (o.c <= 0 && c >= s.g && c < s.nt && c % s.g != 0) continue;  // equal shares of a block
            const index_t cg = ceil_div(c, s.g);
            for (int l = l_hi; l >= l_lo; --l) {
                ChunkedPlan q{tile, b, c, 0, l, 'c', false, split};
                // Regime c needs split·b·cg + (l + 1)(b + cg)·d slabs: the deepest d that fits.
                const std::int64_t room = mem - split * b * cg;
                if (room < (l + 1) * (b + cg)) continue;
                q.d = o.d > 0 ? std::min(o.d * split, s.kt) : std::min<index_t>(room / ((l + 1) * (b + cg)), s.kt);
                auto fits = [&](char r) { ChunkedPlan x = q; x.regime = r; return tiles_needed(s, x) <= mem; };
                if (!fits('c')) continue;
                if (o.regime) {
                    if (!fits(o.regime)) continue;
                    q.regime = o.regime;
                } else {
                    q.regime = fits('a') ? 'a' : fits('b') ? 'b' : 'c';
                }
                const std::int64_t bytes = model_bytes(s, q, false, 1);
                if (better(q, bytes)) best = q, best_bytes = bytes;
            }
        }
    if (best_bytes < 0) {
        std::ostringstream e;
        e << "device_gemm: no plan with half-depth slabs (b=" << o.b << " c=" << o.c << " d=" << o.d
          << " l=" << o.lookahead << ") fits " << mem << " slabs of " << tile << "x" << tile / split
          << " per device";
        throw Error(e.str());
    }
    return best;
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

std::int64_t model_bytes(const ChunkedShape& s, const ChunkedPlan& p, bool beta_nonzero, std::size_t elem_size) {
    std::int64_t copies = 0;
    for (const auto& d : model_traffic(s, p, beta_nonzero)) copies += d.h2d + d.d2d;
    const std::int64_t c_copies = s.mt * s.nt * (beta_nonzero ? 2 : 1);  // C in (beta != 0) and out
    const std::int64_t ab = copies - (beta_nonzero ? s.mt * s.nt : 0);
    const auto es = static_cast<std::int64_t>(elem_size);
    return ab * p.tile * (p.tile / p.split) * es + c_copies * p.tile * p.tile * es;
}

}  // namespace cala::device

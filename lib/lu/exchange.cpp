// The interchanges of one LU step (engine.hpp: exchange_rows): only the rows that change place
// move, point to point between the diagonal block row's owner and the process rows that hold the
// pivots; moves inside one process row are local copies.
//
//   p = 3, the diagonal block row D = rows [k0, k0 + kb) on process row 1, pivots w0 (row 0)
//   and w1 (row 2) chosen for D's first two places; every process column at once:
//
//     row 0 ──── w0 (1 x w) ───▶ row 1 ◀─── w1 (1 x w) ──── row 2
//     row 0 ◀─── D's row that moves into w0 ─── row 1 ─── D's row that moves into w1 ───▶ row 2
//
// The words depend on the pivots: exchange_counts gives them, for the engine and the model alike.

#include <algorithm>
#include <map>

#include "core/trace.hpp"
#include "core/workspace.hpp"
#include "kernels/blas.hpp"
#include "lu/engine.hpp"

namespace cala::detail {

Moves step_moves(std::span<const index_t> ipiv, index_t k0, index_t kb) {
    std::map<index_t, index_t> at;  // position -> the original row it holds (touched ones only)
    auto held = [&](index_t pos) {
        const auto it = at.find(pos);
        return it == at.end() ? pos : it->second;
    };
    for (index_t i = k0; i < k0 + kb; ++i) {
        const index_t j = ipiv[static_cast<std::size_t>(i)];
        if (j == i) continue;
        const index_t hi = held(i), hj = held(j);
        at[i] = hj;
        at[j] = hi;
    }
    Moves out;
    for (const auto& [pos, src] : at)
        if (pos != src) out.emplace_back(pos, src);
    return out;
}

Moves inverse_moves(const Moves& m) {
    Moves out;
    out.reserve(m.size());
    for (const auto& [pos, src] : m) out.emplace_back(src, pos);
    std::sort(out.begin(), out.end());
    return out;
}

ExchangeCounts exchange_counts(const Dist1D& rows, index_t k0, index_t kb, const Moves& moves) {
    ExchangeCounts x;
    x.to_d.assign(static_cast<std::size_t>(rows.nprocs), 0);
    x.from_d.assign(static_cast<std::size_t>(rows.nprocs), 0);
    if (moves.empty()) return x;
    const int pr = rows.owner(k0);
    auto in_d = [&](index_t g) { return g >= k0 && g < k0 + kb; };
    for (const auto& [pos, src] : moves) {
        if (in_d(pos) && !in_d(src) && rows.owner(src) != pr) ++x.to_d[static_cast<std::size_t>(rows.owner(src))];
        if (!in_d(pos) && rows.owner(pos) != pr) ++x.from_d[static_cast<std::size_t>(rows.owner(pos))];
    }
    return x;
}

DeferredMoves::DeferredMoves(const LuGeom& g, std::span<const index_t> ipiv) : g_(g), ipiv_(ipiv) {
    const index_t m = g.rows.n;
    src_.resize(static_cast<std::size_t>(m));
    inv_.resize(static_cast<std::size_t>(m));
    for (index_t x = 0; x < m; ++x) src_[static_cast<std::size_t>(x)] = inv_[static_cast<std::size_t>(x)] = x;
    from_ = m;
}

void DeferredMoves::back_to(index_t b) {
    const index_t l = b + 1, k0 = g_.start(l);
    from_ = k0;
    // sigma_b(x) = mu_l(sigma_{b+1}(x)): only the x whose sigma_{b+1}(x) is a position of step l
    // change; all changes are read before any is written (positions are sources too).
    std::vector<std::pair<index_t, index_t>> changed;
    for (const auto& [pos, src] : step_moves(ipiv_, k0, g_.width(l)))
        changed.emplace_back(inv_[static_cast<std::size_t>(pos)], src);
    for (const auto& [x, src] : changed) {
        src_[static_cast<std::size_t>(x)] = src;
        inv_[static_cast<std::size_t>(src)] = x;
    }
}

Moves DeferredMoves::moves() const {
    Moves out;
    for (index_t x = from_; x < static_cast<index_t>(src_.size()); ++x)
        if (src_[static_cast<std::size_t>(x)] != x) out.emplace_back(x, src_[static_cast<std::size_t>(x)]);
    return out;
}

PermuteCounts permute_counts(const Dist1D& rows, int row, const Moves& moves) {
    PermuteCounts c;
    c.send.assign(static_cast<std::size_t>(rows.nprocs), 0);
    c.recv.assign(static_cast<std::size_t>(rows.nprocs), 0);
    for (const auto& [pos, src] : moves) {
        const int po = rows.owner(pos), so = rows.owner(src);
        if (po == so) continue;
        if (so == row) ++c.send[static_cast<std::size_t>(po)];
        if (po == row) ++c.recv[static_cast<std::size_t>(so)];
    }
    return c;
}

namespace {

// For each column of `cols` (x counts them in order): f(column index, x). Column by column, so
// that the rows a step touches are read within one column at a time (not along a row: a stride
// of lda, a page per element).
template <class F>
void for_columns(const ColRanges& cols, F&& f) {
    index_t x = 0;
    for (const auto& [first, count] : cols)
        for (index_t j = first; j < first + count; ++j, ++x) f(j, x);
}

}  // namespace

template <class T>
void exchange_rows(const Dist1D& rows, int r, const Comm& col_comm, index_t kb, const Moves& moves, T* a, index_t lda,
                   const ColRanges& cols, ExchangeBuffers<T>& ws) {
    index_t w = 0;
    for (const auto& rg : cols) w += rg.second;
    if (kb == 0 || w == 0 || moves.empty()) return;
    if (col_comm.size() == 1) {
        // One process row: the moves in place (local rows are global), column by column, the
        // columns shared by the calling rank's kernel threads.
        std::vector<index_t> js;
        js.reserve(static_cast<std::size_t>(w));
        for_columns(cols, [&](index_t j, index_t) { js.push_back(j); });
        const int nt = w >= 64 ? kernels::threads() : 1;
#pragma omp parallel num_threads(nt)
        {
            std::vector<T> tmp(moves.size());
#pragma omp for schedule(static)
            for (index_t x = 0; x < w; ++x) {
                T* col = a + js[static_cast<std::size_t>(x)] * lda;
                for (std::size_t i = 0; i < moves.size(); ++i) tmp[i] = col[moves[i].second];
                for (std::size_t i = 0; i < moves.size(); ++i) col[moves[i].first] = tmp[i];
            }
        }
        return;
    }
    const int p = col_comm.size();
    constexpr int kTag = 3102;
    // Per peer process row, in the order of `moves` (both sides filter it alike): the local rows
    // I pack and send, and the local rows I write from what I receive; my local (position, source).
    std::vector<std::vector<index_t>> out(static_cast<std::size_t>(p)), in(static_cast<std::size_t>(p));
    std::vector<std::pair<index_t, index_t>> local;
    for (const auto& [pos, src] : moves) {
        const int po = rows.owner(pos), so = rows.owner(src);
        if (po == r && so == r) local.emplace_back(rows.to_local(pos), rows.to_local(src));
        else if (so == r) out[static_cast<std::size_t>(po)].push_back(rows.to_local(src));
        else if (po == r) in[static_cast<std::size_t>(so)].push_back(rows.to_local(pos));
    }
    // Sized for the most a step can move (kb rows each way), whatever the pivots.
    ws.reserve(kb * w);
    std::vector<Request> reqs;
    std::int64_t t0 = trace::on() ? trace::now_ns() : 0;
    index_t off = 0;
    for (int q = 0; q < p; ++q) {
        const auto& rs = in[static_cast<std::size_t>(q)];
        if (rs.empty()) continue;
        const auto k = static_cast<index_t>(rs.size());
        reqs.push_back(col_comm.irecv(ws.recv.data() + off, k * w, q, kTag));
        off += k * w;
    }
    off = 0;
    for (int q = 0; q < p; ++q) {
        const auto& rs = out[static_cast<std::size_t>(q)];
        if (rs.empty()) continue;
        const auto k = static_cast<index_t>(rs.size());
        T* buf = ws.send.data() + off;
        for_columns(cols, [&](index_t j, index_t x) {
            for (index_t i = 0; i < k; ++i) buf[x * k + i] = a[rs[static_cast<std::size_t>(i)] + j * lda];
        });
        reqs.push_back(col_comm.isend(buf, k * w, q, kTag));
        off += k * w;
    }
    // The local moves read every source of a column before writing (sources may be positions too).
    std::vector<T> tmp(local.size());
    for_columns(cols, [&](index_t j, index_t) {
        T* col = a + j * lda;
        for (std::size_t i = 0; i < local.size(); ++i) tmp[i] = col[local[i].second];
        for (std::size_t i = 0; i < local.size(); ++i) col[local[i].first] = tmp[i];
    });
    if (trace::on()) trace::record(trace::Kind::Bcast, "pack, local moves", t0, trace::now_ns());
    {
        trace::Span sp(trace::Kind::Wait, "exchange");
        wait_all(reqs);
    }
    trace::Span sp(trace::Kind::Bcast, "unpack");
    off = 0;
    for (int q = 0; q < p; ++q) {
        const auto& rs = in[static_cast<std::size_t>(q)];
        if (rs.empty()) continue;
        const auto k = static_cast<index_t>(rs.size());
        const T* buf = ws.recv.data() + off;
        for_columns(cols, [&](index_t j, index_t x) {
            for (index_t i = 0; i < k; ++i) a[rs[static_cast<std::size_t>(i)] + j * lda] = buf[x * k + i];
        });
        off += k * w;
    }
}

template <class T>
void permute_rows(const Dist1D& rows, int r, const Comm& col_comm, std::span<const RowPermutation> parts, T* a,
                  index_t lda, ExchangeBuffers<T>& ws) {
    const int p = col_comm.size();
    constexpr int kTag = 3103;
    // Per part and peer: the local rows I send (sources) and fill (positions), in the parts' move
    // order, which both sides share; the local moves.
    struct Lists {
        std::vector<std::vector<index_t>> out, in;
        std::vector<std::pair<index_t, index_t>> local;
    };
    std::vector<Lists> lists(parts.size());
    std::vector<index_t> nsend(static_cast<std::size_t>(p), 0), nrecv(static_cast<std::size_t>(p), 0);
    for (std::size_t s = 0; s < parts.size(); ++s) {
        Lists& li = lists[s];
        li.out.resize(static_cast<std::size_t>(p));
        li.in.resize(static_cast<std::size_t>(p));
        for (const auto& [pos, src] : *parts[s].moves) {
            const int po = rows.owner(pos), so = rows.owner(src);
            if (po == r && so == r) li.local.emplace_back(rows.to_local(pos), rows.to_local(src));
            else if (so == r) li.out[static_cast<std::size_t>(po)].push_back(rows.to_local(src));
            else if (po == r) li.in[static_cast<std::size_t>(so)].push_back(rows.to_local(pos));
        }
        for (int q = 0; q < p; ++q) {
            nsend[static_cast<std::size_t>(q)] += static_cast<index_t>(li.out[static_cast<std::size_t>(q)].size()) * parts[s].w;
            nrecv[static_cast<std::size_t>(q)] += static_cast<index_t>(li.in[static_cast<std::size_t>(q)].size()) * parts[s].w;
        }
    }
    index_t tsend = 0, trecv = 0;
    for (int q = 0; q < p; ++q) {
        tsend += nsend[static_cast<std::size_t>(q)];
        trecv += nrecv[static_cast<std::size_t>(q)];
    }
    ws.reserve(std::max(tsend, trecv));
    std::vector<Request> reqs;
    index_t off = 0;
    for (int q = 0; q < p; ++q) {
        if (nrecv[static_cast<std::size_t>(q)] == 0) continue;
        reqs.push_back(col_comm.irecv(ws.recv.data() + off, nrecv[static_cast<std::size_t>(q)], q, kTag));
        off += nrecv[static_cast<std::size_t>(q)];
    }
    off = 0;
    for (int q = 0; q < p; ++q) {
        if (nsend[static_cast<std::size_t>(q)] == 0) continue;
        T* buf = ws.send.data() + off;
        for (std::size_t s = 0; s < parts.size(); ++s) {
            const auto& rs = lists[s].out[static_cast<std::size_t>(q)];
            const auto k = static_cast<index_t>(rs.size());
            for (index_t x = 0; x < parts[s].w; ++x, buf += k) {
                const T* col = a + (parts[s].c0 + x) * lda;
                for (index_t i = 0; i < k; ++i) buf[i] = col[rs[static_cast<std::size_t>(i)]];
            }
        }
        reqs.push_back(col_comm.isend(ws.send.data() + off, nsend[static_cast<std::size_t>(q)], q, kTag));
        off += nsend[static_cast<std::size_t>(q)];
    }
    // The local moves read every source of a column before writing (sources may be positions too).
    for (std::size_t s = 0; s < parts.size(); ++s) {
        const auto& local = lists[s].local;
        std::vector<T> tmp(local.size());
        for (index_t x = 0; x < parts[s].w; ++x) {
            T* col = a + (parts[s].c0 + x) * lda;
            for (std::size_t i = 0; i < local.size(); ++i) tmp[i] = col[local[i].second];
            for (std::size_t i = 0; i < local.size(); ++i) col[local[i].first] = tmp[i];
        }
    }
    wait_all(reqs);
    const T* buf = ws.recv.data();
    for (int q = 0; q < p; ++q)
        for (std::size_t s = 0; s < parts.size(); ++s) {
            const auto& rs = lists[s].in[static_cast<std::size_t>(q)];
            const auto k = static_cast<index_t>(rs.size());
            for (index_t x = 0; x < parts[s].w; ++x, buf += k) {
                T* col = a + (parts[s].c0 + x) * lda;
                for (index_t i = 0; i < k; ++i) col[rs[static_cast<std::size_t>(i)]] = buf[i];
            }
        }
}

void for_each_deferred_group(const LuGeom& g, int c, std::span<const index_t> ipiv, const DeferredGroupFn& fn) {
    const index_t steps = g.steps();
    if (g.p() <= 1 || steps < 2) return;
    DeferredMoves dm(g, ipiv);
    const index_t cap = std::max(g.rows.nb, g.rows.ib) * std::max<index_t>(1, g.cols.local_size(c));
    std::vector<index_t> blocks;
    std::vector<Moves> moves;
    index_t filled = 0;
    for (index_t b = steps - 1; b-- > 0;) {
        dm.back_to(b);
        if (g.co(b) != c) continue;
        Moves mv = dm.moves();
        if (mv.empty()) continue;
        const index_t words = static_cast<index_t>(mv.size()) * g.width(b);
        if (!blocks.empty() && filled + words > cap) {
            fn(blocks, moves);
            blocks.clear();
            moves.clear();
            filled = 0;
        }
        blocks.push_back(b);
        moves.push_back(std::move(mv));
        filled += words;
    }
    if (!blocks.empty()) fn(blocks, moves);
}

#define CALA_INST(T)                                                                                          \
    template void exchange_rows<T>(const Dist1D&, int, const Comm&, index_t, const Moves&, T*, index_t, \
                                   const ColRanges&, ExchangeBuffers<T>&);                               \
    template void permute_rows<T>(const Dist1D&, int, const Comm&, std::span<const RowPermutation>, T*, \
                                  index_t, ExchangeBuffers<T>&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::detail

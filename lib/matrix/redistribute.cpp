// redistribute(op, src -> dst): pack per destination, isend/irecv, unpack.
//
// Rectangles travel in one order known to both sides: source column segments ascending, each
// column of the segment, then source row segments ascending (column-major in the source).

#include <algorithm>
#include <vector>

#include "cala/matrix.hpp"
#include "core/check.hpp"
#include "core/workspace.hpp"
#include "matrix/redist_plan.hpp"
#include "matrix/redistribute_impl.hpp"

namespace cala {

namespace detail {

namespace {

constexpr int kRedistTag = 7301;

// Segments with the given source proc (or, for by_src, destination proc), grouped by the
// other end's proc; each group in ascending global order.
std::vector<std::vector<Segment>> by_dst(const std::vector<Segment>& segs, int sproc, int ndst) {
    std::vector<std::vector<Segment>> out(static_cast<std::size_t>(ndst));
    for (const auto& s : segs)
        if (s.sproc == sproc) out[static_cast<std::size_t>(s.dproc)].push_back(s);
    return out;
}

std::vector<std::vector<Segment>> by_src(const std::vector<Segment>& segs, int dproc, int nsrc) {
    std::vector<std::vector<Segment>> out(static_cast<std::size_t>(nsrc));
    for (const auto& s : segs)
        if (s.dproc == dproc) out[static_cast<std::size_t>(s.sproc)].push_back(s);
    return out;
}

template <class T>
T* pack(const BlockCyclic& L, const T* data, index_t ld, const std::vector<Segment>& rs,
        const std::vector<Segment>& cs, T* out) {
    for (const auto& c : cs) {
        const index_t lc0 = L.cols.to_local(c.g0);
        for (index_t j = 0; j < c.g1 - c.g0; ++j)
            for (const auto& r : rs) {
                const T* col = data + L.rows.to_local(r.g0) + (lc0 + j) * ld;
                out = std::copy(col, col + (r.g1 - r.g0), out);
            }
    }
    return out;
}

// dst := op(value), or dst := op(value) + beta·dst when accumulating.
template <class T>
void put(T& dst, T value, bool conj, bool accumulate, T beta) {
    value = conj_if(value, conj);
    dst = !accumulate ? value : beta == T(0) ? value : value + beta * dst;
}

// dst(j, i) := op(src(i, j)) (or accumulated) for i < len, j < w: src with leading dimension lds,
// dst with ldd. In 32 x 32 tiles, so that neither side is walked a whole column at a stride (a
// transposed redistribution of 268 MB spent 10% of a deep-k PDGEMM here, element by element).
template <class T>
void put_transposed(index_t len, index_t w, const T* src, index_t lds, T* dst, index_t ldd, bool conj, bool accumulate,
                    T beta) {
    constexpr index_t kTile = 32;
    for (index_t i0 = 0; i0 < len; i0 += kTile) {
        const index_t i1 = std::min(len, i0 + kTile);
        for (index_t j0 = 0; j0 < w; j0 += kTile) {
            const index_t j1 = std::min(w, j0 + kTile);
            for (index_t i = i0; i < i1; ++i)
                for (index_t j = j0; j < j1; ++j) put(dst[j + i * ldd], src[i + j * lds], conj, accumulate, beta);
        }
    }
}

// The stream holds, per column segment c, per column j of c, per row segment r, the elements of
// r: so for one (c, r) a (len x width(c)) piece with leading dimension sum(len) over rs.
template <class T>
const T* unpack(Op op, const BlockCyclic& L, T* data, index_t ld, const std::vector<Segment>& rs,
                const std::vector<Segment>& cs, const T* in, bool accumulate, T beta) {
    if (op != Op::N) {  // source (i, j) -> destination (j, i)
        index_t rows = 0;
        for (const auto& r : rs) rows += r.g1 - r.g0;
        for (const auto& c : cs) {
            const index_t w = c.g1 - c.g0;
            index_t off = 0;
            for (const auto& r : rs) {
                const index_t len = r.g1 - r.g0;
                T* dst = data + L.rows.to_local(c.g0) + L.cols.to_local(r.g0) * ld;
                put_transposed(len, w, in + off, rows, dst, ld, op == Op::C, accumulate, beta);
                off += len;
            }
            in += w * rows;
        }
        return in;
    }
    for (const auto& c : cs) {
        for (index_t j = c.g0; j < c.g1; ++j)
            for (const auto& r : rs) {
                const index_t len = r.g1 - r.g0;
                T* col = data + L.rows.to_local(r.g0) + L.cols.to_local(j) * ld;
                if (!accumulate) std::copy(in, in + len, col);
                else for (index_t i = 0; i < len; ++i) put(col[i], in[i], false, true, beta);
                in += len;
            }
    }
    return in;
}

}  // namespace

template <class T>
void redistribute_placed(Op op, const Comm& comm, const Placement& src, const T* sdata, index_t sld,
                         const Placement& dst, T* ddata, index_t dld, bool accumulate, T beta) {
    const RedistGeometry geo(op, src.layout, dst.layout);
    const int me = comm.rank();
    const int s_idx = src.index_of(me), d_idx = dst.index_of(me);
    const int nx = geo.transposed ? geo.dq : geo.dp, ny = geo.transposed ? geo.dp : geo.dq;

    // Workspace: everything this rank sends (its own share included, unpacked from there) and
    // everything it receives from others. The cost model counts exactly these two buffers.
    std::vector<std::int64_t> recv, send;
    if (d_idx >= 0) recv = recv_counts(geo, d_idx / geo.dq, d_idx % geo.dq);
    if (s_idx >= 0) send = send_counts(geo, s_idx / geo.sq, s_idx % geo.sq);
    std::int64_t recv_total = 0, send_total = 0;
    std::vector<std::int64_t> roff(recv.size(), 0), soff(send.size(), 0);
    for (std::size_t s = 0; s < recv.size(); ++s) {
        roff[s] = recv_total;
        if (src.ranks[s] != me) recv_total += recv[s];
    }
    for (std::size_t d = 0; d < send.size(); ++d) soff[d] = send_total, send_total += send[d];
    Buffer<T> rbuf(recv_total), sbuf(send_total);

    // Receives first, so that every message has a posted receive.
    std::vector<Request> reqs;
    for (std::size_t s = 0; s < recv.size(); ++s)
        if (src.ranks[s] != me && recv[s] > 0)
            reqs.push_back(comm.irecv(rbuf.data() + roff[s], recv[s], src.ranks[s], kRedistTag));

    // Pack per destination process, in destination index order, and send.
    if (s_idx >= 0) {
        const int sr = s_idx / geo.sq, sc = s_idx % geo.sq;
        const auto rows_to = by_dst(geo.rows, sr, nx), cols_to = by_dst(geo.cols, sc, ny);
        for (std::size_t d = 0; d < send.size(); ++d) {
            if (send[d] == 0) continue;
            const int dr = static_cast<int>(d) / geo.dq, dc = static_cast<int>(d) % geo.dq;
            pack(src.layout, sdata, sld, rows_to[geo.x_of(dr, dc)], cols_to[geo.y_of(dr, dc)], sbuf.data() + soff[d]);
            if (dst.ranks[d] != me) reqs.push_back(comm.isend(sbuf.data() + soff[d], send[d], dst.ranks[d], kRedistTag));
        }
    }

    // Unpack: my own share straight from the send buffer, the others once they have arrived.
    if (d_idx >= 0) {
        const int dr = d_idx / geo.dq, dc = d_idx % geo.dq;
        const auto rows_from = by_src(geo.rows, geo.x_of(dr, dc), geo.sp);
        const auto cols_from = by_src(geo.cols, geo.y_of(dr, dc), geo.sq);
        if (s_idx >= 0 && send[d_idx] > 0 && dst.ranks[d_idx] == me)
            unpack(op, dst.layout, ddata, dld, rows_from[s_idx / geo.sq], cols_from[s_idx % geo.sq],
                   sbuf.data() + soff[d_idx], accumulate, beta);
        wait_all(reqs);
        for (std::size_t s = 0; s < recv.size(); ++s)
            if (src.ranks[s] != me && recv[s] > 0)
                unpack(op, dst.layout, ddata, dld, rows_from[s / geo.sq], cols_from[s % geo.sq], rbuf.data() + roff[s],
                       accumulate, beta);
    } else {
        wait_all(reqs);
    }
}

template <class T>
void redistribute_unchecked(Op op, const MatrixRef<T>& src, const MatrixRef<T>& dst) {
    redistribute_placed(op, dst.grid().comm(), placement_of(src.grid(), src.layout()), src.data(), src.ld(),
                        placement_of(dst.grid(), dst.layout()), dst.data(), dst.ld(), false, T(0));
}

std::string check_same_grid(const char* fn, const char* name, const Grid2D& g, const BlockCyclic& l,
                            const Grid2D& ref) {
    if (!g.same_as(ref)) return cat(fn, ": ", name, " lives on a different process grid");
    if (l.p() != g.p() || l.q() != g.q())
        return cat(fn, ": ", name, " has a layout for a ", l.p(), " x ", l.q(), " grid on a ", g.p(), " x ",
                   g.q(), " grid");
    return {};
}

template <class T>
std::string check_local(const char* fn, const char* name, const MatrixRef<T>& a) {
    const index_t m_loc = a.m_loc(), n_loc = a.n_loc();
    if (m_loc > 0 && n_loc > 0 && a.data() == nullptr)
        return cat(fn, ": ", name, " is a null pointer with ", m_loc, " x ", n_loc, " local elements");
    if (n_loc > 0 && a.ld() < std::max<index_t>(1, m_loc))
        return cat(fn, ": ", name, " has leading dimension ", a.ld(), " < local rows ", m_loc);
    return {};
}

std::uint64_t fingerprint(std::uint64_t h, const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;  // FNV-1a
    return h;
}

std::uint64_t fingerprint(std::uint64_t h, const BlockCyclic& l) {
    for (const Dist1D* d : {&l.rows, &l.cols}) {
        const std::int64_t v[5] = {d->n, d->nb, d->ib, d->src, d->nprocs};
        h = fingerprint(h, v, sizeof v);
    }
    return h;
}

#define CALA_INST(T)                                                                                    \
    template void redistribute_unchecked<T>(Op, const MatrixRef<T>&, const MatrixRef<T>&);              \
    template void redistribute_placed<T>(Op, const Comm&, const Placement&, const T*, index_t, const Placement&, \
                                         T*, index_t, bool, T);                                        \
    template std::string check_local<T>(const char*, const char*, const MatrixRef<T>&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace detail

template <class T>
void redistribute(Op op, const MatrixRef<T>& src, const MatrixRef<T>& dst) {
    using detail::cat;
    std::string err = detail::check_same_grid("redistribute", "src", src.grid(), src.layout(), dst.grid());
    if (err.empty()) err = detail::check_same_grid("redistribute", "dst", dst.grid(), dst.layout(), dst.grid());
    const index_t m = op == Op::N ? src.m() : src.n(), n = op == Op::N ? src.n() : src.m();
    if (err.empty() && (m != dst.m() || n != dst.n()))
        err = cat("redistribute: op(src) is ", m, " x ", n, " but dst is ", dst.m(), " x ", dst.n());
    if (err.empty()) err = detail::check_local("redistribute", "src", src);
    if (err.empty()) err = detail::check_local("redistribute", "dst", dst);
    std::uint64_t fp = detail::fingerprint(detail::fingerprint(1469598103934665603ull, src.layout()), dst.layout());
    fp = detail::fingerprint(fp, &op, sizeof op);
    dst.grid().comm().agree(err, fp, "redistribute");
    detail::redistribute_unchecked(op, src, dst);
}

namespace {

// gather's and scatter's own checks (root on every rank; A as redistribute checks it), agreed
// with one allreduce over the grid like every collective entry point: a root out of range, or
// different on one rank, is an error on every rank, not a hang.
template <class T>
std::string check_root(const char* fn, const MatrixRef<T>& a, int root) {
    const Grid2D& g = a.grid();
    if (root < 0 || root >= g.comm().size())
        return detail::cat(fn, ": root is ", root, ", not a rank of the grid's ", g.comm().size(), " ranks");
    std::string e = detail::check_same_grid(fn, "A", g, a.layout(), g);
    return e.empty() ? detail::check_local(fn, "A", a) : e;
}

template <class T>
std::uint64_t root_fingerprint(const MatrixRef<T>& a, int root) {
    return detail::fingerprint(detail::fingerprint(1469598103934665603ull, a.layout()), &root, sizeof root);
}

// The whole matrix in one block on root.
BlockCyclic whole_on(const Grid2D& g, index_t m, index_t n, int root) {
    const auto [rr, rc] = g.coords_of(root);
    return BlockCyclic(m, n, std::max<index_t>(m, 1), std::max<index_t>(n, 1), g.p(), g.q(), rr, rc);
}

}  // namespace

template <class T>
std::vector<T> gather(const MatrixRef<T>& a, int root) {
    const Grid2D& g = a.grid();
    const std::string err = check_root("gather", a, root);
    g.comm().agree(err, root_fingerprint(a, root), "gather");
    const index_t m = a.m(), n = a.n();
    DistMatrix<T> whole(g, whole_on(g, m, n, root));
    detail::redistribute_unchecked(Op::N, a, whole.view());
    if (g.comm().rank() != root) return {};
    return std::vector<T>(whole.data(), whole.data() + m * n);
}

template <class T>
void scatter(const T* global, index_t ldg, const MatrixRef<T>& a, int root) {
    using detail::cat;
    const Grid2D& g = a.grid();
    const index_t m = a.m(), n = a.n();
    const bool mine = g.comm().rank() == root;
    std::string err = check_root("scatter", a, root);
    if (err.empty() && mine && n > 0 && ldg < std::max<index_t>(1, m))
        err = cat("scatter: ldg is ", ldg, ", must be >= max(1, m = ", m, ") on the root");
    if (err.empty() && mine && m > 0 && n > 0 && global == nullptr)
        err = cat("scatter: global is a null pointer with ", m, " x ", n, " elements on the root");
    g.comm().agree(err, root_fingerprint(a, root), "scatter");
    const MatrixRef<T> src(g, whole_on(g, m, n, root), mine ? const_cast<T*>(global) : nullptr,
                           mine ? std::max<index_t>(ldg, 1) : 1);
    detail::redistribute_unchecked(Op::N, src, a);
}

#define CALA_INST(T)                                                                  \
    template void redistribute<T>(Op, const MatrixRef<T>&, const MatrixRef<T>&);      \
    template std::vector<T> gather<T>(const MatrixRef<T>&, int);                      \
    template void scatter<T>(const T*, index_t, const MatrixRef<T>&, int);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala

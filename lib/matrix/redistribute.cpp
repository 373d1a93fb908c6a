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

// Segments with the given source proc, grouped by destination proc (each group ascending).
std::vector<std::vector<Segment>> by_dst(const std::vector<Segment>& segs, int sproc, int ndst) {
    std::vector<std::vector<Segment>> out(static_cast<std::size_t>(ndst));
    for (const auto& s : segs)
        if (s.sproc == sproc) out[static_cast<std::size_t>(s.dproc)].push_back(s);
    return out;
}

// Segments with the given destination proc, grouped by source proc.
std::vector<std::vector<Segment>> by_src(const std::vector<Segment>& segs, int dproc, int nsrc) {
    std::vector<std::vector<Segment>> out(static_cast<std::size_t>(nsrc));
    for (const auto& s : segs)
        if (s.dproc == dproc) out[static_cast<std::size_t>(s.sproc)].push_back(s);
    return out;
}

template <class T>
T* pack(const MatrixRef<T>& src, const std::vector<Segment>& rs, const std::vector<Segment>& cs, T* out) {
    const auto& L = src.layout();
    for (const auto& c : cs) {
        const index_t lc0 = L.cols.to_local(c.g0);
        for (index_t j = 0; j < c.g1 - c.g0; ++j)
            for (const auto& r : rs) {
                const T* col = &src.local(L.rows.to_local(r.g0), lc0 + j);
                out = std::copy(col, col + (r.g1 - r.g0), out);
            }
    }
    return out;
}

template <class T>
const T* unpack(Op op, const MatrixRef<T>& dst, const std::vector<Segment>& rs, const std::vector<Segment>& cs,
                const T* in) {
    const auto& L = dst.layout();
    const bool conj = op == Op::C;
    for (const auto& c : cs) {
        for (index_t j = c.g0; j < c.g1; ++j)
            for (const auto& r : rs) {
                const index_t len = r.g1 - r.g0;
                if (op == Op::N) {
                    std::copy(in, in + len, &dst.local(L.rows.to_local(r.g0), L.cols.to_local(j)));
                } else {  // source (i, j) -> destination (j, i)
                    T* row = &dst.local(L.rows.to_local(j), L.cols.to_local(r.g0));
                    for (index_t i = 0; i < len; ++i) row[i * dst.ld()] = conj_if(in[i], conj);
                }
                in += len;
            }
    }
    return in;
}

}  // namespace

template <class T>
void redistribute_unchecked(Op op, const MatrixRef<T>& src, const MatrixRef<T>& dst) {
    const Grid2D& grid = dst.grid();
    const Comm& comm = grid.comm();
    const int p = grid.p(), q = grid.q(), r = grid.row(), c = grid.col();
    const RedistGeometry geo(op, src.layout(), dst.layout());
    const RedistCounts counts = redist_counts(geo, r, c);
    const int rd = geo.transposed ? q : p, cd = geo.transposed ? p : q;

    // Receive side first, so that every message has a posted receive.
    // Workspace: everything this rank sends (its own share included, unpacked from there) and
    // everything it receives from others. The cost model counts exactly these two buffers.
    const int me = r * q + c;
    std::int64_t recv_total = 0, send_total = 0;
    std::vector<std::int64_t> roff(counts.recv.size(), 0);
    for (int s = 0; s < p * q; ++s) {
        roff[s] = recv_total;
        if (s != me) recv_total += counts.recv[s];
    }
    for (auto n : counts.send) send_total += n;
    Buffer<T> rbuf(recv_total), sbuf(send_total);
    std::vector<Request> reqs;
    for (int s = 0; s < p * q; ++s)
        if (s != me && counts.recv[s] > 0)
            reqs.push_back(comm.irecv(rbuf.data() + roff[s], counts.recv[s], grid.rank_of(s / q, s % q), kRedistTag));

    // Pack per destination, in row-major destination order, and send.
    const auto rows_to = by_dst(geo.rows, r, rd), cols_to = by_dst(geo.cols, c, cd);
    std::vector<std::int64_t> soff(counts.send.size(), 0);
    {
        T* out = sbuf.data();
        for (int d = 0; d < p * q; ++d) {
            soff[d] = out - sbuf.data();
            const int dr = d / q, dc = d % q;
            const int x = geo.transposed ? dc : dr, y = geo.transposed ? dr : dc;
            if (counts.send[d] > 0) out = pack(src, rows_to[x], cols_to[y], out);
        }
    }
    for (int d = 0; d < p * q; ++d)
        if (d != me && counts.send[d] > 0)
            reqs.push_back(comm.isend(sbuf.data() + soff[d], counts.send[d], grid.rank_of(d / q, d % q), kRedistTag));

    // Unpack: my own part straight from the send buffer, the others as they arrive.
    const int x = geo.transposed ? c : r, y = geo.transposed ? r : c;
    const auto rows_from = by_src(geo.rows, x, p), cols_from = by_src(geo.cols, y, q);
    if (counts.send[me] > 0) unpack(op, dst, rows_from[r], cols_from[c], sbuf.data() + soff[me]);
    wait_all(reqs);
    for (int s = 0; s < p * q; ++s)
        if (s != me && counts.recv[s] > 0)
            unpack(op, dst, rows_from[s / q], cols_from[s % q], rbuf.data() + roff[s]);
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

template <class T>
std::vector<T> gather(const MatrixRef<T>& a, int root) {
    const Grid2D& g = a.grid();
    const auto [rr, rc] = g.coords_of(root);
    const index_t m = a.m(), n = a.n();
    DistMatrix<T> whole(g, BlockCyclic(m, n, std::max<index_t>(m, 1), std::max<index_t>(n, 1), g.p(), g.q(), rr, rc));
    redistribute(Op::N, a, whole.view());
    if (g.comm().rank() != root) return {};
    return std::vector<T>(whole.data(), whole.data() + m * n);
}

template <class T>
void scatter(const T* global, index_t ldg, const MatrixRef<T>& a, int root) {
    const Grid2D& g = a.grid();
    const auto [rr, rc] = g.coords_of(root);
    const index_t m = a.m(), n = a.n();
    const BlockCyclic whole(m, n, std::max<index_t>(m, 1), std::max<index_t>(n, 1), g.p(), g.q(), rr, rc);
    const bool mine = g.comm().rank() == root;
    MatrixRef<T> src(g, whole, mine ? const_cast<T*>(global) : nullptr, mine ? std::max<index_t>(ldg, 1) : 1);
    redistribute(Op::N, src, a);
}

#define CALA_INST(T)                                                                  \
    template void redistribute<T>(Op, const MatrixRef<T>&, const MatrixRef<T>&);      \
    template std::vector<T> gather<T>(const MatrixRef<T>&, int);                      \
    template void scatter<T>(const T*, index_t, const MatrixRef<T>&, int);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala

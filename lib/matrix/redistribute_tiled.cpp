// redistribute between block-cyclic and table-placed (TiledMatrix) matrices: one pass packs
// every rectangle this rank sends, per destination, in the order of tiled_plan.hpp; isend/irecv;
// one pass unpacks.

#include <algorithm>
#include <utility>
#include <vector>

#include "cala/tiled_matrix.hpp"
#include "core/check.hpp"
#include "core/workspace.hpp"
#include "matrix/redistribute_impl.hpp"
#include "matrix/tiled_plan.hpp"

namespace cala {

namespace detail {

namespace {

constexpr int kTiledTag = 7302;

// Element (gi, gj) of tile (i, j) on this rank, and the leading dimension there.
template <class T>
using Access = std::function<std::pair<T*, index_t>(index_t, index_t, index_t, index_t)>;

template <class T>
Access<T> access(const MatrixRef<T>& a) {
    return [a](index_t, index_t, index_t gi, index_t gj) {
        const BlockCyclic& l = a.layout();
        return std::pair<T*, index_t>{a.data() + l.rows.to_local(gi) + l.cols.to_local(gj) * a.ld(), a.ld()};
    };
}

template <class T>
Access<T> access(const TiledMatrix<T>& a) {
    return [&a](index_t i, index_t j, index_t gi, index_t gj) {
        const TileLayout& l = a.layout();
        const index_t ld = l.tile_rows(i);
        return std::pair<T*, index_t>{a.tile(i, j) + (gi - i * l.mb()) + (gj - j * l.nb()) * ld, ld};
    };
}

template <class T>
void exchange(const Comm& comm, const TileMap& src, const Access<T>& sacc, const TileMap& dst, const Access<T>& dacc) {
    const int me = comm.rank(), P = comm.size();
    const auto rp = pieces(src.rows, dst.rows), cp = pieces(src.cols, dst.cols);
    const TiledCounts cnt = tiled_counts(src, dst, me, P);
    std::vector<std::int64_t> soff(static_cast<std::size_t>(P), 0), roff(static_cast<std::size_t>(P), 0);
    std::int64_t stot = 0, rtot = 0;
    for (std::size_t r = 0; r < soff.size(); ++r) {
        soff[r] = stot, stot += cnt.send[r];
        roff[r] = rtot;
        if (static_cast<int>(r) != me) rtot += cnt.recv[r];
    }
    Buffer<T> sbuf(stot), rbuf(rtot);
    std::vector<Request> reqs;
    for (int s = 0; s < P; ++s)
        if (s != me && cnt.recv[static_cast<std::size_t>(s)] > 0)
            reqs.push_back(comm.irecv(rbuf.data() + roff[static_cast<std::size_t>(s)], cnt.recv[static_cast<std::size_t>(s)], s, kTiledTag));

    auto cur = soff;
    for_each_rect(src, dst, rp, cp, [&](const Piece& r, const Piece& c, int s, int d) {
        if (s != me) return;
        const auto [p, ld] = sacc(r.sb, c.sb, r.g0, c.g0);
        T* out = sbuf.data() + cur[static_cast<std::size_t>(d)];
        const index_t len = r.g1 - r.g0;
        for (index_t k = 0; k < c.g1 - c.g0; ++k) out = std::copy(p + k * ld, p + k * ld + len, out);
        cur[static_cast<std::size_t>(d)] = out - sbuf.data();
    });
    for (int d = 0; d < P; ++d)
        if (d != me && cnt.send[static_cast<std::size_t>(d)] > 0)
            reqs.push_back(comm.isend(sbuf.data() + soff[static_cast<std::size_t>(d)], cnt.send[static_cast<std::size_t>(d)], d, kTiledTag));
    wait_all(reqs);

    // From each source in the same order: my own share from the send buffer.
    std::vector<const T*> in(static_cast<std::size_t>(P));
    for (int s = 0; s < P; ++s)
        in[static_cast<std::size_t>(s)] = s == me ? sbuf.data() + soff[static_cast<std::size_t>(me)] : rbuf.data() + roff[static_cast<std::size_t>(s)];
    for_each_rect(src, dst, rp, cp, [&](const Piece& r, const Piece& c, int s, int d) {
        if (d != me) return;
        const auto [p, ld] = dacc(r.db, c.db, r.g0, c.g0);
        const T*& from = in[static_cast<std::size_t>(s)];
        const index_t len = r.g1 - r.g0;
        for (index_t k = 0; k < c.g1 - c.g0; ++k, from += len) std::copy(from, from + len, p + k * ld);
    });
}

bool same_comm(const Comm& a, const Comm& b) {
    int result = MPI_UNEQUAL;
    CALA_CHECK_MPI(MPI_Comm_compare(a.get(), b.get(), &result));
    return result == MPI_IDENT || result == MPI_CONGRUENT;
}

// Shapes and communicators; every rank runs the same checks, then agrees.
std::string check_pair(index_t sm, index_t sn, const Grid2D& sg, index_t dm, index_t dn, const Grid2D& dg) {
    if (!same_comm(sg.comm(), dg.comm())) return "redistribute: src and dst live on different communicators";
    if (sm != dm || sn != dn) return cat("redistribute: src is ", sm, " x ", sn, " but dst is ", dm, " x ", dn);
    return {};
}

}  // namespace

std::uint64_t fingerprint(std::uint64_t h, const TileLayout& l) {
    const std::int64_t v[8] = {l.m(), l.n(), l.mb(), l.nb(), static_cast<std::int64_t>(l.role()),
                               static_cast<std::int64_t>(l.symmetric().kind()), l.symmetric().param(), l.nprocs()};
    return detail::fingerprint(h, v, sizeof v);
}

}  // namespace detail

template <class T>
void redistribute(const MatrixRef<T>& src, const TiledMatrix<T>& dst) {
    std::string err = detail::check_pair(src.m(), src.n(), src.grid(), dst.m(), dst.n(), dst.grid());
    if (err.empty()) err = detail::check_same_grid("redistribute", "src", src.grid(), src.layout(), src.grid());
    if (err.empty()) err = detail::check_local("redistribute", "src", src);
    const auto fp = detail::fingerprint(detail::fingerprint(1469598103934665603ull, src.layout()), dst.layout());
    dst.grid().comm().agree(err, fp, "redistribute");
    detail::exchange<T>(dst.grid().comm(), detail::tile_map(src.layout(), src.grid().order()), detail::access(src),
                        detail::tile_map(dst.layout()), detail::access(dst));
}

template <class T>
void redistribute(const TiledMatrix<T>& src, const MatrixRef<T>& dst) {
    std::string err = detail::check_pair(src.m(), src.n(), src.grid(), dst.m(), dst.n(), dst.grid());
    if (err.empty()) err = detail::check_same_grid("redistribute", "dst", dst.grid(), dst.layout(), dst.grid());
    if (err.empty()) err = detail::check_local("redistribute", "dst", dst);
    const auto fp = detail::fingerprint(detail::fingerprint(1469598103934665603ull, src.layout()), dst.layout());
    dst.grid().comm().agree(err, fp, "redistribute");
    detail::exchange<T>(dst.grid().comm(), detail::tile_map(src.layout()), detail::access(src),
                        detail::tile_map(dst.layout(), dst.grid().order()), detail::access(dst));
}

template <class T>
void redistribute(const TiledMatrix<T>& src, const TiledMatrix<T>& dst) {
    const std::string err = detail::check_pair(src.m(), src.n(), src.grid(), dst.m(), dst.n(), dst.grid());
    const auto fp = detail::fingerprint(detail::fingerprint(1469598103934665603ull, src.layout()), dst.layout());
    dst.grid().comm().agree(err, fp, "redistribute");
    detail::exchange<T>(dst.grid().comm(), detail::tile_map(src.layout()), detail::access(src),
                        detail::tile_map(dst.layout()), detail::access(dst));
}

#define CALA_INST(T)                                                              \
    template void redistribute<T>(const MatrixRef<T>&, const TiledMatrix<T>&);    \
    template void redistribute<T>(const TiledMatrix<T>&, const MatrixRef<T>&);    \
    template void redistribute<T>(const TiledMatrix<T>&, const TiledMatrix<T>&);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala

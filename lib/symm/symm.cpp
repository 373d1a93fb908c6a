// cala::symm / cala::hemm entry points: argument checks on every rank, agreement, then the
// stationary-A engine on the geometry of A's layout.

#include "cala/symm.hpp"

#include "core/check.hpp"
#include "matrix/redistribute_impl.hpp"
#include "matrix/tiled_plan.hpp"
#include "symm/engine.hpp"

namespace cala {

namespace {

using detail::cat;

template <class T>
std::uint64_t scalars_fp(const char* fn, Side side, Uplo uplo, T alpha, T beta) {
    std::uint64_t h = detail::fingerprint(1469598103934665603ull, fn, std::char_traits<char>::length(fn));
    const int v[2] = {static_cast<int>(side), static_cast<int>(uplo)};
    h = detail::fingerprint(h, v, sizeof v);
    h = detail::fingerprint(h, &alpha, sizeof alpha);
    return detail::fingerprint(h, &beta, sizeof beta);
}

template <class T>
std::string check_2dbc(const char* fn, Side side, const MatrixRef<T>& a, const MatrixRef<T>& b, const MatrixRef<T>& c) {
    std::string e = detail::check_same_grid(fn, "A", a.grid(), a.layout(), c.grid());
    if (e.empty()) e = detail::check_same_grid(fn, "B", b.grid(), b.layout(), c.grid());
    if (e.empty()) e = detail::check_same_grid(fn, "C", c.grid(), c.layout(), c.grid());
    if (!e.empty()) return e;
    const BlockCyclic &al = a.layout(), &bl = b.layout(), &cl = c.layout();
    if (a.m() != a.n()) return cat(fn, ": A is ", a.m(), " x ", a.n(), ", must be square");
    if (al.rows.nb != al.cols.nb || al.rows.ib != al.cols.ib)
        return cat(fn, ": A's tiles are not square (row blocks ", al.rows.nb, " first ", al.rows.ib, ", column blocks ",
                   al.cols.nb, " first ", al.cols.ib, ")");
    const index_t bm = side == Side::Left ? b.m() : b.n();
    if (bm != a.m())
        return cat(fn, ": B is ", b.m(), " x ", b.n(), ", its ", side == Side::Left ? "rows" : "columns", " must match A's ",
                   a.m());
    if (!(cl == bl)) return cat(fn, ": C's layout differs from B's (", c.m(), " x ", c.n(), " vs ", b.m(), " x ", b.n(), ")");
    const Dist1D& bd = side == Side::Left ? bl.rows : bl.cols;
    const Dist1D& ad = side == Side::Left ? al.rows : al.cols;
    if (!(bd == ad))
        return cat(fn, ": B's ", side == Side::Left ? "rows" : "columns", " are not distributed like A's (block ", bd.nb,
                   " from process ", bd.src, " vs ", ad.nb, " from ", ad.src, "); redistribute B and C first");
    for (const auto& [name, x] : {std::pair{"A", &a}, std::pair{"B", &b}, std::pair{"C", &c}})
        if (e = detail::check_local(fn, name, *x); !e.empty()) return e;
    return {};
}

template <class T>
detail::TileAt<T> tiles_of(const MatrixRef<T>& x) {
    return [x](index_t i, index_t j) {
        const BlockCyclic& l = x.layout();
        return std::pair<T*, index_t>{
            x.data() + l.rows.to_local(l.rows.block_start(i)) + l.cols.to_local(l.cols.block_start(j)) * x.ld(), x.ld()};
    };
}

template <class T>
void symm_2dbc(const char* fn, bool herm, Side side, Uplo uplo, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b,
               T beta, const MatrixRef<T>& c) {
    const std::string err = check_2dbc(fn, side, a, b, c);
    std::uint64_t fp = scalars_fp(fn, side, uplo, alpha, beta);
    for (const auto* x : {&a, &b, &c}) fp = detail::fingerprint(fp, x->layout());
    c.grid().comm().agree(err, fp, fn);
    if (c.m() == 0 || c.n() == 0) return;
    const auto g = detail::geometry_2dbc(side, uplo == Uplo::Lower, a.layout(), b.layout(), c.grid().order());
    auto tb = tiles_of(b), tc = tiles_of(c);
    if (side == Side::Right) {  // the engine addresses B and C by (A block, n block)
        tb = [f = tb](index_t l, index_t x) { return f(x, l); };
        tc = [f = tc](index_t l, index_t x) { return f(x, l); };
    }
    detail::symm_engine<T>(c.grid().comm(), g, side, herm && is_complex_v<T>, alpha, tiles_of(a), tb, beta, tc);
}

template <class T>
detail::TileAt<T> tiles_of(const TiledMatrix<T>& x, bool swap) {
    return [&x, swap](index_t i, index_t j) {
        if (swap) std::swap(i, j);
        return std::pair<T*, index_t>{x.tile(i, j), x.layout().tile_rows(i)};
    };
}

bool same_comm(const Comm& a, const Comm& b) {
    int result = MPI_UNEQUAL;
    CALA_CHECK_MPI(MPI_Comm_compare(a.get(), b.get(), &result));
    return result == MPI_IDENT || result == MPI_CONGRUENT;
}

template <class T>
void symm_tiled(const char* fn, bool herm, Side side, Uplo uplo, T alpha, const TiledMatrix<T>& a,
                const TiledMatrix<T>& b, T beta, const TiledMatrix<T>& c) {
    std::string err;
    const auto role = side == Side::Left ? TileLayout::Role::Left : TileLayout::Role::Right;
    if (!same_comm(a.grid().comm(), c.grid().comm()) || !same_comm(b.grid().comm(), c.grid().comm()))
        err = cat(fn, ": A, B and C live on different communicators");
    else if (a.layout().role() != TileLayout::Role::Lower)
        err = cat(fn, ": A's layout is not the lower half of a symmetric layout (TileLayout::lower)");
    else if (uplo == Uplo::Upper)
        err = cat(fn, ": uplo is Upper but A's layout (", a.layout().symmetric().describe(),
                  ") stores the lower half only");
    else if (b.layout().role() != role || !(b.layout().symmetric() == a.layout().symmetric()))
        err = cat(fn, ": B's layout is not TileLayout::paired(A's layout, ", side == Side::Left ? "Left" : "Right",
                  ", n, nb)");
    else if (!(c.layout() == b.layout()))
        err = cat(fn, ": C's layout differs from B's (", c.m(), " x ", c.n(), " vs ", b.m(), " x ", b.n(), ")");
    std::uint64_t fp = scalars_fp(fn, side, uplo, alpha, beta);
    if (err.empty())
        for (const auto* x : {&a, &b, &c}) fp = detail::fingerprint(fp, x->layout());
    c.grid().comm().agree(err, fp, fn);
    if (c.m() == 0 || c.n() == 0) return;
    const auto g = detail::geometry_tiled(side, a.layout(), b.layout());
    detail::symm_engine<T>(c.grid().comm(), g, side, herm && is_complex_v<T>, alpha, tiles_of(a, false),
                           tiles_of(b, side == Side::Right), beta, tiles_of(c, side == Side::Right));
}

}  // namespace

template <class T>
void symm(Side side, Uplo uplo, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta, const MatrixRef<T>& c) {
    symm_2dbc("symm", false, side, uplo, alpha, a, b, beta, c);
}
template <class T>
void hemm(Side side, Uplo uplo, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta, const MatrixRef<T>& c) {
    symm_2dbc("hemm", true, side, uplo, alpha, a, b, beta, c);
}
template <class T>
void symm(Side side, Uplo uplo, T alpha, const TiledMatrix<T>& a, const TiledMatrix<T>& b, T beta,
          const TiledMatrix<T>& c) {
    symm_tiled("symm", false, side, uplo, alpha, a, b, beta, c);
}
template <class T>
void hemm(Side side, Uplo uplo, T alpha, const TiledMatrix<T>& a, const TiledMatrix<T>& b, T beta,
          const TiledMatrix<T>& c) {
    symm_tiled("hemm", true, side, uplo, alpha, a, b, beta, c);
}

Cost symm_cost(Side side, Uplo uplo, const BlockCyclic& a, const BlockCyclic& b, GridOrder order, int rank,
               bool is_complex) {
    if (a.m() == 0 || (side == Side::Left ? b.n() : b.m()) == 0) return {};
    return detail::symm_engine_cost(detail::geometry_2dbc(side, uplo == Uplo::Lower, a, b, order), rank, is_complex);
}

Cost symm_cost(Side side, const TileLayout& a, const TileLayout& b, int rank, bool is_complex) {
    if (a.m() == 0 || b.m() == 0 || b.n() == 0) return {};
    return detail::symm_engine_cost(detail::geometry_tiled(side, a, b), rank, is_complex);
}

#define CALA_INST(T)                                                                                               \
    template void symm<T>(Side, Uplo, T, const MatrixRef<T>&, const MatrixRef<T>&, T, const MatrixRef<T>&);        \
    template void hemm<T>(Side, Uplo, T, const MatrixRef<T>&, const MatrixRef<T>&, T, const MatrixRef<T>&);        \
    template void symm<T>(Side, Uplo, T, const TiledMatrix<T>&, const TiledMatrix<T>&, T, const TiledMatrix<T>&);  \
    template void hemm<T>(Side, Uplo, T, const TiledMatrix<T>&, const TiledMatrix<T>&, T, const TiledMatrix<T>&);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala

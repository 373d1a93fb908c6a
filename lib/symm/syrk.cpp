// cala::syrk / cala::herk: C := alpha·A·Aᵀ + beta·C (Aᴴ for herk), C symmetric with one triangle
// stored, stationary-C.
//
// cala::syrk -> checks, agreement -> geometry of C (2DBC or SBC/TBC) -> broadcast_rows (A's block
//   row i over the row set of i: the ranks holding C's block row and column i) -> kernels::gemm
//   on C's own tiles. No reduction: each tile of C is finished where it lives.
//
//   TBC c = 2, block row i over row set {0, 2, 4}: every tile C(i, j) or C(j, i) of those three
//   ranks needs A(i, :), and no other rank does: (s − 1)·nb·k words received per block row.

#include "cala/symm.hpp"
#include "core/check.hpp"
#include "kernels/blas.hpp"
#include "matrix/redistribute_impl.hpp"
#include "matrix/tiled_plan.hpp"
#include "symm/operands.hpp"

namespace cala {

namespace detail {

namespace {

// The stored triangle of a diagonal tile := t + beta·(itself) (herk: real diagonal).
template <class T>
void update_diagonal(bool lower, bool herm, index_t nb, const T* t, T beta, T* c, index_t ldc) {
    for (index_t j = 0; j < nb; ++j)
        for (index_t i = lower ? j : 0; i < (lower ? nb : j + 1); ++i) {
            T v = t[i + j * nb] + (beta == T(0) ? T(0) : beta * c[i + j * ldc]);
            if (herm && i == j) v = T(std::real(v));
            c[i + j * ldc] = v;
        }
}

}  // namespace

template <class T>
void syrk_engine(const Comm& comm, const SymmGeometry& g, bool herm, T alpha, const TileAt<T>& a, T beta,
                 const TileAt<T>& c) {
    const int me = comm.rank();
    const index_t k = g.ncut.n;
    const Op op = herm ? Op::C : Op::T;
    std::vector<index_t> pos;
    Buffer<T> bb;
    if (alpha != T(0) && k > 0) bb = broadcast_rows(comm, g, Side::Left, op, a, pos);
    Buffer<T> tmp;
    for (index_t j = 0; j < g.nblk; ++j)
        for (index_t i = g.lower ? j : 0; i < (g.lower ? g.nblk : j + 1); ++i) {
            if (g.owner_a(i, j) != me) continue;
            const auto [cp, ldc] = c(i, j);
            const index_t bi = g.bsize(i), bj = g.bsize(j);
            if (i != j) {
                if (bb.size() == 0) kernels::scale(bi, bj, beta, cp, ldc);
                else kernels::gemm(Op::N, op, bi, bj, k, alpha, bb.data() + pos[static_cast<std::size_t>(i)], bi,
                                   bb.data() + pos[static_cast<std::size_t>(j)], bj, beta, cp, ldc);
                continue;
            }
            if (tmp.size() < bi * bi) tmp = Buffer<T>(bi * bi);
            if (bb.size() == 0) std::fill(tmp.data(), tmp.data() + bi * bi, T(0));
            else kernels::gemm(Op::N, op, bi, bi, k, alpha, bb.data() + pos[static_cast<std::size_t>(i)], bi,
                               bb.data() + pos[static_cast<std::size_t>(i)], bi, T(0), tmp.data(), bi);
            update_diagonal(g.lower, herm, bi, tmp.data(), beta, cp, ldc);
        }
}

Cost syrk_engine_cost(const SymmGeometry& g, int rank, bool is_complex) {
    Cost cost = g.ncut.n > 0 ? broadcast_rows_cost(g, rank) : Cost{};
    for (index_t j = 0; j < g.nblk; ++j)
        for (index_t i = g.lower ? j : 0; i < (g.lower ? g.nblk : j + 1); ++i)
            if (g.owner_a(i, j) == rank)
                cost.flops += 2.0 * double(g.bsize(i)) * double(g.bsize(j)) * double(g.ncut.n) * (is_complex ? 4.0 : 1.0);
    return cost;
}

}  // namespace detail

namespace {

using detail::cat;

using detail::same_comm;
using detail::tiles_of;

template <class T>
std::uint64_t syrk_fp(const char* fn, Uplo uplo, T alpha, T beta) {
    std::uint64_t h = detail::fingerprint(1469598103934665603ull, fn, std::char_traits<char>::length(fn));
    h = detail::fingerprint(h, &uplo, sizeof uplo);
    h = detail::fingerprint(h, &alpha, sizeof alpha);
    return detail::fingerprint(h, &beta, sizeof beta);
}

template <class T>
void syrk_2dbc(const char* fn, bool herm, Uplo uplo, T alpha, const MatrixRef<T>& a, T beta, const MatrixRef<T>& c) {
    std::string e = detail::check_same_grid(fn, "A", a.grid(), a.layout(), c.grid());
    if (e.empty()) e = detail::check_same_grid(fn, "C", c.grid(), c.layout(), c.grid());
    const BlockCyclic &al = a.layout(), &cl = c.layout();
    if (e.empty() && c.m() != c.n()) e = cat(fn, ": C is ", c.m(), " x ", c.n(), ", must be square");
    if (e.empty() && (cl.rows.nb != cl.cols.nb || cl.rows.ib != cl.cols.ib))
        e = cat(fn, ": C's tiles are not square (row blocks ", cl.rows.nb, ", column blocks ", cl.cols.nb, ")");
    if (e.empty() && !(al.rows == cl.rows))
        e = cat(fn, ": A's rows are not distributed like C's (A is ", a.m(), " x ", a.n(), " in ", al.rows.nb,
                " blocks from process ", al.rows.src, ", C ", c.m(), " in ", cl.rows.nb, " from ", cl.rows.src,
                "); redistribute A first");
    if (e.empty()) e = detail::check_local(fn, "A", a);
    if (e.empty()) e = detail::check_local(fn, "C", c);
    std::uint64_t fp = syrk_fp(fn, uplo, alpha, beta);
    fp = detail::fingerprint(detail::fingerprint(fp, al), cl);
    c.grid().comm().agree(e, fp, fn);
    if (c.m() == 0) return;
    const auto g = detail::geometry_2dbc(Side::Left, uplo == Uplo::Lower, cl, al, c.grid().order());
    detail::syrk_engine<T>(c.grid().comm(), g, herm && is_complex_v<T>, alpha, tiles_of(a), beta, tiles_of(c));
}

template <class T>
void syrk_tiled(const char* fn, bool herm, Uplo uplo, T alpha, const TiledMatrix<T>& a, T beta, const TiledMatrix<T>& c) {
    std::string e;
    if (!same_comm(a.grid().comm(), c.grid().comm())) e = cat(fn, ": A and C live on different communicators");
    else if (c.layout().role() != TileLayout::Role::Lower)
        e = cat(fn, ": C's layout is not the lower half of a symmetric layout (TileLayout::lower)");
    else if (uplo == Uplo::Upper)
        e = cat(fn, ": uplo is Upper but C's layout (", c.layout().symmetric().describe(), ") stores the lower half only");
    else if (a.layout().role() != TileLayout::Role::Left || !(a.layout().symmetric() == c.layout().symmetric()))
        e = cat(fn, ": A's layout is not TileLayout::paired(C's layout, Left, k, nb)");
    std::uint64_t fp = syrk_fp(fn, uplo, alpha, beta);
    if (e.empty()) fp = detail::fingerprint(detail::fingerprint(fp, a.layout()), c.layout());
    c.grid().comm().agree(e, fp, fn);
    if (c.m() == 0) return;
    const auto g = detail::geometry_tiled(Side::Left, c.layout(), a.layout());
    detail::syrk_engine<T>(c.grid().comm(), g, herm && is_complex_v<T>, alpha, tiles_of(a), beta, tiles_of(c));
}

}  // namespace

template <class T>
void syrk(Uplo uplo, T alpha, const MatrixRef<T>& a, T beta, const MatrixRef<T>& c) {
    syrk_2dbc("syrk", false, uplo, alpha, a, beta, c);
}
template <class T>
void herk(Uplo uplo, real_t<T> alpha, const MatrixRef<T>& a, real_t<T> beta, const MatrixRef<T>& c) {
    syrk_2dbc("herk", true, uplo, T(alpha), a, T(beta), c);
}
template <class T>
void syrk(Uplo uplo, T alpha, const TiledMatrix<T>& a, T beta, const TiledMatrix<T>& c) {
    syrk_tiled("syrk", false, uplo, alpha, a, beta, c);
}
template <class T>
void herk(Uplo uplo, real_t<T> alpha, const TiledMatrix<T>& a, real_t<T> beta, const TiledMatrix<T>& c) {
    syrk_tiled("herk", true, uplo, T(alpha), a, T(beta), c);
}

Cost syrk_cost(Uplo uplo, const BlockCyclic& a, const BlockCyclic& c, GridOrder order, int rank, bool is_complex) {
    if (c.m() == 0) return {};
    return detail::syrk_engine_cost(detail::geometry_2dbc(Side::Left, uplo == Uplo::Lower, c, a, order), rank, is_complex);
}

Cost syrk_cost(const TileLayout& a, const TileLayout& c, int rank, bool is_complex) {
    if (c.m() == 0) return {};
    return detail::syrk_engine_cost(detail::geometry_tiled(Side::Left, c, a), rank, is_complex);
}

#define CALA_INST(T)                                                                                        \
    template void syrk<T>(Uplo, T, const MatrixRef<T>&, T, const MatrixRef<T>&);                            \
    template void herk<T>(Uplo, real_t<T>, const MatrixRef<T>&, real_t<T>, const MatrixRef<T>&);            \
    template void syrk<T>(Uplo, T, const TiledMatrix<T>&, T, const TiledMatrix<T>&);                        \
    template void herk<T>(Uplo, real_t<T>, const TiledMatrix<T>&, real_t<T>, const TiledMatrix<T>&);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala

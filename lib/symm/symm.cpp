// cala::symm / cala::hemm entry points: argument checks on every rank, agreement, then the
// stationary-A engine on the geometry of A's layout.

#include "cala/symm.hpp"

#include "symm/operands.hpp"

namespace cala {

namespace {

// One entry for both kinds of operands (MatrixRef: 2DBC; TiledMatrix: SBC/TBC).
template <class T, class M>
void symm_2d(const char* fn, bool herm, Side side, Uplo uplo, T alpha, const M& a, const M& b, T beta, const M& c) {
    const std::string err = detail::symm_check(fn, side, uplo, a, b, c);
    std::uint64_t fp = detail::symm_scalars_fp(fn, side, uplo, alpha, beta);
    if (err.empty())
        for (const auto* x : {&a, &b, &c}) fp = detail::fingerprint(fp, x->layout());
    c.grid().comm().agree(err, fp, fn);
    if (c.m() == 0 || c.n() == 0) return;
    const auto o = detail::symm_operands(side, uplo, a, b, c);
    detail::symm_engine<T>(c.grid().comm(), o.g, side, herm && is_complex_v<T>, alpha, o.a, o.b, beta, o.c);
}

}  // namespace

template <class T>
void symm(Side side, Uplo uplo, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta, const MatrixRef<T>& c) {
    symm_2d("symm", false, side, uplo, alpha, a, b, beta, c);
}
template <class T>
void hemm(Side side, Uplo uplo, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta, const MatrixRef<T>& c) {
    symm_2d("hemm", true, side, uplo, alpha, a, b, beta, c);
}
template <class T>
void symm(Side side, Uplo uplo, T alpha, const TiledMatrix<T>& a, const TiledMatrix<T>& b, T beta,
          const TiledMatrix<T>& c) {
    symm_2d("symm", false, side, uplo, alpha, a, b, beta, c);
}
template <class T>
void hemm(Side side, Uplo uplo, T alpha, const TiledMatrix<T>& a, const TiledMatrix<T>& b, T beta,
          const TiledMatrix<T>& c) {
    symm_2d("hemm", true, side, uplo, alpha, a, b, beta, c);
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

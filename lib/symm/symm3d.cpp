// cala::symm / cala::hemm with s slices (3D): A replicated along the fibers of a p x q x s grid,
// B and C split by columns across the layers, the 2D stationary-A engine on each layer.
//
// cala::symm(.., slices) -> checks (layer, then all ranks) -> replicate_a (one ibcast per fiber
//   of each rank's stored tiles of A, from layer 0) -> symm_engine on the layer's communicator
//   (engine.cpp) -> kernels::gemm
//
//   2 slices of SBC r = 2 on 4 ranks, B = [B_0 B_1] by columns:
//     fiber {0, 2}: rank 0's tiles of A -> rank 2;  fiber {1, 3}: rank 1's -> rank 3
//     layer 0 (ranks 0, 1): C_0 := alpha·A·B_0 + beta·C_0;  layer 1 (ranks 2, 3): C_1 likewise

#include "symm/operands.hpp"

#include "core/workspace.hpp"
#include "kernels/blas.hpp"

namespace cala {

namespace {

using detail::Buffer;
using detail::cat;

// Calls f(i, j, at) for each stored tile of A on layer rank `rank`, at its offset in the packed
// buffer; returns the buffer's length.
template <class F>
index_t each_stored_tile(const detail::SymmGeometry& g, int rank, F&& f) {
    index_t at = 0;
    for (index_t j = 0; j < g.nblk; ++j)
        for (index_t i = g.lower ? j : 0; i < (g.lower ? g.nblk : j + 1); ++i)
            if (g.owner_a(i, j) == rank) f(i, j, at), at += g.bsize(i) * g.bsize(j);
    return at;
}

// Layer 0's stored tiles of A into the same tiles of the other layers (fiber rank == layer).
template <class T>
void replicate_a(const Comm& fiber, const detail::SymmGeometry& g, int me, const detail::TileAt<T>& a) {
    const index_t w = each_stored_tile(g, me, [](index_t, index_t, index_t) {});
    if (fiber.size() == 1 || w == 0) return;
    Buffer<T> buf(w);
    const bool root = fiber.rank() == 0;
    if (root)
        each_stored_tile(g, me, [&](index_t i, index_t j, index_t at) {
            const auto [ap, lda] = a(i, j);
            kernels::copy(Op::N, g.bsize(i), g.bsize(j), ap, lda, buf.data() + at, g.bsize(i));
        });
    Request r[1] = {fiber.ibcast(buf.data(), w, 0)};
    wait_all(r);
    if (!root)
        each_stored_tile(g, me, [&](index_t i, index_t j, index_t at) {
            const auto [ap, lda] = a(i, j);
            kernels::copy(Op::N, g.bsize(i), g.bsize(j), buf.data() + at, g.bsize(i), ap, lda);
        });
}

Cost replicate_a_cost(const detail::SymmGeometry& g, int slices, int layer, int layer_rank) {
    const index_t w = each_stored_tile(g, layer_rank, [](index_t, index_t, index_t) {});
    if (slices == 1 || w == 0) return {};
    return {.words = w, .words_recv = layer == 0 ? 0 : w, .msgs = 1};
}

Cost plus(Cost x, const Cost& y) {
    x.words += y.words, x.words_recv += y.words_recv, x.msgs += y.msgs, x.flops += y.flops;
    x.extra_bytes = std::max(x.extra_bytes, y.extra_bytes);
    return x;
}

template <class T, class M>
void symm_3d(const char* fn, bool herm, Side side, Uplo uplo, T alpha, const M& a, const M& b, T beta, const M& c,
             const Grid3D& slices, const SymmOptions& opts) {
    const int size = slices.comm().size(), used = slices.p() * slices.q() * slices.c();
    std::string err;
    if (used != size)
        err = cat(fn, ": slices is a ", slices.p(), " x ", slices.q(), " x ", slices.c(), " grid that leaves ",
                  size - used, " of the ", size, " ranks idle; every rank must hold a slice (see symm_slices)");
    else if (!detail::same_comm(c.grid().comm(), slices.layer_grid().comm()))
        err = cat(fn, ": C does not live on this rank's layer of slices (layer ", slices.layer(), ")");
    if (err.empty()) err = detail::symm_check(fn, side, uplo, a, b, c);
    // Within a layer every operand agrees; across layers A's layout and the scalars do (n_h may differ).
    std::uint64_t fp = detail::symm_scalars_fp(fn, side, uplo, alpha, beta);
    const int shape[4] = {slices.p(), slices.q(), slices.c(), opts.replicate_a ? 1 : 0};
    fp = detail::fingerprint(fp, shape, sizeof shape);
    if (err.empty()) fp = detail::fingerprint(fp, a.layout());
    if (used == size) {  // every rank of every layer takes part, whatever its own verdict
        std::uint64_t fl = fp;
        if (err.empty())
            for (const auto* x : {&b, &c}) fl = detail::fingerprint(fl, x->layout());
        try {
            slices.layer_grid().comm().agree(err, fl, fn);
        } catch (const Error& e) {
            err = e.what();
        }
    }
    slices.comm().agree(err, fp, fn);
    if (a.m() == 0) return;
    const auto o = detail::symm_operands(side, uplo, a, b, c);
    if (opts.replicate_a && alpha != T(0)) replicate_a(slices.fiber_comm(), o.g, c.grid().comm().rank(), o.a);
    if (c.m() == 0 || c.n() == 0) return;
    detail::symm_engine<T>(c.grid().comm(), o.g, side, herm && is_complex_v<T>, alpha, o.a, o.b, beta, o.c);
}

}  // namespace

Grid3D symm_slices(const Comm& comm, int slices) {
    std::string err;
    if (slices < 1 || comm.size() % slices != 0)
        err = cat("symm_slices: slices is ", slices, ", which does not divide the ", comm.size(), " ranks");
    comm.agree(err, static_cast<std::uint64_t>(static_cast<std::uint32_t>(slices)), "symm_slices");
    return Grid3D(comm, 1, comm.size() / slices, slices);
}

template <class T>
void symm(Side side, Uplo uplo, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta, const MatrixRef<T>& c,
          const Grid3D& slices, const SymmOptions& opts) {
    symm_3d("symm", false, side, uplo, alpha, a, b, beta, c, slices, opts);
}
template <class T>
void hemm(Side side, Uplo uplo, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta, const MatrixRef<T>& c,
          const Grid3D& slices, const SymmOptions& opts) {
    symm_3d("hemm", true, side, uplo, alpha, a, b, beta, c, slices, opts);
}
template <class T>
void symm(Side side, Uplo uplo, T alpha, const TiledMatrix<T>& a, const TiledMatrix<T>& b, T beta,
          const TiledMatrix<T>& c, const Grid3D& slices, const SymmOptions& opts) {
    symm_3d("symm", false, side, uplo, alpha, a, b, beta, c, slices, opts);
}
template <class T>
void hemm(Side side, Uplo uplo, T alpha, const TiledMatrix<T>& a, const TiledMatrix<T>& b, T beta,
          const TiledMatrix<T>& c, const Grid3D& slices, const SymmOptions& opts) {
    symm_3d("hemm", true, side, uplo, alpha, a, b, beta, c, slices, opts);
}

Cost symm3d_cost(Side side, Uplo uplo, const BlockCyclic& a, const BlockCyclic& b, GridOrder order, int slices,
                 int layer, int layer_rank, bool is_complex, const SymmOptions& opts) {
    if (a.m() == 0) return {};
    const Cost rep = opts.replicate_a
                         ? replicate_a_cost(detail::geometry_2dbc(side, uplo == Uplo::Lower, a, b, order), slices,
                                            layer, layer_rank)
                         : Cost{};
    return plus(rep, symm_cost(side, uplo, a, b, order, layer_rank, is_complex));
}

Cost symm3d_cost(Side side, const TileLayout& a, const TileLayout& b, int slices, int layer, int layer_rank,
                 bool is_complex, const SymmOptions& opts) {
    if (a.m() == 0) return {};
    const Cost rep =
        opts.replicate_a ? replicate_a_cost(detail::geometry_tiled(side, a, b), slices, layer, layer_rank) : Cost{};
    return plus(rep, symm_cost(side, a, b, layer_rank, is_complex));
}

#define CALA_INST(T)                                                                                          \
    template void symm<T>(Side, Uplo, T, const MatrixRef<T>&, const MatrixRef<T>&, T, const MatrixRef<T>&,     \
                          const Grid3D&, const SymmOptions&);                                                  \
    template void hemm<T>(Side, Uplo, T, const MatrixRef<T>&, const MatrixRef<T>&, T, const MatrixRef<T>&,     \
                          const Grid3D&, const SymmOptions&);                                                  \
    template void symm<T>(Side, Uplo, T, const TiledMatrix<T>&, const TiledMatrix<T>&, T, const TiledMatrix<T>&, \
                          const Grid3D&, const SymmOptions&);                                                  \
    template void hemm<T>(Side, Uplo, T, const TiledMatrix<T>&, const TiledMatrix<T>&, T, const TiledMatrix<T>&, \
                          const Grid3D&, const SymmOptions&);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala

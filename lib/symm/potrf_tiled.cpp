// cala::potrf on a symmetric layout (SBC, TBC; lower half): right-looking tile Cholesky whose
// broadcasts all run over row sets; 2D (one layer) or 2.5D with the replicated diagonal (h
// layers of the same pattern, the schedule of lib/cholesky's Repl variant on row sets).
//
// cala::potrf(TiledMatrix[, layers]) -> checks, agreement -> potrf_layers: step k on layer t of h
//   (h = 1: only B, C, E, G, H, on the one layer):
//   A  [h > 1] all-reduce of A(k, k) over the fiber of its owner (every layer's partial sums)
//   B  potrf of A(k, k) on its owner in every layer (replicated)
//   C  L(k, k) over the row set of k, in each layer that solves a panel tile of step k
//   D  [h > 1] each panel tile A(i, k) reduced over its fiber to its home layer i mod h
//   E  trsm of the panel tiles on their home layers
//   F  [h > 1] each solved L(i, k) to the update layer k mod h and to layer 0 (the result)
//   G  in the update layer, each L(i, k) over the row set of i
//   H  herk/gemm on the update layer's own trailing tiles (its partial sums)
//   -> kernels (LAPACK potrf, BLIS trsm/herk/gemm)
//
//   SBC r = 4 (P = 8): each broadcast reaches r = 4 ranks; on a 2 x 4 grid, 2DBC's row and column
//   broadcasts reach p + q − 1 = 5 ranks for the same tile. 2 layers of SBC r = 2 (P = 4): the
//   row-set broadcasts of step k run on layer k mod 2 only, between 2 ranks.

#include <mpi.h>

#include "cala/symm.hpp"
#include "core/check.hpp"
#include "core/workspace.hpp"
#include "kernels/blas.hpp"
#include "matrix/redistribute_impl.hpp"
#include "matrix/tiled_plan.hpp"
#include "symm/operands.hpp"

namespace cala {

namespace {

constexpr int kPotrfFiberTag = 7320;

bool member(const std::vector<int>& set, int rank) noexcept {
    for (const int r : set)
        if (r == rank) return true;
    return false;
}

int index_of(const std::vector<int>& set, int rank) {
    for (std::size_t i = 0; i < set.size(); ++i)
        if (set[i] == rank) return static_cast<int>(i);
    return -1;
}

// The layers of one call: h of them, this rank on layer t (fiber rank == layer).
struct Layers {
    int h = 1, t = 0;
    const Comm* fiber = nullptr;  // null when h == 1
    int home(index_t i) const noexcept { return static_cast<int>(i % h); }
    int update(index_t k) const noexcept { return static_cast<int>(k % h); }
    // Layers other than `from` that receive the solved L(i, k): the update layer and layer 0.
    std::vector<int> dests(index_t i, index_t k) const {
        std::vector<int> d;
        for (const int x : {update(k), 0})
            if (x != home(i) && (d.empty() || d.back() != x)) d.push_back(x);
        return d;
    }
    bool solves(index_t k, index_t n) const noexcept {  // layer t solves a panel tile of step k
        for (index_t i = k + 1; i < n && i <= k + h; ++i)
            if (home(i) == t) return true;
        return false;
    }
};

template <class T>
index_t potrf_layers(const TiledMatrix<T>& a, const Layers& ly) {
    const Comm& comm = a.grid().comm();
    const SymmetricLayout& sym = a.layout().symmetric();
    const index_t N = sym.num_blocks(), nb = sym.nb();
    const int me = comm.rank();
    std::vector<std::vector<int>> sets;
    for (int t = 0; t < sym.pattern_size(); ++t) sets.push_back(sym.row_set(t));
    const auto comms = detail::set_comms(comm, sets);
    auto tile = [&](index_t i, index_t j) { return a.tile(i, j); };
    auto ld = [&](index_t i) { return sym.block_size(i); };
    if (ly.t != 0)  // the other layers start from zero partial sums
        for (index_t j = 0; j < N; ++j)
            for (index_t i = j; i < N; ++i)
                if (sym.owner(i, j) == me) std::fill(tile(i, j), tile(i, j) + ld(i) * ld(j), T(0));

    index_t info = 0;
    detail::Buffer<T> lkk(nb * nb), panel(N * nb * nb);
    std::vector<Request> reqs;
    for (index_t k = 0; k < N; ++k) {
        const index_t bk = sym.block_size(k);
        const auto& sk = sets[static_cast<std::size_t>(sym.row_of(k))];
        const int dk = sym.owner(k, k), u = ly.update(k);
        if (dk == me) {  // A, B
            if (ly.h > 1) ly.fiber->iallreduce_sum(tile(k, k), bk * bk).wait();
            const index_t f = kernels::potrf(true, bk, tile(k, k), ld(k));
            if (f > 0 && info == 0) info = k * nb + f;
            kernels::copy(Op::N, bk, bk, tile(k, k), ld(k), lkk.data(), bk);
        }
        if (ly.solves(k, N) && member(sk, me) && sk.size() > 1)  // C
            comms[static_cast<std::size_t>(sym.row_of(k))]->ibcast(lkk.data(), bk * bk, index_of(sk, dk)).wait();
        for (index_t i = k + 1; i < N && ly.h > 1; ++i)  // D
            if (sym.owner(i, k) == me)
                reqs.push_back(ly.fiber->ireduce_sum(tile(i, k), tile(i, k), ld(i) * bk, ly.home(i)));
        wait_all(reqs);
        reqs.clear();
        for (index_t i = k + 1; i < N; ++i)  // E, F
            if (sym.owner(i, k) == me) {
                const index_t w = ld(i) * bk;
                T* p = panel.data() + i * nb * nb;
                if (ly.home(i) == ly.t) {
                    kernels::trsm(false, true, Op::C, false, ld(i), bk, T(1), lkk.data(), bk, tile(i, k), ld(i));
                    for (const int d : ly.dests(i, k)) reqs.push_back(ly.fiber->isend(tile(i, k), w, d, kPotrfFiberTag));
                } else if (ly.t == 0) {
                    reqs.push_back(ly.fiber->irecv(tile(i, k), w, ly.home(i), kPotrfFiberTag));
                } else if (ly.t == u) {
                    reqs.push_back(ly.fiber->irecv(p, w, ly.home(i), kPotrfFiberTag));
                }
            }
        wait_all(reqs);
        reqs.clear();
        if (ly.t != u) continue;
        for (index_t i = k + 1; i < N; ++i) {  // G
            const auto& si = sets[static_cast<std::size_t>(sym.row_of(i))];
            if (!member(si, me)) continue;
            T* p = panel.data() + i * nb * nb;
            const int o = sym.owner(i, k);
            if (o == me && (ly.home(i) == u || u == 0)) kernels::copy(Op::N, ld(i), bk, tile(i, k), ld(i), p, ld(i));
            if (si.size() > 1)
                reqs.push_back(comms[static_cast<std::size_t>(sym.row_of(i))]->ibcast(p, ld(i) * bk, index_of(si, o)));
        }
        wait_all(reqs);
        reqs.clear();
        for (index_t j = k + 1; j < N; ++j)  // H
            for (index_t i = j; i < N; ++i) {
                if (sym.owner(i, j) != me) continue;
                const index_t bi = ld(i), bj = ld(j);
                const T* pi = panel.data() + i * nb * nb;
                const T* pj = panel.data() + j * nb * nb;
                if (i == j) kernels::herk(true, Op::N, bi, bk, real_t<T>(-1), pi, bi, real_t<T>(1), tile(i, i), ld(i));
                else kernels::gemm(Op::N, Op::C, bi, bj, bk, T(-1), pi, bi, pj, bj, T(1), tile(i, j), ld(i));
            }
    }
    return info;
}

// The first failed minor, the same on every rank (the smallest positive info): an agreement,
// like the argument check, outside the counted traffic.
index_t agree_info(index_t info, index_t n, const Comm& comm) {
    std::int64_t v = info > 0 ? n + 1 - info : 0;
    CALA_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, MPI_MAX, comm.get()));
    return v > 0 ? n + 1 - v : 0;
}

template <class T>
std::string check_tiled(const TiledMatrix<T>& a, Uplo uplo) {
    if (a.layout().role() != TileLayout::Role::Lower)
        return "potrf: A's layout is not the lower half of a symmetric layout (TileLayout::lower)";
    if (uplo == Uplo::Upper)
        return detail::cat("potrf: uplo is Upper but A's layout (", a.layout().symmetric().describe(),
                           ") stores the lower half only");
    return {};
}

Cost potrf_layers_cost(const TileLayout& a, const Layers& ly, int rank, bool is_complex) {
    Cost cost;
    const SymmetricLayout& sym = a.symmetric();
    const index_t N = sym.num_blocks();
    auto add = [&cost](std::int64_t w, bool recv) { cost.words += w, cost.msgs += 1, cost.words_recv += recv ? w : 0; };
    for (index_t k = 0; k < N; ++k) {
        const index_t bk = sym.block_size(k);
        const auto& sk = sym.row_set(sym.row_of(k));
        const int u = ly.update(k);
        if (ly.h > 1 && sym.owner(k, k) == rank) add(bk * bk, false), add(bk * bk, true);  // A
        if (ly.solves(k, N) && member(sk, rank) && sk.size() > 1) add(bk * bk, sym.owner(k, k) != rank);  // C
        for (index_t i = k + 1; i < N; ++i) {
            if (sym.owner(i, k) != rank || ly.h == 1) continue;
            const std::int64_t w = sym.block_size(i) * bk;
            add(w, ly.home(i) == ly.t);  // D
            const auto d = ly.dests(i, k);
            if (ly.home(i) == ly.t)
                for (std::size_t x = 0; x < d.size(); ++x) add(w, false);  // F
            else if (ly.t == 0 || ly.t == u) add(w, true);
        }
        if (ly.t != u) continue;
        for (index_t i = k + 1; i < N; ++i) {  // G
            const auto& si = sym.row_set(sym.row_of(i));
            if (member(si, rank) && si.size() > 1) add(sym.block_size(i) * bk, sym.owner(i, k) != rank);
        }
        for (index_t j = k + 1; j < N; ++j)  // H
            for (index_t i = j; i < N; ++i)
                if (sym.owner(i, j) == rank)
                    cost.flops += (i == j ? 1.0 : 2.0) * double(sym.block_size(i)) * double(sym.block_size(j)) *
                                  double(bk) * (is_complex ? 4.0 : 1.0);
    }
    return cost;
}

}  // namespace

template <class T>
index_t potrf(Uplo uplo, const TiledMatrix<T>& a) {
    const Comm& comm = a.grid().comm();
    const std::string err = check_tiled(a, uplo);
    std::uint64_t fp = detail::fingerprint(1469598103934665603ull, &uplo, sizeof uplo);
    if (err.empty()) fp = detail::fingerprint(fp, a.layout());
    comm.agree(err, fp, "potrf");
    if (a.layout().symmetric().num_blocks() == 0) return 0;
    return agree_info(potrf_layers(a, Layers{}), a.m(), comm);
}

template <class T>
index_t potrf(Uplo uplo, const TiledMatrix<T>& a, const Grid3D& layers) {
    using detail::cat;
    const int size = layers.comm().size(), used = layers.p() * layers.q() * layers.c();
    std::string err;
    if (used != size)
        err = cat("potrf: layers is a ", layers.p(), " x ", layers.q(), " x ", layers.c(), " grid that leaves ",
                  size - used, " of the ", size, " ranks idle; every rank must hold a layer (see symm_slices)");
    else if (!detail::same_comm(a.grid().comm(), layers.layer_grid().comm()))
        err = cat("potrf: A does not live on this rank's layer of layers (layer ", layers.layer(), ")");
    if (err.empty()) err = check_tiled(a, uplo);
    std::uint64_t fp = detail::fingerprint(1469598103934665603ull, &uplo, sizeof uplo);
    fp = detail::fingerprint(fp, &used, sizeof used);
    if (err.empty()) fp = detail::fingerprint(fp, a.layout());
    layers.comm().agree(err, fp, "potrf");
    if (a.layout().symmetric().num_blocks() == 0) return 0;
    const Layers ly{layers.c(), layers.layer(), layers.c() > 1 ? &layers.fiber_comm() : nullptr};
    return agree_info(potrf_layers(a, ly), a.m(), layers.comm());
}

Cost potrf_cost(const TileLayout& a, int rank, bool is_complex) { return potrf_layers_cost(a, Layers{}, rank, is_complex); }

Cost potrf_cost(const TileLayout& a, int layers, int layer, int layer_rank, bool is_complex) {
    return potrf_layers_cost(a, Layers{layers, layer, nullptr}, layer_rank, is_complex);
}

#define CALA_INST(T)                                                     \
    template index_t potrf<T>(Uplo, const TiledMatrix<T>&);             \
    template index_t potrf<T>(Uplo, const TiledMatrix<T>&, const Grid3D&);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala

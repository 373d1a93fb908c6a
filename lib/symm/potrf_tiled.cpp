// cala::potrf on a symmetric layout (SBC, TBC; lower half): right-looking tile Cholesky whose
// broadcasts all run over row sets.
//
// cala::potrf(TiledMatrix) -> checks, agreement -> step k: potrf of A(k, k) on its owner; L(k, k)
//   over the row set of k (it holds every tile of column k); trsm of the own panel tiles; each
//   panel tile L(i, k) over the row set of i (every trailing tile of row and column i is there);
//   herk/gemm on the own trailing tiles -> kernels (LAPACK potrf, BLIS trsm/herk/gemm)
//
//   SBC r = 4 (P = 8): each broadcast reaches r = 4 ranks; on a 2 x 4 grid, 2DBC's row and column
//   broadcasts reach p + q − 1 = 5 ranks for the same tile.

#include <mpi.h>

#include "cala/symm.hpp"
#include "core/check.hpp"
#include "core/workspace.hpp"
#include "kernels/blas.hpp"
#include "matrix/redistribute_impl.hpp"
#include "matrix/tiled_plan.hpp"
#include "symm/engine.hpp"

namespace cala {

namespace {

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

}  // namespace

template <class T>
index_t potrf(Uplo uplo, const TiledMatrix<T>& a) {
    using detail::cat;
    const Comm& comm = a.grid().comm();
    std::string err;
    if (a.layout().role() != TileLayout::Role::Lower)
        err = "potrf: A's layout is not the lower half of a symmetric layout (TileLayout::lower)";
    else if (uplo == Uplo::Upper)
        err = cat("potrf: uplo is Upper but A's layout (", a.layout().symmetric().describe(), ") stores the lower half only");
    std::uint64_t fp = detail::fingerprint(1469598103934665603ull, &uplo, sizeof uplo);
    if (err.empty()) fp = detail::fingerprint(fp, a.layout());
    comm.agree(err, fp, "potrf");
    const SymmetricLayout& sym = a.layout().symmetric();
    const index_t N = sym.num_blocks(), nb = sym.nb();
    if (N == 0) return 0;
    const int me = comm.rank();
    std::vector<std::vector<int>> sets;
    for (int t = 0; t < sym.pattern_size(); ++t) sets.push_back(sym.row_set(t));
    const auto comms = detail::set_comms(comm, sets);
    auto tile = [&](index_t i, index_t j) { return a.tile(i, j); };
    auto ld = [&](index_t i) { return sym.block_size(i); };

    index_t info = 0;
    detail::Buffer<T> lkk(nb * nb), panel(N * nb * nb);
    std::vector<Request> reqs;
    for (index_t k = 0; k < N; ++k) {
        const index_t bk = sym.block_size(k);
        const auto& sk = sets[static_cast<std::size_t>(sym.row_of(k))];
        const int dk = sym.owner(k, k);
        if (dk == me) {
            const index_t f = kernels::potrf(true, bk, tile(k, k), ld(k));
            if (f > 0 && info == 0) info = k * nb + f;
            kernels::copy(Op::N, bk, bk, tile(k, k), ld(k), lkk.data(), bk);
        }
        if (member(sk, me) && sk.size() > 1)  // L(k, k) to the owners of column k's tiles
            comms[static_cast<std::size_t>(sym.row_of(k))]->ibcast(lkk.data(), bk * bk, index_of(sk, dk)).wait();
        // Own panel tiles, then every panel tile over the row set of its row.
        for (index_t i = k + 1; i < N; ++i)
            if (sym.owner(i, k) == me)
                kernels::trsm(false, true, Op::C, false, sym.block_size(i), bk, T(1), lkk.data(), bk, tile(i, k), ld(i));
        for (index_t i = k + 1; i < N; ++i) {
            const auto& si = sets[static_cast<std::size_t>(sym.row_of(i))];
            if (!member(si, me)) continue;
            T* p = panel.data() + i * nb * nb;
            const int o = sym.owner(i, k);
            if (o == me) kernels::copy(Op::N, sym.block_size(i), bk, tile(i, k), ld(i), p, sym.block_size(i));
            if (si.size() > 1)
                reqs.push_back(comms[static_cast<std::size_t>(sym.row_of(i))]->ibcast(p, sym.block_size(i) * bk, index_of(si, o)));
        }
        wait_all(reqs);
        reqs.clear();
        for (index_t j = k + 1; j < N; ++j)
            for (index_t i = j; i < N; ++i) {
                if (sym.owner(i, j) != me) continue;
                const index_t bi = sym.block_size(i), bj = sym.block_size(j);
                const T* pi = panel.data() + i * nb * nb;
                const T* pj = panel.data() + j * nb * nb;
                if (i == j) kernels::herk(true, Op::N, bi, bk, real_t<T>(-1), pi, bi, real_t<T>(1), tile(i, i), ld(i));
                else kernels::gemm(Op::N, Op::C, bi, bj, bk, T(-1), pi, bi, pj, bj, T(1), tile(i, j), ld(i));
            }
    }
    // The first failed minor, the same on every rank (the smallest positive info): an agreement,
    // like the argument check, outside the counted traffic.
    std::int64_t v = info > 0 ? N * nb + 1 - info : 0;
    CALA_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, MPI_MAX, comm.get()));
    return v > 0 ? N * nb + 1 - v : 0;
}

Cost potrf_cost(const TileLayout& a, int rank, bool is_complex) {
    Cost cost;
    const SymmetricLayout& sym = a.symmetric();
    const index_t N = sym.num_blocks();
    for (index_t k = 0; k < N; ++k) {
        const index_t bk = sym.block_size(k);
        const auto& sk = sym.row_set(sym.row_of(k));
        if (member(sk, rank) && sk.size() > 1) cost.words += bk * bk, cost.msgs += 1, cost.words_recv += sym.owner(k, k) == rank ? 0 : bk * bk;
        for (index_t i = k + 1; i < N; ++i) {
            const auto& si = sym.row_set(sym.row_of(i));
            if (!member(si, rank) || si.size() == 1) continue;
            const std::int64_t w = sym.block_size(i) * bk;
            cost.words += w, cost.msgs += 1, cost.words_recv += sym.owner(i, k) == rank ? 0 : w;
        }
        for (index_t j = k + 1; j < N; ++j)
            for (index_t i = j; i < N; ++i)
                if (sym.owner(i, j) == rank)
                    cost.flops += (i == j ? 1.0 : 2.0) * double(sym.block_size(i)) * double(sym.block_size(j)) *
                                  double(bk) * (is_complex ? 4.0 : 1.0);
    }
    return cost;
}

#define CALA_INST(T) template index_t potrf<T>(Uplo, const TiledMatrix<T>&);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala

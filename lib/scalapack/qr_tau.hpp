#pragma once
// ScaLAPACK's TAU (p?geqrf's output, p?ormqr's input) and cala's vector of Householder scalars,
// both ways, and ScaLAPACK's workspace sizes for p?geqrf and p?ormqr.
//
// pgeqrf.cpp, pormqr.cpp -> qr_tau (this) -> descriptor (local_count); MPI (one allreduce along
// the process row to read TAU)
//
// cala::geqrf returns k = min(m, n) scalars, the same on every rank. ScaLAPACK keeps them in a
// local array of LOCc(JA+k-1) entries tied to A's columns: tau_j (j = 0 .. k-1) at the local
// index of global column JA + j, on every process row of the process column that holds it (its
// p?larfg broadcasts each one down the column).

#include <algorithm>
#include <complex>
#include <numeric>
#include <type_traits>
#include <vector>

#include <mpi.h>

#include "cala/types.hpp"
#include "core/check.hpp"
#include "scalapack/descriptor.hpp"

namespace cala::scalapack {

/// Writes `tau` into this process's TAU as ScaLAPACK's p?geqrf leaves it (A with 9-entry
/// descriptor `desca`, sub(A) starting at column JA). Local.
template <class T>
void write_tau(const std::vector<T>& tau, int ja, const int* desca, const GridPos& g, T* out) {
    const int nb = desca[SL_NB - 1], csrc = desca[SL_CSRC - 1];
    for (std::size_t j = 0; j < tau.size(); ++j) {
        const index_t col = static_cast<index_t>(ja) - 1 + static_cast<index_t>(j);  // 0-based global
        if ((csrc + col / nb) % g.q != g.col) continue;
        out[local_count(col, nb, nb, csrc, g.q, g.col)] = tau[j];
    }
}

/// The k scalars of sub(A)'s reflectors (columns JA .. JA+k-1) read from ScaLAPACK's TAU on
/// every process: each from the process column that holds it, by one MPI_Allreduce (sum, the
/// others contributing zeros) of k elements over `row_comm`, the process row's communicator.
/// Collective over the process row.
template <class T>
std::vector<T> read_tau(MPI_Comm row_comm, index_t k, int ja, const int* desca, const GridPos& g, const T* in) {
    using R = real_t<T>;
    const int nb = desca[SL_NB - 1], csrc = desca[SL_CSRC - 1];
    std::vector<T> tau(static_cast<std::size_t>(k), T(0));
    for (index_t j = 0; j < k; ++j) {
        const index_t col = static_cast<index_t>(ja) - 1 + j;
        if ((csrc + col / nb) % g.q == g.col) tau[static_cast<std::size_t>(j)] = in[local_count(col, nb, nb, csrc, g.q, g.col)];
    }
    const int count = static_cast<int>(k * (sizeof(T) / sizeof(R)));
    CALA_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, tau.data(), count, std::is_same_v<R, float> ? MPI_FLOAT : MPI_DOUBLE,
                                 MPI_SUM, row_comm));
    return tau;
}

/// NUMROC(n, nb, proc, src, nprocs).
inline index_t numroc(index_t n, int nb, int proc, int src, int nprocs) {
    return local_count(n, nb, nb, src, nprocs, proc);
}
/// INDXG2P(i, nb, -, src, nprocs): the process holding global index i (1-based).
inline int indxg2p(index_t i, int nb, int src, int nprocs) {
    return static_cast<int>((src + (i - 1) / nb) % nprocs);
}

/// p?geqrf's LWMIN on this process: NB_A·(MP0 + NQ0 + NB_A).
inline index_t geqrf_lwmin(int m, int n, int ia, int ja, const int* d, const GridPos& g) {
    const int mb = d[SL_MB - 1], nb = d[SL_NB - 1];
    const int iarow = indxg2p(ia, mb, d[SL_RSRC - 1], g.p), iacol = indxg2p(ja, nb, d[SL_CSRC - 1], g.q);
    const index_t mp0 = numroc(m + (ia - 1) % mb, mb, g.row, iarow, g.p);
    const index_t nq0 = numroc(n + (ja - 1) % nb, nb, g.col, iacol, g.q);
    return static_cast<index_t>(nb) * (mp0 + nq0 + nb);
}

/// p?ormqr's (p?unmqr's) LWMIN on this process.
inline index_t ormqr_lwmin(bool left, int m, int n, int ia, int ic, int jc, const int* da, const int* dc,
                           const GridPos& g) {
    const index_t nba = da[SL_NB - 1];
    const int mbc = dc[SL_MB - 1], nbc = dc[SL_NB - 1];
    const int icrow = indxg2p(ic, mbc, dc[SL_RSRC - 1], g.p), iccol = indxg2p(jc, nbc, dc[SL_CSRC - 1], g.q);
    const index_t mpc0 = numroc(m + (ic - 1) % mbc, mbc, g.row, icrow, g.p);
    const index_t nqc0 = numroc(n + (jc - 1) % nbc, nbc, g.col, iccol, g.q);
    const index_t tri = nba * (nba - 1) / 2;
    if (left) return std::max(tri, (mpc0 + nqc0) * nba) + nba * nba;
    const int mba = da[SL_MB - 1];
    const int iarow = indxg2p(ia, mba, da[SL_RSRC - 1], g.p);
    const index_t npa0 = numroc(n + (ia - 1) % mba, mba, g.row, iarow, g.p);
    const int lcmq = std::lcm(g.p, g.q) / g.q;
    const index_t inner = numroc(numroc(n + (jc - 1) % nbc, static_cast<int>(nba), 0, 0, g.q),
                                 static_cast<int>(nba), 0, 0, lcmq);
    return std::max(tri, (nqc0 + std::max(npa0 + inner, mpc0)) * nba) + nba * nba;
}

}  // namespace cala::scalapack

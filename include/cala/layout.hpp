#pragma once
// Block-cyclic index arithmetic. Pure functions, no MPI.
//
// A Dist1D spreads n indices over P processes in blocks: block 0 is [0, ib), block b >= 1 is
// [ib + (b-1)·nb, ib + b·nb), clipped to n; block b lives on process (src + b) mod P.
// ib < nb is what a submatrix starting inside a block looks like, so a view of A(i:, j:) is
// again a plain Dist1D pair (ScaLAPACK's IA/JA offsets fold into ib and src).
//
//   n = 10, nb = 3, ib = 2, src = 1, P = 2:
//   global   0 1 | 2 3 4 | 5 6 7 | 8 9
//   block      0 |     1 |     2 |   3
//   process    1 |     0 |     1 |   0      local on 1: 0 1 5 6 7, on 0: 2 3 4 8 9

#include <cstdint>

#include "cala/types.hpp"

namespace cala {

struct Dist1D {
    index_t n = 0;   ///< global extent
    index_t nb = 1;  ///< block size
    index_t ib = 1;  ///< size of the first block, 1 <= ib <= nb
    int src = 0;     ///< process holding block 0
    int nprocs = 1;  ///< number of processes along this dimension

    Dist1D() = default;
    /// Throws cala::Error naming `what` if n < 0, nb < 1, ib outside [1, nb], src outside [0, P).
    Dist1D(index_t n, index_t nb, int nprocs, int src = 0, index_t ib = 0, const char* what = "dist");

    index_t num_blocks() const noexcept;
    index_t block_of(index_t g) const noexcept;
    index_t block_start(index_t b) const noexcept;
    index_t block_size(index_t b) const noexcept;
    int block_owner(index_t b) const noexcept { return static_cast<int>((src + b) % nprocs); }
    int owner(index_t g) const noexcept { return block_owner(block_of(g)); }

    /// Number of indices process `proc` holds (ScaLAPACK's numroc).
    index_t local_size(int proc) const noexcept;
    /// Number of indices < g that process `proc` holds; also the local index of the first
    /// index >= g that it holds.
    index_t local_before(index_t g, int proc) const noexcept;
    /// Local index of g on its owner.
    index_t to_local(index_t g) const noexcept { return local_before(g, owner(g)); }
    /// Global index of local index l on process proc.
    index_t to_global(index_t l, int proc) const noexcept;

    /// Distribution of the index range [offset, offset + len).
    Dist1D sub(index_t offset, index_t len) const;

    friend bool operator==(const Dist1D&, const Dist1D&) = default;
};

/// A 2D block-cyclic layout over a p x q process grid: rows by `rows`, columns by `cols`.
struct BlockCyclic {
    Dist1D rows, cols;

    BlockCyclic() = default;
    BlockCyclic(Dist1D r, Dist1D c) : rows(r), cols(c) {}
    /// ScaLAPACK's descriptor: m x n in mb x nb blocks over p x q from process (rsrc, csrc).
    BlockCyclic(index_t m, index_t n, index_t mb, index_t nb, int p, int q, int rsrc = 0, int csrc = 0);

    index_t m() const noexcept { return rows.n; }
    index_t n() const noexcept { return cols.n; }
    int p() const noexcept { return rows.nprocs; }
    int q() const noexcept { return cols.nprocs; }
    BlockCyclic sub(index_t i, index_t j, index_t m, index_t n) const {
        return {rows.sub(i, m), cols.sub(j, n)};
    }
    friend bool operator==(const BlockCyclic&, const BlockCyclic&) = default;
};

}  // namespace cala

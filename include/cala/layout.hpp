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
#include <memory>
#include <string>
#include <vector>

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

// ---------------------------------------------------------------------------------------------
// Symmetric layouts: the lower half of a symmetric n x n matrix in nb x nb blocks over P ranks,
// placed so that block row i and block column i live on the same few ranks (thesis ch. 5).
//
// A T x T symmetric pattern is repeated over the blocks: block (i, j), i >= j, goes to pattern
// cell (i mod T, j mod T). Every rank owns cells that the pattern lists; the pattern's diagonal
// cells (i ≡ j mod T, also off the matrix diagonal) are either fixed (basic SBC) or filled
// greedily, block by block, onto the least-loaded rank of the pattern row (extended SBC, TBC).
// The ranks of pattern row t -- the "row set" -- hold every block of block row i and block
// column i for i ≡ t: SYMM broadcasts B's block row i and reduces C's over that set only.
//
//   SBC r = 4, P = 8 (basic)       TBC c = 2, P = 6 (Algorithm 25; '.': greedy fill)
//     6                              .
//     0 6                            0 .
//     1 3 7                          2 3 .
//     2 4 5 7                        4 5 1 .
//   row set of 1: {0, 3, 4, 6}       row set of 0: {0, 2, 4}; each rank on c = 2 rows

/// Which pattern a SymmetricLayout follows.
enum class SymmetricKind {
    SBC,          ///< basic SBC: r even, P = r²/2, r/2 ranks on two diagonal cells each
    SBCExtended,  ///< extended SBC: P = r(r−1)/2, diagonal cells filled greedily
    TBC,          ///< triangle block cyclic: c prime, P = c(c+1), c² x c² pattern (Alg. 25)
};
const char* to_string(SymmetricKind k) noexcept;

/// The lower half (blocks (i, j), i >= j) of an n x n matrix in nb x nb blocks over `nprocs()`
/// ranks; the owner of a block is a table lookup. Pure arithmetic, no MPI. Build one with
/// SymmetricBlockCyclic or TriangleBlockCyclic.
class SymmetricLayout {
public:
    SymmetricLayout() = default;

    SymmetricKind kind() const noexcept { return kind_; }
    int param() const noexcept { return param_; }  ///< r (SBC) or c (TBC)
    index_t n() const noexcept { return n_; }
    index_t nb() const noexcept { return nb_; }
    int nprocs() const noexcept { return nprocs_; }
    int pattern_size() const noexcept { return t_; }  ///< T
    index_t num_blocks() const noexcept { return ceil_div(n_, nb_); }
    index_t block_start(index_t b) const noexcept { return b * nb_; }
    index_t block_size(index_t b) const noexcept { return b * nb_ + nb_ <= n_ ? nb_ : n_ - b * nb_; }

    /// Owner of block (i, j), i >= j (lower half; (i, j) with i < j is read as (j, i)).
    int owner(index_t i, index_t j) const noexcept;
    /// Owner of pattern cell (x, y) (symmetric), -1 for a diagonal cell filled block by block.
    int cell(int x, int y) const noexcept;
    /// Pattern row of block row i.
    int row_of(index_t i) const noexcept { return static_cast<int>(i % t_); }
    /// The ranks of pattern row t, ascending: they own every block of block row i and block
    /// column i for i ≡ t (mod T).
    const std::vector<int>& row_set(int t) const noexcept { return rows_[static_cast<std::size_t>(t)]; }
    /// Blocks and elements of the lower half that `rank` owns.
    index_t local_blocks(int rank) const noexcept { return blocks_[static_cast<std::size_t>(rank)]; }
    index_t local_elements(int rank) const noexcept { return elems_[static_cast<std::size_t>(rank)]; }
    /// "TBC(c=3) P=12 T=9", for messages and JSON.
    std::string describe() const;

    friend bool operator==(const SymmetricLayout& a, const SymmetricLayout& b) {
        return a.kind_ == b.kind_ && a.param_ == b.param_ && a.n_ == b.n_ && a.nb_ == b.nb_;
    }

private:
    friend struct SymmetricBlockCyclic;
    friend struct TriangleBlockCyclic;
    /// Builds the tables once the pattern cells (T x T, -1 on cells to fill) are set.
    SymmetricLayout(SymmetricKind kind, int param, index_t n, index_t nb, int nprocs, int t,
                    std::vector<int> cells);

    SymmetricKind kind_ = SymmetricKind::SBC;
    int param_ = 0;
    index_t n_ = 0, nb_ = 1;
    int nprocs_ = 1, t_ = 1;
    std::vector<int> cells_;                ///< T x T, symmetric
    std::vector<std::vector<int>> rows_;    ///< row sets
    std::vector<int> fill_;                 ///< owners of the blocks on pattern-diagonal cells
    std::vector<index_t> fill_start_;       ///< per block row i: index in fill_ of block (i, i mod T)
    std::vector<index_t> blocks_, elems_;   ///< per rank
};

/// Symmetric block cyclic (Beaumont et al. 2022). extended = false: r even, P = r²/2;
/// extended = true: P = r(r−1)/2 (r >= 2), each row set r−1 ranks. Throws cala::Error on bad
/// arguments (naming them).
struct SymmetricBlockCyclic : SymmetricLayout {
    SymmetricBlockCyclic(index_t n, index_t nb, int r, bool extended = false);
};

/// Triangle block cyclic, thesis Algorithm 25: c prime, P = c(c+1), pattern c² x c², each row
/// set c+1 ranks; diagonal cells of the pattern filled greedily. Throws cala::Error on bad c.
struct TriangleBlockCyclic : SymmetricLayout {
    TriangleBlockCyclic(index_t n, index_t nb, int c);
};

/// A symmetric layout that fits a rank count.
struct SymmetricChoice {
    SymmetricKind kind = SymmetricKind::TBC;
    int param = 0;       ///< r or c
    int ranks = 0;       ///< ranks the pattern uses (== the count asked for)
    std::int64_t words_per_rank = 0;  ///< storage per rank (elements, max over ranks)
    double q_over_mn = 0;             ///< SYMM volume Q/(mn) in the limit (Table 5.1)
};
/// Every symmetric layout that uses exactly `nranks` ranks, lowest SYMM volume first, keeping
/// those whose storage per rank for an n x n matrix in nb blocks is at most `max_words_per_rank`
/// (0: no limit). Throws cala::Error when none fits: the message names the nearby rank counts
/// that fit a pattern and how many of `nranks` ranks would stay idle on the largest below.
std::vector<SymmetricChoice> choose_symmetric_layout(int nranks, index_t n, index_t nb,
                                                     std::int64_t max_words_per_rank = 0);
/// The layout of a choice.
SymmetricLayout make_symmetric_layout(const SymmetricChoice& c, index_t n, index_t nb);

}  // namespace cala

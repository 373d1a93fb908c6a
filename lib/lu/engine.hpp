#pragma once
// Internal: cala::getrf's right-looking panel loop on one rank of a p x q grid (geometry.hpp has
// the schedule) and the pieces getrs shares with it: the interchanges of one step (only the rows
// that change place move: exchange.cpp) and the tournament (tournament.cpp).

#include <span>
#include <utility>
#include <vector>

#include "cala/comm.hpp"
#include "core/workspace.hpp"
#include "lu/geometry.hpp"

namespace cala::detail {

struct LuArgs {
    LuGeom g;
    int row = 0, col = 0;             ///< this rank
    const Comm* row_comm = nullptr;   ///< the q ranks of my process row (rank == col)
    const Comm* col_comm = nullptr;   ///< the p ranks of my process column (rank == row)
    int lookahead = 1;
    /// 1 x q grids on one node: the row broadcasts through node-shared slots (engine.cpp).
    bool node_shared = false;
    /// Layered (2.5D, LuVariant::Layered): this rank is layer `layer` of `layers` identical
    /// p x q grids; `fiber` holds the ranks at my (row, col) of every layer (rank == layer). Each
    /// layer holds a share of the trailing matrix that sums to it; each step sums the panel and
    /// the U block row over the fiber before they are used, and layer h updates with its slice of
    /// the step's kb columns of L21 (and rows of U12): engine.cpp.
    const Comm* fiber = nullptr;
    int layer = 0, layers = 1;
};

/// Layer h of `layers`: its slice [first, first + count) of a step's kb columns.
inline std::pair<index_t, index_t> lu_slice(index_t kb, int layer, int layers) {
    const index_t first = kb * layer / layers;
    return {first, kb * (layer + 1) / layers - first};
}

/// Factors the local array a (ld lda, layout a.g on this rank). Fills ipiv (min(m, n) global
/// 0-based interchanges, the same on every rank) and returns LAPACK's info (the same on every
/// rank: it is read from the replicated diagonal blocks).
template <class T>
index_t getrf_engine(const LuArgs& args, T* a, index_t lda, std::vector<index_t>& ipiv);

/// The buffers of exchange_rows, kept across steps (fresh ones cost a page fault per page).
template <class T>
struct ExchangeBuffers {
    Buffer<T> send, recv;
    void reserve(index_t n) {
        if (send.size() >= n) return;
        send = Buffer<T>(n);
        recv = Buffer<T>(n);
    }
};

/// Local column ranges [first, first + count) of an exchange, packed into one message.
using ColRanges = std::vector<std::pair<index_t, index_t>>;

/// Applies `moves` to the local columns `cols` of a (ld lda) on process row r of `rows`: only the
/// rows that change place move, one message each way between the owner of rows [k0, k0 + kb)
/// and each process row that holds a source or destination of theirs (exchange_counts; rows x w
/// words, w the columns' total). Collective over col_comm (every rank passes the same moves and
/// total width).
template <class T>
void exchange_rows(const Dist1D& rows, int r, const Comm& col_comm, index_t kb, const Moves& moves, T* a, index_t lda,
                   const ColRanges& cols, ExchangeBuffers<T>& ws);

/// One general row permutation (position, source; global rows, the same on every rank) of the
/// local columns [c0, c0 + w).
struct RowPermutation {
    const Moves* moves;
    index_t c0, w;
};

/// Applies `parts` (disjoint column ranges) to a on process row r of `rows`: one message each way
/// between process rows that exchange rows in any part (permute_counts, summed over the parts:
/// rows x w words), local copies otherwise. Collective over col_comm. getrf's deferred
/// interchanges of L's columns.
template <class T>
void permute_rows(const Dist1D& rows, int r, const Comm& col_comm, std::span<const RowPermutation> parts, T* a,
                  index_t lda, ExchangeBuffers<T>& ws);

/// Step T and the decision of step I on the ranks of process column pc(l): the tournament over
/// col_comm. On the root (process row ro(l)) `top` (kb x (kb+2), ld kb) receives L11\U11 of the
/// winning rows in their pivot order, then the step's interchanges ipiv[k0 .. k0 + kb) (global,
/// encoded by encode_row).
template <class T>
void tournament(const LuGeom& g, index_t l, int r, const Comm& col_comm, const T* a, index_t lda, T* top);

/// A row index carried in two entries of T (exact in float for indices below 2^40).
template <class T>
void encode_row(index_t idx, T* hi, T* lo);
template <class T>
index_t decode_row(const T& hi, const T& lo);

}  // namespace cala::detail

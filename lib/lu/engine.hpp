#pragma once
// Internal: cala::getrf's right-looking panel loop on one rank of a p x q grid (geometry.hpp has
// the schedule) and the pieces getrs shares with it: the interchanges of one step as a fixed
// exchange pattern (exchange.cpp) and the tournament (tournament.cpp).

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
};

/// Factors the local array a (ld lda, layout a.g on this rank). Fills ipiv (min(m, n) global
/// 0-based interchanges, the same on every rank) and returns LAPACK's info (the same on every
/// rank: it is read from the replicated diagonal blocks).
template <class T>
index_t getrf_engine(const LuArgs& args, T* a, index_t lda, std::vector<index_t>& ipiv);

/// One step's row movement as (position, source) pairs, position != source: after it, row
/// `position` holds what row `source` held. Every source of a position outside [k0, k0 + kb)
/// lies inside it (so is every such position's inverse), which the exchange relies on.
using Moves = std::vector<std::pair<index_t, index_t>>;
/// The moves of the interchanges ipiv[k0 .. k0 + kb) (global, ipiv[i] >= i) applied in order.
Moves step_moves(const std::vector<index_t>& ipiv, index_t k0, index_t kb);
/// The moves that undo `m`.
Moves inverse_moves(const Moves& m);

/// The buffers of exchange_rows, kept across steps (fresh ones cost a page fault per page).
template <class T>
struct ExchangeBuffers {
    Buffer<T> d, part, sum;
    void reserve(index_t n) {
        if (d.size() >= n) return;
        d = Buffer<T>(n);
        part = Buffer<T>(n);
        sum = Buffer<T>(n);
    }
};

/// Local column ranges [first, first + count) of an exchange, packed into one message.
using ColRanges = std::vector<std::pair<index_t, index_t>>;

/// Applies `moves` to the local columns `cols` of a (ld lda) on process row r of `rows`: the kb
/// rows [k0, k0 + kb) broadcast down col_comm from their owner, the rows moved into them reduced
/// to it (zeros where a rank owns none): kb x w words each (w: the columns' total), whatever the
/// moves. Collective over col_comm (every rank of it passes the same total width).
template <class T>
void exchange_rows(const Dist1D& rows, int r, const Comm& col_comm, index_t k0, index_t kb, const Moves& moves, T* a,
                   index_t lda, const ColRanges& cols, ExchangeBuffers<T>& ws);

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

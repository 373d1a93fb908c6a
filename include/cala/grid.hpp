#pragma once
// cala::Grid2D: a p x q process grid with row and column communicators.

#include <memory>
#include <utility>

#include "cala/comm.hpp"

namespace cala {

/// How ranks of the communicator are laid on the grid (BLACS calls these "Row" and "Col").
enum class GridOrder { RowMajor, ColumnMajor };

/// A p x q grid over a duplicate of the user's communicator. Cheap to copy: copies share the
/// communicators, which are freed with the last copy.
///
///   2 x 3, RowMajor:   rank 0 1 2     row_comm of process row 1 = ranks {3, 4, 5}
///                           3 4 5     col_comm of process col 2 = ranks {2, 5}
class Grid2D {
public:
    /// Collective over `comm`. Throws cala::Error on every rank if p*q != comm.size().
    Grid2D(const Comm& comm, int p, int q, GridOrder order = GridOrder::RowMajor);
    /// Collective over `comm`: the squarest p x q with p <= q.
    explicit Grid2D(const Comm& comm);

    int p() const noexcept;
    int q() const noexcept;
    int row() const noexcept;  ///< this rank's process row
    int col() const noexcept;  ///< this rank's process column
    GridOrder order() const noexcept;
    const Comm& comm() const noexcept;      ///< all p*q ranks
    const Comm& row_comm() const noexcept;  ///< the q ranks of this process row; rank == col()
    const Comm& col_comm() const noexcept;  ///< the p ranks of this process column; rank == row()
    int rank_of(int r, int c) const noexcept;
    std::pair<int, int> coords_of(int rank) const noexcept;  ///< (row, col) of a rank of comm()

    /// Same shape and order over congruent communicators: matrices on the two are compatible.
    bool same_as(const Grid2D& o) const;

    /// The squarest factorization p x q of P with p <= q.
    static std::pair<int, int> squarest(int nranks);

private:
    struct State;
    std::shared_ptr<const State> s_;
};

}  // namespace cala

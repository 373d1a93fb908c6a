#include "cala/grid.hpp"

#include <cmath>

#include "core/check.hpp"
#include "core/threads.hpp"

namespace cala {

struct Grid2D::State {
    Comm comm, row, col;
    int p = 1, q = 1, r = 0, c = 0;
    GridOrder order = GridOrder::RowMajor;
};

Grid2D::Grid2D(const Comm& comm, int p, int q, GridOrder order) {
    using detail::cat;
    // One agreement before the first collective that builds the grid: a shape that is wrong on
    // one rank only, or ranks passing different shapes or orders, fail on every rank (no rank
    // goes on alone into dup or split).
    std::string err;
    if (p < 1 || q < 1 || static_cast<long>(p) * q != comm.size())
        err = cat("Grid2D: a ", p, " x ", q, " grid does not match a communicator of ", comm.size(), " ranks");
    const std::uint64_t fp = static_cast<std::uint64_t>(static_cast<std::uint32_t>(p)) << 32 |
                             static_cast<std::uint64_t>(static_cast<std::uint32_t>(q)) << 2 |
                             (order == GridOrder::RowMajor ? 0u : 2u);
    comm.agree(err, fp, "Grid2D");
    auto s = std::make_shared<State>();
    s->comm = comm.dup();
    detail::fit_threads(s->comm.get());  // threads that fit the node, unless the user chose (core/threads.hpp)
    s->p = p;
    s->q = q;
    s->order = order;
    const int rank = s->comm.rank();
    s->r = order == GridOrder::RowMajor ? rank / q : rank % p;
    s->c = order == GridOrder::RowMajor ? rank % q : rank / p;  // as coords_of(rank)
    s->row = s->comm.split(s->r, s->c);
    s->col = s->comm.split(s->c, s->r);
    s_ = std::move(s);
}

Grid2D::Grid2D(const Comm& comm)
    : Grid2D(comm, squarest(comm.size()).first, squarest(comm.size()).second) {}

int Grid2D::p() const noexcept { return s_->p; }
int Grid2D::q() const noexcept { return s_->q; }
int Grid2D::row() const noexcept { return s_->r; }
int Grid2D::col() const noexcept { return s_->c; }
GridOrder Grid2D::order() const noexcept { return s_->order; }
const Comm& Grid2D::comm() const noexcept { return s_->comm; }
const Comm& Grid2D::row_comm() const noexcept { return s_->row; }
const Comm& Grid2D::col_comm() const noexcept { return s_->col; }

int Grid2D::rank_of(int r, int c) const noexcept {
    return s_->order == GridOrder::RowMajor ? r * s_->q + c : c * s_->p + r;
}

std::pair<int, int> Grid2D::coords_of(int rank) const noexcept {
    return s_->order == GridOrder::RowMajor ? std::pair{rank / s_->q, rank % s_->q}
                                            : std::pair{rank % s_->p, rank / s_->p};
}

bool Grid2D::same_as(const Grid2D& o) const {
    if (s_ == o.s_) return true;
    if (p() != o.p() || q() != o.q() || order() != o.order()) return false;
    int result = MPI_UNEQUAL;
    CALA_CHECK_MPI(MPI_Comm_compare(comm().get(), o.comm().get(), &result));
    return result == MPI_IDENT || result == MPI_CONGRUENT;
}

std::pair<int, int> Grid2D::squarest(int nranks) {
    int p = static_cast<int>(std::sqrt(static_cast<double>(nranks)));
    while (p > 1 && nranks % p != 0) --p;
    if (p < 1) p = 1;
    return {p, nranks / p};
}

}  // namespace cala

#include "cala/grid3d.hpp"

#include "core/check.hpp"

namespace cala {

struct Grid3D::State {
    Comm comm, fiber;
    std::optional<Grid2D> layer;
    int p = 1, q = 1, c = 1, h = -1, r = -1, col = -1;
};

Grid3D::Grid3D(const Comm& comm, int p, int q, int c) {
    using detail::cat;
    // Agreed before the first collective, as in Grid2D.
    std::string err;
    if (p < 1 || q < 1 || c < 1 || static_cast<long>(p) * q * c > comm.size())
        err = cat("Grid3D: a ", p, " x ", q, " x ", c, " grid does not fit a communicator of ", comm.size(), " ranks");
    const auto bits = [](int x) { return static_cast<std::uint64_t>(static_cast<std::uint32_t>(x) & 0x1fffff); };
    comm.agree(err, bits(p) << 43 | bits(q) << 22 | bits(c) << 1, "Grid3D");
    auto s = std::make_shared<State>();
    s->comm = comm.dup();
    s->p = p, s->q = q, s->c = c;
    const int rank = s->comm.rank();
    const bool active = rank < p * q * c;
    if (active) s->h = rank / (p * q), s->r = rank % (p * q) / q, s->col = rank % q;
    Comm layer = s->comm.split(active ? s->h : MPI_UNDEFINED, rank);
    s->fiber = s->comm.split(active ? s->r * q + s->col : MPI_UNDEFINED, s->h);
    if (active) s->layer.emplace(layer, p, q);
    s_ = std::move(s);
}

int Grid3D::p() const noexcept { return s_->p; }
int Grid3D::q() const noexcept { return s_->q; }
int Grid3D::c() const noexcept { return s_->c; }
bool Grid3D::active() const noexcept { return s_->h >= 0; }
int Grid3D::layer() const noexcept { return s_->h; }
int Grid3D::row() const noexcept { return s_->r; }
int Grid3D::col() const noexcept { return s_->col; }
const Comm& Grid3D::comm() const noexcept { return s_->comm; }

const Grid2D& Grid3D::layer_grid() const {
    if (!s_->layer) throw Error("Grid3D: an idle rank has no layer");
    return *s_->layer;
}

const Comm& Grid3D::fiber_comm() const {
    if (!active()) throw Error("Grid3D: an idle rank has no fiber");
    return s_->fiber;
}

}  // namespace cala

// StencilDomain (block split, neighbours) and StencilGrid (the domain over a duplicate communicator).

#include <algorithm>
#include <cstdint>

#include "cala/stencil.hpp"
#include "core/check.hpp"
#include "stencil/internal.hpp"

namespace cala {

using detail::cat;

StencilDomain StencilDomain::make_2d(index_t nx, index_t ny, int px, int py, Boundary bx, Boundary by) {
    StencilDomain d;
    d.dim = 2;
    d.n = {nx, ny, 1};
    d.procs = {px, py, 1};
    d.boundary = {bx, by, Boundary::Dirichlet};
    return d;
}

StencilDomain StencilDomain::make_3d(index_t nx, index_t ny, index_t nz, int px, int py, int pz, Boundary bx,
                                     Boundary by, Boundary bz) {
    StencilDomain d;
    d.dim = 3;
    d.n = {nx, ny, nz};
    d.procs = {px, py, pz};
    d.boundary = {bx, by, bz};
    return d;
}

std::string StencilDomain::check() const {
    static const char* axis[3] = {"x", "y", "z"};
    if (dim != 2 && dim != 3) return cat("stencil domain: dim is ", dim, ", not 2 or 3");
    for (int d = 0; d < 3; ++d) {
        if (d >= dim && (n[d] != 1 || procs[d] != 1))
            return cat("stencil domain: a 2D domain has n[2] = ", n[2], " and procs[2] = ", procs[2],
                       " (both must be 1)");
        if (n[d] < 1) return cat("stencil domain: n along ", axis[d], " is ", n[d], " (must be >= 1)");
        if (procs[d] < 1) return cat("stencil domain: procs along ", axis[d], " is ", procs[d], " (must be >= 1)");
        if (procs[d] > n[d])
            return cat("stencil domain: ", procs[d], " ranks along ", axis[d], " for ", n[d],
                       " points (every rank must own at least one point)");
    }
    return {};
}

index_t StencilDomain::lo(int d, int c) const noexcept {
    const index_t q = n[d] / procs[d], r = n[d] % procs[d];
    return c * q + std::min<index_t>(c, r);
}

index_t StencilDomain::extent(int d, int c) const noexcept {
    return n[d] / procs[d] + (c < n[d] % procs[d] ? 1 : 0);
}

index_t StencilDomain::min_extent(int d) const noexcept { return n[d] / procs[d]; }

std::array<int, 3> StencilDomain::coords_of(int rank) const noexcept {
    return {rank % procs[0], (rank / procs[0]) % procs[1], rank / (procs[0] * procs[1])};
}

int StencilDomain::rank_of(std::array<int, 3> c) const noexcept {
    return c[0] + procs[0] * (c[1] + procs[1] * c[2]);
}

int StencilDomain::neighbor(std::array<int, 3> c, std::array<int, 3> o) const noexcept {
    for (int d = 0; d < 3; ++d) {
        c[d] += o[d];
        if (c[d] < 0 || c[d] >= procs[d]) {
            if (boundary[d] != Boundary::Periodic || d >= dim) return -1;
            c[d] = (c[d] + procs[d]) % procs[d];
        }
    }
    return rank_of(c);
}

// ---- StencilGrid ------------------------------------------------------------------------------

struct StencilGrid::State {
    Comm comm;
    StencilDomain domain;
    std::array<int, 3> coords{};
};

StencilGrid::StencilGrid(const Comm& comm, const StencilDomain& domain) {
    // Every check below is a function of (domain, comm.size()) only, so a rank that fails is
    // joined by every rank passing the same domain; agree() catches ranks passing different ones.
    std::string err = domain.check();
    if (err.empty() && static_cast<std::int64_t>(domain.procs[0]) * domain.procs[1] * domain.procs[2] != comm.size())
        err = cat("StencilGrid: a ", domain.procs[0], " x ", domain.procs[1], " x ", domain.procs[2],
                  " rank grid does not match a communicator of ", comm.size(), " ranks");
    if (!err.empty()) throw Error(err);
    comm.agree({}, detail::fingerprint(domain), "StencilGrid");
    auto s = std::make_shared<State>();
    s->comm = comm.dup();
    s->domain = domain;
    s->coords = domain.coords_of(s->comm.rank());
    s_ = std::move(s);
}

const StencilDomain& StencilGrid::domain() const noexcept { return s_->domain; }
const Comm& StencilGrid::comm() const noexcept { return s_->comm; }
std::array<int, 3> StencilGrid::coords() const noexcept { return s_->coords; }
index_t StencilGrid::lo(int d) const noexcept { return s_->domain.lo(d, s_->coords[d]); }
index_t StencilGrid::n_loc(int d) const noexcept { return s_->domain.extent(d, s_->coords[d]); }
int StencilGrid::neighbor(std::array<int, 3> o) const noexcept { return s_->domain.neighbor(s_->coords, o); }

}  // namespace cala

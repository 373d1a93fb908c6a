#pragma once
// cala::stencil: Jacobi-style sweeps of a constant-coefficient stencil on a distributed 2D or 3D
// structured grid, with a halo of depth s (PA1 of Demmel et al.; thesis section 4.2.3).
//
// cala::stencil -> halo exchange (Comm::isend/irecv, every s steps) -> sweep kernel (OpenMP, cache
// blocked); the model (stencil_cost, stencil_time_per_step, choose_stencil_depth) counts the same.
//
// Each rank owns a block of the domain and keeps a halo of width h around it. Every s steps it
// receives a halo of width s·r (r: stencil radius) from its 4 (2D) or 6 (3D) face neighbours, then
// recomputes the halo points redundantly so that s steps run without talking:
//
//   s = 2, r = 1, 5-point, rank owning the o block:     step 1 computes o and the ring marked 1
//     . . . . . . . .                                    (the halo shrunk by r), step 2 only o;
//     . 1 1 1 1 1 1 .      . = received (width s·r = 2)  then the next exchange.
//     . 1 o o o o 1 .      1 = computed redundantly
//     . 1 o o o o 1 .          at the first step
//     . 1 1 1 1 1 1 .
//     . . . . . . . .
//
// The halo moves dimension by dimension: first the x faces, then the y faces grown along x by the
// x halo just received (and in 3D the z faces grown along x and y), so that edges and corners
// arrive through the face neighbours and no message of their own exists: at most 2·dim messages
// per exchange, 2·dim/s per step. (A star stencil reads no corner in a one-step cycle; its faces
// then travel ungrown and at once.)

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cala/comm.hpp"
#include "cala/types.hpp"

namespace cala {

namespace detail {
struct StencilAccess;  // lib/stencil: the buffers of a StencilField
}

/// What lies beyond the global domain along one dimension.
enum class Boundary {
    Dirichlet,  ///< fixed values, set by StencilField::fill and never updated
    Periodic,   ///< the domain wraps around
};

/// A structured domain and its Cartesian process decomposition. Pure description, no MPI.
///
/// Dimension d (0 = x, 1 = y, 2 = z) of n[d] points is split over procs[d] ranks in contiguous
/// blocks, the first n[d] mod procs[d] blocks one point longer. Rank of coordinates (cx, cy, cz)
/// is cx + procs[0]·(cy + procs[1]·cz). In 2D, n[2] and procs[2] are 1.
struct StencilDomain {
    int dim = 2;                                 ///< 2 or 3
    std::array<index_t, 3> n{1, 1, 1};           ///< global points per dimension
    std::array<int, 3> procs{1, 1, 1};           ///< ranks per dimension
    std::array<Boundary, 3> boundary{Boundary::Dirichlet, Boundary::Dirichlet, Boundary::Dirichlet};

    /// nx × ny over px × py ranks.
    static StencilDomain make_2d(index_t nx, index_t ny, int px, int py, Boundary bx = Boundary::Dirichlet,
                                 Boundary by = Boundary::Dirichlet);
    /// nx × ny × nz over px × py × pz ranks.
    static StencilDomain make_3d(index_t nx, index_t ny, index_t nz, int px, int py, int pz,
                                 Boundary bx = Boundary::Dirichlet, Boundary by = Boundary::Dirichlet,
                                 Boundary bz = Boundary::Dirichlet);

    /// Empty when the description is valid, else what is wrong (naming the field and its value).
    std::string check() const;
    /// procs[0]·procs[1]·procs[2].
    int nranks() const noexcept { return procs[0] * procs[1] * procs[2]; }
    /// First global index of process coordinate c along dimension d.
    index_t lo(int d, int c) const noexcept;
    /// Points process coordinate c owns along dimension d.
    index_t extent(int d, int c) const noexcept;
    /// Smallest extent along d over the process coordinates (the deepest halo d allows).
    index_t min_extent(int d) const noexcept;
    /// Process coordinates of a rank (x fastest).
    std::array<int, 3> coords_of(int rank) const noexcept;
    /// Rank of process coordinates c.
    int rank_of(std::array<int, 3> c) const noexcept;
    /// Rank of the neighbour at offset o (each component in {-1, 0, 1}) of coordinates c,
    /// wrapping periodic dimensions; -1 when it lies past a Dirichlet boundary.
    int neighbor(std::array<int, 3> c, std::array<int, 3> o) const noexcept;
};

/// One point of a stencil: offset (dx, dy, dz) and its coefficient.
template <class T>
struct StencilPoint {
    int dx = 0, dy = 0, dz = 0;  ///< offset (dz = 0 in 2D)
    T coef{};                    ///< coefficient
};

/// What the model needs from a stencil.
struct StencilShape {
    int dim = 2;     ///< 2 or 3
    int radius = 1;  ///< largest |offset| along any axis
    bool star = true;  ///< every point on an axis (else: treated as a box of the same radius)
};

/// A constant-coefficient stencil: u'(x) = sum over points p, in list order, of p.coef·u(x + p.offset),
/// evaluated as ((c0·u0 + c1·u1) + c2·u2) + ... in that order (so results are reproducible bit
/// for bit). A value type: building one is local (no communication).
template <class T>
class Stencil {
public:
    /// User-given points. Throws cala::Error if dim is not 2 or 3, points is empty, or a 2D stencil
    /// has a non-zero dz.
    Stencil(int dim, std::vector<StencilPoint<T>> points);

    /// Star of radius r: coefs has 1 + 2·dim·r values, for the offsets centre, then per axis
    /// x, y (, z): -r, ..., -1, +1, ..., +r.
    static Stencil star(int dim, int radius, std::span<const T> coefs);
    /// Box of radius r: coefs has (2r+1)^dim values, offsets in lexicographic order, x fastest:
    /// (-r,-r[,-r]), (-r+1,-r[,-r]), ..., (r,r[,r]).
    static Stencil box(int dim, int radius, std::span<const T> coefs);

    /// Presets (defaults: explicit heat-equation steps, coefficients summing to 1).
    /// 2D star of radius 1: centre, -x, +x, -y, +y.
    static Stencil five_point(T center = T(0.5), T side = T(0.125));
    /// 2D box of radius 1 (box order).
    static Stencil nine_point(T center = T(0.5), T side = T(1) / T(12), T corner = T(1) / T(24));
    /// 3D star of radius 1 (star order).
    static Stencil seven_point(T center = T(0.5), T face = T(1) / T(12));
    /// 3D box of radius 1 (box order): face, edge and corner by the number of non-zero offsets.
    static Stencil twenty_seven_point(T center = T(0.5), T face = T(1) / T(24), T edge = T(1) / T(72),
                                      T corner = T(1) / T(96));
    /// "5pt", "9pt", "7pt" or "27pt" with the default coefficients; else cala::Error.
    static Stencil preset(const std::string& name);

    int dim() const noexcept { return dim_; }          ///< 2 or 3
    int radius() const noexcept { return radius_; }    ///< largest |offset| along any axis
    bool is_star() const noexcept { return star_; }    ///< every point on an axis
    StencilShape shape() const noexcept { return {dim_, radius_, star_}; }  ///< for the model
    const std::vector<StencilPoint<T>>& points() const noexcept { return points_; }  ///< in order

private:
    int dim_ = 2, radius_ = 0;
    bool star_ = true;
    std::vector<StencilPoint<T>> points_;
};

/// A StencilDomain laid over a duplicate of a communicator. Cheap to copy: copies share the
/// communicator, freed with the last copy.
class StencilGrid {
public:
    /// Collective over `comm`. Throws cala::Error on every rank if the domain is invalid (see
    /// StencilDomain::check), if procs[0]·procs[1]·procs[2] != comm.size(), or if ranks pass
    /// different domains.
    StencilGrid(const Comm& comm, const StencilDomain& domain);

    const StencilDomain& domain() const noexcept;  ///< the decomposition
    const Comm& comm() const noexcept;  ///< the duplicate; rank r has coordinates domain().coords_of(r)
    std::array<int, 3> coords() const noexcept;  ///< this rank's process coordinates
    index_t lo(int d) const noexcept;     ///< first global index this rank owns along d
    index_t n_loc(int d) const noexcept;  ///< points this rank owns along d
    int neighbor(std::array<int, 3> o) const noexcept;  ///< see StencilDomain::neighbor

private:
    struct State;
    std::shared_ptr<const State> s_;
};

/// A distributed field on a StencilGrid: this rank's block plus a halo of width `halo` on every
/// side (in 2D, not along z), in two buffers (read one, write the other, swap). Local memory,
/// host, x fastest. Move-only.
template <class T>
class StencilField {
public:
    /// Collective over grid.comm(). Throws cala::Error on every rank if halo < 0 or halo exceeds
    /// the smallest local extent along some dimension (a halo comes from one neighbour only).
    StencilField(const StencilGrid& grid, int halo);
    StencilField(StencilField&&) noexcept;             ///< takes the buffers
    StencilField& operator=(StencilField&&) noexcept;  ///< frees its own, takes the other's
    StencilField(const StencilField&) = delete;
    StencilField& operator=(const StencilField&) = delete;
    ~StencilField();  ///< frees the buffers (local, no communication)

    const StencilGrid& grid() const noexcept { return grid_; }  ///< the grid it lives on
    int halo() const noexcept { return halo_; }                 ///< halo width of both buffers

    /// Sets u(i, j, k) = f(i, j, k) (global indices; k = 0 in 2D) at every owned point, and at
    /// every point past a Dirichlet boundary within the halo (there, i < 0 or i >= n[0] along a
    /// Dirichlet x, and so on; periodic coordinates are wrapped into [0, n)), in both buffers.
    /// Local: no communication.
    void fill(const std::function<T(index_t, index_t, index_t)>& f);

    /// Value at owned or halo point with global indices (i, j, k) of the current buffer.
    T at(index_t i, index_t j, index_t k = 0) const noexcept;
    /// Pointer to the owned point (lo(0), lo(1), lo(2)) of the current buffer; point
    /// (lo + a, lo + b, lo + c), -halo <= a < n_loc + halo, is data()[a + b·stride(1) + c·stride(2)].
    /// Valid until the next cala::stencil on this field.
    T* data() noexcept;
    const T* data() const noexcept;
    /// Distance in elements between neighbours along d (1 along x).
    index_t stride(int d) const noexcept;

    /// The owned points of every rank gathered on `root` as n[0]·n[1]·n[2] values, x fastest; an
    /// empty vector elsewhere. Collective over grid.comm() (its traffic is counted).
    std::vector<T> gather(int root = 0) const;

private:
    friend struct detail::StencilAccess;
    StencilGrid grid_;
    int halo_ = 0;
    std::array<index_t, 3> len_{};  ///< storage extents (owned + 2·halo; 1 along z in 2D)
    T* buf_[2] = {nullptr, nullptr};
    int cur_ = 0;
    index_t offset(index_t a, index_t b, index_t c) const noexcept;
    void release() noexcept;
};

/// Options of cala::stencil.
struct StencilOptions {
    /// s: steps between halo exchanges; each exchange moves a halo of width s·radius. s = 1 is
    /// the classic exchange every step.
    int depth = 1;
    /// Compute the first step's interior while the halo messages are in flight.
    bool overlap = true;
};

/// What one cala::stencil call did on this rank.
struct StencilStats {
    std::int64_t steps = 0;              ///< steps run
    std::int64_t exchanges = 0;          ///< halo exchanges (cycles of at most `depth` steps)
    std::int64_t updates = 0;            ///< point updates, owned and redundant
    std::int64_t redundant_updates = 0;  ///< updates of halo points (recomputed, not owned)
};

/// Runs `steps` sweeps u := S(u) of stencil `st` over the field (Jacobi: every point reads the
/// previous step's values). The last cycle is shorter when depth does not divide steps.
///
/// Collective over u.grid().comm(); every rank passes the same stencil, steps and options
/// (checked: a disagreement is a cala::Error on every rank). Local memory of u is read and
/// written in place (its two buffers).
/// @pre  st.dim() == the domain's dim, steps >= 0, depth >= 1, depth·st.radius() <= u.halo()
///       (which is <= every local extent); otherwise cala::Error on every rank, u untouched.
template <class T>
StencilStats stencil(StencilField<T>& u, const Stencil<T>& st, std::int64_t steps,
                     const StencilOptions& opts = {});

// ---- model (pure functions, no MPI) -----------------------------------------------------------

/// Exact traffic and work of cala::stencil on one rank (the Traffic convention of comm.hpp:
/// messages to oneself count nothing, so a periodic dimension over one rank costs no message).
struct StencilCost {
    std::int64_t msgs = 0;   ///< sent + received
    std::int64_t words = 0;  ///< sent + received, in elements
    std::int64_t msgs_sent = 0, words_sent = 0;  ///< sent only (= received: the exchange is symmetric)
    std::int64_t exchanges = 0;          ///< halo exchanges (cycles)
    std::int64_t updates = 0;            ///< point updates, owned and redundant
    std::int64_t redundant_updates = 0;  ///< updates of halo points
    std::int64_t cached_updates = 0;     ///< updates of steps 2..c of each cycle (swept together in cache)
};

/// Cost on the rank of coordinates `coords` of `steps` steps at depth s. Per cycle of c <= s
/// steps (width w = c·r): one message to and from each face neighbour (d, ±) (not past a
/// Dirichlet boundary, not oneself) of w · prod_{e<d} (n_loc_e + a_e) · prod_{e>d} n_loc_e words,
/// where a_e is w times the sides of e with a neighbour (oneself included) when the cycle reads
/// corners (a box stencil, or a star with c >= 2), else 0; then step t = 1..c updates the owned
/// block grown by (c - t)·r on every side that is not a Dirichlet boundary of the domain.
/// Throws cala::Error if the domain is invalid, depth < 1, steps < 0, or depth·r exceeds a local
/// extent.
StencilCost stencil_cost(const StencilDomain& domain, std::array<int, 3> coords, const StencilShape& shape,
                         int depth, std::int64_t steps);

/// Machine parameters of the time model.
struct StencilMachine {
    double latency_s = 0;                 ///< per message sent
    double bandwidth_bytes_per_s = 1e10;  ///< per rank, all its messages through one link
    double update_rate = 1e9;             ///< point updates per second per rank, one step at a time
    /// point updates per second per rank of steps 2..c of a cycle, which cala::stencil sweeps
    /// together, a wavefront at a time, in cache (0: update_rate)
    double cached_update_rate = 0;
};

/// latency·msgs_sent + elem_size·words_sent / bandwidth + (updates − cached_updates) / update_rate
/// + cached_updates / cached_update_rate (seconds; no overlap of communication and computation
/// assumed).
double stencil_time(const StencilCost& cost, const StencilMachine& m, std::size_t elem_size);

/// Predicted seconds per step in the steady state (one cycle of `depth` steps, divided by
/// depth), maximum over the ranks of the domain.
double stencil_time_per_step(const StencilDomain& domain, const StencilShape& shape, int depth,
                             const StencilMachine& m, std::size_t elem_size);

/// The depth s in [1, max_depth] (and s·r <= every local extent) with the smallest predicted time
/// per step; ties go to the smaller s.
int choose_stencil_depth(const StencilDomain& domain, const StencilShape& shape, const StencilMachine& m,
                         std::size_t elem_size, int max_depth = 256);

}  // namespace cala

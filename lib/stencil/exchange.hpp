#pragma once
// The deep-halo exchange of cala::stencil, dimension by dimension: faces only, one message to
// and from each face neighbour per cycle; edges and corners arrive in two (three) hops.
//
// Phase x moves the x faces; once they have arrived, phase y moves the y faces grown along x by
// the x halo just received; in 3D phase z moves the z faces grown along x and y. A corner of
// the halo thus comes from the diagonal neighbour through the face neighbours, and a rank sends
// 2·dim messages per cycle at most, whatever the stencil:
//
//   2D, rank o at (1, 1) of 3 x 3, width w:        phase y: the strip sent north is the
//     phase x: o sends its w-wide west and east        owned north strip grown by the w-wide
//     strips (w x n_y) to W and E, and receives        x halo on both sides ((n_x + 2w) x w),
//     theirs into its x halo;                          so N receives in its south halo the
//       . N .      x x x x x                           corners of W and E as well:
//       W o E      x[ o  ]x   x = x halo             y y y y y y y   y = sent north
//       . S .      x x x x x                         x[   o   ]x
//
// A star stencil reads no corner in a cycle of one step: the phases are then independent and
// all posted at once, with no growth. Regions to oneself (periodic over one rank) are plain
// copies. Messages to the same rank in different directions are told apart by the tag, the code
// of the direction from sender to receiver.
//
// The phases that start() cannot send yet have their faces packed there all the same: their
// owned points are final at start, and the sweep may overwrite them while the halo travels. When
// such a phase goes, only its halo points (received by the earlier phases) are packed again.
// The first phases whose faces all go to oneself (or nowhere) are complete when start() returns:
// ready() of them, whose halo the sweep may read at once.

#include <array>
#include <vector>

#include "cala/comm.hpp"
#include "cala/stencil.hpp"
#include "core/workspace.hpp"
#include "stencil/internal.hpp"

namespace cala::detail {

/// Growth along each dimension of the faces of later phases: grow[e][0] (low side) and
/// grow[e][1] (high side) are w where dimension e < d has a neighbour on that side (oneself
/// included) and the cycle reads corners, else 0.
using FaceGrowth = std::array<std::array<index_t, 2>, 3>;

/// Region of the halo received on side `side` (-1 or +1) of dimension d (width w).
Box face_recv_box(const std::array<index_t, 3>& n_loc, int d, int side, index_t w, const FaceGrowth& grow);
/// Region sent towards side `side` of dimension d: the owned strip of width w, grown along e < d.
Box face_send_box(const std::array<index_t, 3>& n_loc, int d, int side, index_t w, const FaceGrowth& grow);

template <class T>
class HaloExchange {
public:
    /// Buffers for halos up to `max_cycle` steps deep of a stencil of this shape.
    HaloExchange(const StencilGrid& g, const Layout& L, const StencilShape& shape, int max_cycle);

    /// Posts every receive of one cycle of `cycle` steps (width cycle·r) on buf, and the sends
    /// (or copies to oneself) of the first phase; of every phase when the cycle reads no corner.
    void start(T* buf, int cycle);
    /// Drives MPI progress; unpacks a phase whose receives are complete and sends the next one.
    void progress();
    /// Completes every phase (receives unpacked into buf's halo) and waits for the sends.
    void finish();
    /// The leading dimensions whose halo start() completed (faces to oneself or none only).
    int ready() const noexcept { return ready_; }

private:
    struct Face {
        int d, side;   ///< dimension, -1 or +1
        int nbr;       ///< -1: none (Dirichlet side); == rank: oneself
        index_t slot;  ///< offset of its send and receive slots (oneself: its send slot only)
    };
    const StencilGrid& grid_;
    Layout L_;
    StencilShape shape_;
    std::array<index_t, 3> n_loc_{};
    std::vector<Face> faces_;  ///< in phase order (x, then y, then z)
    Buffer<T> send_, recv_;
    std::array<std::vector<Request>, 3> recv_req_;
    std::vector<Request> send_req_;
    T* buf_ = nullptr;
    index_t width_ = 0;
    FaceGrowth grow_{};
    int sent_ = 0;      ///< phases whose sends are posted
    int ready_ = 0;     ///< phases complete when start() returned
    int unpacked_ = 0;  ///< phases whose receives are unpacked
    bool chained_ = false;  ///< phases wait for the previous one (the cycle reads corners)
    int packed_ = 0;        ///< phases whose faces are packed (all of them from start() on)

    void pack_phase(int d);    ///< packs the faces of d (or the strips copied to oneself) in their slots
    void send_phase(int d);    ///< sends (or copies to oneself) the faces of d, packing what is left
    void unpack_phase(int d);  ///< copies the received faces of d into the halo
    void advance(bool block);  ///< unpacks completed phases in order, sending the next ones
};

}  // namespace cala::detail

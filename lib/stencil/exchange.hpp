#pragma once
// The deep-halo exchange of cala::stencil: one message to and from each needed neighbour per
// cycle, posted non-blocking; regions to oneself (periodic over one rank) are plain copies.
//
//   2D, 3 x 2 ranks, periodic, rank 4 at (1, 1), width w:       y
//     to 3 (west) and 5 (east): a w x n_y strip each;            1 | 3 4 5
//     to 1 (south) and 1 (north, wrapped): n_x x w strips;       0 | 0 1 2
//     to 0 and 2: the w x w corners (south, and north wrapped)     +------ x
//   and the mirror images come back into the halo. Messages to the same rank in different
//   directions are told apart by the tag, the code of the direction from sender to receiver.

#include <array>
#include <vector>

#include "cala/comm.hpp"
#include "cala/stencil.hpp"
#include "core/workspace.hpp"
#include "stencil/internal.hpp"

namespace cala::detail {

/// Region of the halo received from direction o (width w).
Box recv_box(const std::array<index_t, 3>& n_loc, const std::array<int, 3>& o, index_t w);
/// Region of the owned block sent towards direction o (width w).
Box send_box(const std::array<index_t, 3>& n_loc, const std::array<int, 3>& o, index_t w);

template <class T>
class HaloExchange {
public:
    /// Buffers for halos up to `max_cycle` steps deep of a stencil of this shape.
    HaloExchange(const StencilGrid& g, const Layout& L, const StencilShape& shape, int max_cycle);

    /// Posts the receives and sends of one cycle of `cycle` steps (width cycle·r) on buf, and
    /// copies the regions this rank sends to itself.
    void start(T* buf, int cycle);
    /// Drives MPI progress on the pending messages.
    void progress();
    /// Waits for the receives and copies them into buf's halo; waits for the sends.
    void finish(T* buf);

private:
    struct Dir {
        std::array<int, 3> o;
        int nbr;               ///< -1: none (Dirichlet side); == rank: oneself
        index_t slot;          ///< offset of its send and receive slots
    };
    const StencilGrid& grid_;
    Layout L_;
    StencilShape shape_;
    std::array<index_t, 3> n_loc_{};
    std::vector<Dir> dirs_;
    Buffer<T> send_, recv_;
    std::vector<Request> recv_req_, send_req_;
    std::vector<std::size_t> posted_;  ///< indices into dirs_ of the receives in flight
    index_t width_ = 0;
};

}  // namespace cala::detail

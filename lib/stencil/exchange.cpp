// Deep-halo exchange: regions, packing, non-blocking messages (counted by Comm::isend/irecv).

#include "stencil/exchange.hpp"

#include <cstring>

namespace cala::detail {

namespace {

// Copies box b of buf (layout L) to or from the contiguous array flat, rows of x.
template <class T, bool ToFlat>
void copy_box(const Layout& L, T* buf, const Box& b, T* flat) {
    const std::size_t row = sizeof(T) * static_cast<std::size_t>(b.extent(0));
    for (index_t k = b.lo[2]; k < b.hi[2]; ++k)
        for (index_t j = b.lo[1]; j < b.hi[1]; ++j) {
            T* at = buf + L.index(b.lo[0], j, k);
            if constexpr (ToFlat) std::memcpy(flat, at, row);
            else std::memcpy(at, flat, row);
            flat += b.extent(0);
        }
}

}  // namespace

Box recv_box(const std::array<index_t, 3>& n, const std::array<int, 3>& o, index_t w) {
    Box b;
    for (int d = 0; d < 3; ++d) {
        b.lo[d] = o[d] < 0 ? -w : o[d] > 0 ? n[d] : 0;
        b.hi[d] = o[d] < 0 ? 0 : o[d] > 0 ? n[d] + w : n[d];
    }
    return b;
}

Box send_box(const std::array<index_t, 3>& n, const std::array<int, 3>& o, index_t w) {
    Box b;
    for (int d = 0; d < 3; ++d) {
        b.lo[d] = o[d] > 0 ? n[d] - w : 0;
        b.hi[d] = o[d] < 0 ? w : n[d];
    }
    return b;
}

template <class T>
HaloExchange<T>::HaloExchange(const StencilGrid& g, const Layout& L, const StencilShape& shape, int max_cycle)
    : grid_(g), L_(L), shape_(shape) {
    for (int d = 0; d < 3; ++d) n_loc_[d] = g.n_loc(d);
    const index_t wmax = static_cast<index_t>(max_cycle) * shape.radius;
    index_t slots = 0;
    for_each_direction(g.domain().dim, [&](const std::array<int, 3>& o) {
        const int nbr = g.neighbor(o);
        if (nbr < 0 || !direction_needed(shape, o, max_cycle)) return;
        dirs_.push_back({o, nbr, slots});
        if (nbr != g.comm().rank()) slots += recv_box(n_loc_, o, wmax).volume();
    });
    send_ = Buffer<T>(slots);
    recv_ = Buffer<T>(slots);
}

template <class T>
void HaloExchange<T>::start(T* buf, int cycle) {
    const Comm& comm = grid_.comm();
    width_ = static_cast<index_t>(cycle) * shape_.radius;
    posted_.clear();
    for (std::size_t i = 0; i < dirs_.size(); ++i) {
        const Dir& d = dirs_[i];
        if (d.nbr == comm.rank() || !direction_needed(shape_, d.o, cycle)) continue;
        const std::array<int, 3> back{-d.o[0], -d.o[1], -d.o[2]};
        recv_req_.push_back(comm.irecv(recv_.data() + d.slot, recv_box(n_loc_, d.o, width_).volume(), d.nbr,
                                       direction_code(back)));
        posted_.push_back(i);
    }
    for (const Dir& d : dirs_) {
        if (!direction_needed(shape_, d.o, cycle)) continue;
        const Box s = send_box(n_loc_, d.o, width_);
        if (d.nbr == comm.rank()) {
            // Periodic over one rank: my halo on side o is my own strip on the opposite side.
            const Box from = send_box(n_loc_, {-d.o[0], -d.o[1], -d.o[2]}, width_);
            const Box to = recv_box(n_loc_, d.o, width_);
            for (index_t k = 0; k < to.extent(2); ++k)
                for (index_t j = 0; j < to.extent(1); ++j)
                    std::memcpy(buf + L_.index(to.lo[0], to.lo[1] + j, to.lo[2] + k),
                                buf + L_.index(from.lo[0], from.lo[1] + j, from.lo[2] + k),
                                sizeof(T) * static_cast<std::size_t>(to.extent(0)));
            continue;
        }
        copy_box<T, true>(L_, buf, s, send_.data() + d.slot);
        send_req_.push_back(comm.isend(send_.data() + d.slot, s.volume(), d.nbr, direction_code(d.o)));
    }
}

template <class T>
void HaloExchange<T>::progress() {
    test_all(recv_req_);
    test_all(send_req_);
}

template <class T>
void HaloExchange<T>::finish(T* buf) {
    wait_all(recv_req_);
    for (std::size_t i : posted_) {
        const Dir& d = dirs_[i];
        copy_box<T, false>(L_, buf, recv_box(n_loc_, d.o, width_), recv_.data() + d.slot);
    }
    wait_all(send_req_);
    recv_req_.clear();
    send_req_.clear();
    posted_.clear();
}

template class HaloExchange<float>;
template class HaloExchange<double>;

}  // namespace cala::detail

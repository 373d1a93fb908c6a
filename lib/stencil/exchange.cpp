// Deep-halo exchange, dimension by dimension: face regions, packing, phases of non-blocking
// messages (counted by Comm::isend/irecv).

#include "stencil/exchange.hpp"

#include <algorithm>
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

// Packs again, into their places in flat, the points of b (rows of x, as copy_box packs them)
// that lie outside the owned block n along a dimension e in [e0, e1): the halo points a phase's
// face took from the earlier phases, which arrived after the face was first packed.
template <class T>
void repack_halo(const Layout& L, const T* buf, const Box& b, T* flat, const std::array<index_t, 3>& n, int e0, int e1) {
    auto along = [&](int e) { return e0 <= e && e < e1; };
    auto outside = [&](int e, index_t v) { return along(e) && (v < 0 || v >= n[e]); };
    for (index_t k = b.lo[2]; k < b.hi[2]; ++k)
        for (index_t j = b.lo[1]; j < b.hi[1]; ++j, flat += b.extent(0)) {
            const T* at = buf + L.index(b.lo[0], j, k);
            if (outside(1, j) || outside(2, k)) {
                std::memcpy(flat, at, sizeof(T) * static_cast<std::size_t>(b.extent(0)));
            } else if (along(0)) {
                const index_t lo = std::min(b.hi[0], index_t{0}) - b.lo[0], hi = std::max(b.lo[0], n[0]) - b.lo[0];
                if (lo > 0) std::memcpy(flat, at, sizeof(T) * static_cast<std::size_t>(lo));
                if (hi < b.extent(0))
                    std::memcpy(flat + hi, at + hi, sizeof(T) * static_cast<std::size_t>(b.extent(0) - hi));
            }
        }
}

std::array<int, 3> offset_of(int d, int side) {
    std::array<int, 3> o{0, 0, 0};
    o[d] = side;
    return o;
}

// Face box along d ([lo_d, hi_d)), grown along e < d, owned extent along e > d.
Box face_box(const std::array<index_t, 3>& n, int d, index_t lo_d, index_t hi_d, const FaceGrowth& grow) {
    Box b;
    for (int e = 0; e < 3; ++e) {
        b.lo[e] = e < d ? -grow[e][0] : 0;
        b.hi[e] = e < d ? n[e] + grow[e][1] : n[e];
    }
    b.lo[d] = lo_d;
    b.hi[d] = hi_d;
    return b;
}

}  // namespace

Box face_recv_box(const std::array<index_t, 3>& n, int d, int side, index_t w, const FaceGrowth& grow) {
    return side < 0 ? face_box(n, d, -w, 0, grow) : face_box(n, d, n[d], n[d] + w, grow);
}

Box face_send_box(const std::array<index_t, 3>& n, int d, int side, index_t w, const FaceGrowth& grow) {
    return side < 0 ? face_box(n, d, 0, w, grow) : face_box(n, d, n[d] - w, n[d], grow);
}

template <class T>
HaloExchange<T>::HaloExchange(const StencilGrid& g, const Layout& L, const StencilShape& shape, int max_cycle)
    : grid_(g), L_(L), shape_(shape) {
    for (int d = 0; d < 3; ++d) n_loc_[d] = g.n_loc(d);
    const index_t wmax = static_cast<index_t>(max_cycle) * shape.radius;
    FaceGrowth widest{};
    for (auto& e : widest) e = {wmax, wmax};
    index_t slots = 0;
    if (shape.radius > 0)
        for (int d = 0; d < g.domain().dim; ++d)
            for (int side : {-1, 1}) {
                const int nbr = g.neighbor(offset_of(d, side));
                if (nbr < 0) continue;
                faces_.push_back({d, side, nbr, slots});
                slots += face_recv_box(n_loc_, d, side, wmax, widest).volume();
            }
    send_ = Buffer<T>(slots);
    recv_ = Buffer<T>(slots);
}

template <class T>
void HaloExchange<T>::start(T* buf, int cycle) {
    const Comm& comm = grid_.comm();
    const int dim = grid_.domain().dim;
    buf_ = buf;
    width_ = static_cast<index_t>(cycle) * shape_.radius;
    chained_ = !shape_.star || cycle >= 2;
    grow_ = {};
    if (chained_)
        for (const Face& f : faces_) grow_[f.d][f.side < 0 ? 0 : 1] = width_;
    for (const Face& f : faces_) {
        if (f.nbr == comm.rank()) continue;
        const Box b = face_recv_box(n_loc_, f.d, f.side, width_, grow_);
        recv_req_[f.d].push_back(
            comm.irecv(recv_.data() + f.slot, b.volume(), f.nbr, direction_code(offset_of(f.d, -f.side))));
    }
    sent_ = unpacked_ = packed_ = 0;
    send_phase(0);
    if (!chained_)
        while (sent_ < dim) send_phase(sent_);
    advance(false);  // past phases with nothing to receive (Dirichlet sides, copies to oneself)
    ready_ = 0;  // the leading phases with nothing to receive, complete now
    while (ready_ < dim && std::none_of(faces_.begin(), faces_.end(), [&](const Face& f) {
               return f.d == ready_ && f.nbr != comm.rank();
           }))
        ++ready_;
    // The phases still to send: their owned points now, before the sweep overwrites them.
    for (int d = sent_; d < dim; ++d) pack_phase(d);
    packed_ = dim;
}

template <class T>
void HaloExchange<T>::pack_phase(int d) {
    const int me = grid_.comm().rank();
    for (const Face& f : faces_)
        if (f.d == d)
            copy_box<T, true>(L_, buf_, face_send_box(n_loc_, d, f.nbr == me ? -f.side : f.side, width_, grow_),
                              send_.data() + f.slot);
}

template <class T>
void HaloExchange<T>::send_phase(int d) {
    const Comm& comm = grid_.comm();
    const bool packed = d < packed_;  // packed at start: only the halo of phases ready_..d-1 is new
    for (const Face& f : faces_) {
        if (f.d != d) continue;
        if (f.nbr == comm.rank()) {
            // Periodic over one rank: my halo on this side is my own strip on the other side.
            const Box from = face_send_box(n_loc_, d, -f.side, width_, grow_);
            const Box to = face_recv_box(n_loc_, d, f.side, width_, grow_);
            if (packed) {
                repack_halo(L_, buf_, from, send_.data() + f.slot, n_loc_, ready_, d);
                copy_box<T, false>(L_, buf_, to, send_.data() + f.slot);
                continue;
            }
            const std::size_t row = sizeof(T) * static_cast<std::size_t>(to.extent(0));
            for (index_t k = 0; k < to.extent(2); ++k)
                for (index_t j = 0; j < to.extent(1); ++j)
                    std::memcpy(buf_ + L_.index(to.lo[0], to.lo[1] + j, to.lo[2] + k),
                                buf_ + L_.index(from.lo[0], from.lo[1] + j, from.lo[2] + k), row);
            continue;
        }
        const Box s = face_send_box(n_loc_, d, f.side, width_, grow_);
        if (packed) repack_halo(L_, buf_, s, send_.data() + f.slot, n_loc_, ready_, d);
        else copy_box<T, true>(L_, buf_, s, send_.data() + f.slot);
        send_req_.push_back(comm.isend(send_.data() + f.slot, s.volume(), f.nbr, direction_code(offset_of(d, f.side))));
    }
    ++sent_;
}

template <class T>
void HaloExchange<T>::unpack_phase(int d) {
    for (const Face& f : faces_)
        if (f.d == d && f.nbr != grid_.comm().rank())
            copy_box<T, false>(L_, buf_, face_recv_box(n_loc_, d, f.side, width_, grow_), recv_.data() + f.slot);
    recv_req_[d].clear();
    ++unpacked_;
}

template <class T>
void HaloExchange<T>::advance(bool block) {
    const int dim = grid_.domain().dim;
    while (unpacked_ < dim) {
        std::vector<Request>& rq = recv_req_[unpacked_];
        if (block) {
            wait_all(rq);
        } else {
            test_all(rq);
            if (!std::all_of(rq.begin(), rq.end(), [](const Request& r) { return r.done(); })) return;
        }
        unpack_phase(unpacked_);
        if (sent_ < dim && sent_ <= unpacked_) send_phase(sent_);
    }
}

template <class T>
void HaloExchange<T>::progress() {
    test_all(send_req_);
    advance(false);
}

template <class T>
void HaloExchange<T>::finish() {
    advance(true);
    wait_all(send_req_);
    send_req_.clear();
}

template class HaloExchange<float>;
template class HaloExchange<double>;

}  // namespace cala::detail

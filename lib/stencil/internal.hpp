#pragma once
// Internal pieces of cala::stencil shared by its sources: boxes in local coordinates, the storage
// layout of a field, argument fingerprints, and access to a field's buffers.

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "cala/stencil.hpp"

namespace cala::detail {

/// Half-open box [lo, hi) in local coordinates: 0 is this rank's first owned point along each
/// dimension, negative and >= n_loc are halo points.
struct Box {
    std::array<index_t, 3> lo{0, 0, 0}, hi{0, 0, 0};
    bool empty() const noexcept { return hi[0] <= lo[0] || hi[1] <= lo[1] || hi[2] <= lo[2]; }
    index_t volume() const noexcept {
        return empty() ? 0 : (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
    }
    index_t extent(int d) const noexcept { return hi[d] - lo[d]; }
};

/// Storage of one buffer: halo h[d] on each side, len[d] points in all, x fastest.
struct Layout {
    std::array<index_t, 3> h{0, 0, 0}, len{1, 1, 1};
    index_t stride(int d) const noexcept { return d == 0 ? 1 : d == 1 ? len[0] : len[0] * len[1]; }
    index_t index(index_t i, index_t j, index_t k) const noexcept {
        return (i + h[0]) + len[0] * ((j + h[1]) + len[1] * (k + h[2]));
    }
};

/// The buffers of a StencilField (friend of StencilField).
struct StencilAccess {
    template <class T> static T* buffer(StencilField<T>& f, int which) noexcept { return f.buf_[which]; }
    template <class T> static int current(const StencilField<T>& f) noexcept { return f.cur_; }
    template <class T> static void set_current(StencilField<T>& f, int which) noexcept { f.cur_ = which; }
    template <class T> static Layout layout(const StencilField<T>& f) noexcept {
        const int hz = f.grid().domain().dim == 3 ? f.halo() : 0;
        return Layout{{f.halo(), f.halo(), hz}, f.len_};
    }
};

/// FNV-1a over the bytes of trivially copyable values, for Comm::agree.
class Fingerprint {
public:
    template <class V> Fingerprint& add(const V& v) {
        static_assert(std::is_trivially_copyable_v<V>);
        unsigned char b[sizeof(V)];
        std::memcpy(b, &v, sizeof(V));
        for (unsigned char c : b) h_ = (h_ ^ c) * 0x100000001b3ull;
        return *this;
    }
    std::uint64_t value() const noexcept { return h_; }

private:
    std::uint64_t h_ = 0xcbf29ce484222325ull;
};

inline std::uint64_t fingerprint(const StencilDomain& d) {
    Fingerprint f;
    f.add(d.dim);
    for (int i = 0; i < 3; ++i) f.add(d.n[i]).add(d.procs[i]).add(static_cast<int>(d.boundary[i]));
    return f.value();
}

/// Message tag of the direction o (each component in {-1, 0, 1}) from sender to receiver.
inline int direction_code(const std::array<int, 3>& o) noexcept { return (o[0] + 1) + 3 * (o[1] + 1) + 9 * (o[2] + 1); }

}  // namespace cala::detail

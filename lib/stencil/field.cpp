// StencilField<T>: two halo-padded buffers of this rank's block; fill, access, gather.

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

#include "cala/stencil.hpp"
#include "core/check.hpp"
#include "core/workspace.hpp"
#include "stencil/internal.hpp"

namespace cala {

using detail::cat;

namespace {

// Buffers of 4 MiB and more are aligned to 2 MiB and asked for transparent huge pages (where
// the kernel leaves them to madvise): a sweep's rows and columns then cost few TLB misses.
template <class T>
T* allocate_zeroed(index_t count) {
    constexpr std::size_t huge = std::size_t{2} << 20;
    const std::size_t want = sizeof(T) * static_cast<std::size_t>(count);
    const std::size_t align = want >= 2 * huge ? huge : 64;
    const std::size_t bytes = (want + align - 1) / align * align;
    T* p = static_cast<T*>(std::aligned_alloc(align, bytes));
    if (p == nullptr) throw std::bad_alloc();
    if (align == huge) madvise(p, bytes, MADV_HUGEPAGE);  // a hint: failure changes nothing
    // Parallel first touch, as the sweep will touch it.
#pragma omp parallel for schedule(static)
    for (index_t i = 0; i < count; ++i) p[i] = T(0);
    return p;
}

index_t wrap(index_t g, index_t n) { return ((g % n) + n) % n; }

}  // namespace

template <class T>
StencilField<T>::StencilField(const StencilGrid& grid, int halo) : grid_(grid), halo_(halo) {
    static const char* axis[3] = {"x", "y", "z"};
    const StencilDomain& dom = grid.domain();
    std::string err;
    if (halo < 0) err = cat("StencilField: halo is ", halo, " (must be >= 0)");
    for (int d = 0; d < dom.dim && err.empty(); ++d)
        if (halo > dom.min_extent(d))
            err = cat("StencilField: halo ", halo, " exceeds the smallest local extent ", dom.min_extent(d), " along ",
                      axis[d], " (", dom.n[d], " points over ", dom.procs[d], " ranks)");
    grid.comm().agree(err, detail::Fingerprint().add(halo).value(), "StencilField");
    index_t count = 1;
    for (int d = 0; d < 3; ++d) {
        len_[d] = grid.n_loc(d) + (d < dom.dim ? 2 * static_cast<index_t>(halo) : 0);
        count *= len_[d];
    }
    buf_[0] = allocate_zeroed<T>(count);
    try {
        buf_[1] = allocate_zeroed<T>(count);
    } catch (...) {
        release();
        throw;
    }
}

template <class T>
StencilField<T>::StencilField(StencilField&& o) noexcept
    : grid_(o.grid_), halo_(o.halo_), len_(o.len_), cur_(o.cur_) {
    buf_[0] = std::exchange(o.buf_[0], nullptr);
    buf_[1] = std::exchange(o.buf_[1], nullptr);
}

template <class T>
StencilField<T>& StencilField<T>::operator=(StencilField&& o) noexcept {
    if (this != &o) {
        release();
        grid_ = o.grid_;
        halo_ = o.halo_;
        len_ = o.len_;
        cur_ = o.cur_;
        buf_[0] = std::exchange(o.buf_[0], nullptr);
        buf_[1] = std::exchange(o.buf_[1], nullptr);
    }
    return *this;
}

template <class T>
StencilField<T>::~StencilField() {
    release();
}

template <class T>
void StencilField<T>::release() noexcept {
    std::free(buf_[0]);
    std::free(buf_[1]);
    buf_[0] = buf_[1] = nullptr;
}

template <class T>
index_t StencilField<T>::offset(index_t a, index_t b, index_t c) const noexcept {
    return detail::StencilAccess::layout(*this).index(a, b, c);
}

template <class T>
void StencilField<T>::fill(const std::function<T(index_t, index_t, index_t)>& f) {
    const StencilDomain& dom = grid_.domain();
    const detail::Layout L = detail::StencilAccess::layout(*this);
    std::array<index_t, 3> lo{}, nl{};
    for (int d = 0; d < 3; ++d) {
        lo[d] = grid_.lo(d);
        nl[d] = grid_.n_loc(d);
    }
    for (index_t c = -L.h[2]; c < nl[2] + L.h[2]; ++c)
        for (index_t b = -L.h[1]; b < nl[1] + L.h[1]; ++b)
            for (index_t a = -L.h[0]; a < nl[0] + L.h[0]; ++a) {
                std::array<index_t, 3> g{lo[0] + a, lo[1] + b, lo[2] + c};
                const bool owned = a >= 0 && a < nl[0] && b >= 0 && b < nl[1] && c >= 0 && c < nl[2];
                bool exterior = false;
                for (int d = 0; d < dom.dim; ++d)
                    if (dom.boundary[d] == Boundary::Dirichlet && (g[d] < 0 || g[d] >= dom.n[d])) exterior = true;
                if (!owned && !exterior) continue;  // a neighbour's point: comes with the exchange
                for (int d = 0; d < dom.dim; ++d)
                    if (dom.boundary[d] == Boundary::Periodic) g[d] = wrap(g[d], dom.n[d]);
                const T v = f(g[0], g[1], g[2]);
                const index_t i = L.index(a, b, c);
                buf_[0][i] = v;
                buf_[1][i] = v;
            }
}

template <class T>
T StencilField<T>::at(index_t i, index_t j, index_t k) const noexcept {
    return buf_[cur_][offset(i - grid_.lo(0), j - grid_.lo(1), k - grid_.lo(2))];
}

template <class T>
T* StencilField<T>::data() noexcept {
    return buf_[cur_] + offset(0, 0, 0);
}

template <class T>
const T* StencilField<T>::data() const noexcept {
    return buf_[cur_] + offset(0, 0, 0);
}

template <class T>
index_t StencilField<T>::stride(int d) const noexcept {
    return detail::StencilAccess::layout(*this).stride(d);
}

template <class T>
std::vector<T> StencilField<T>::gather(int root) const {
    const StencilDomain& dom = grid_.domain();
    const Comm& comm = grid_.comm();
    constexpr int tag = 100;  // apart from the exchange tags 0..26
    const index_t mine = grid_.n_loc(0) * grid_.n_loc(1) * grid_.n_loc(2);
    detail::Buffer<T> pack(mine);
    {
        index_t q = 0;
        for (index_t c = 0; c < grid_.n_loc(2); ++c)
            for (index_t b = 0; b < grid_.n_loc(1); ++b) {
                std::memcpy(pack.data() + q, buf_[cur_] + offset(0, b, c), sizeof(T) * grid_.n_loc(0));
                q += grid_.n_loc(0);
            }
    }
    if (comm.rank() != root) {
        comm.isend(pack.data(), mine, root, tag).wait();
        return {};
    }
    std::vector<T> out(static_cast<std::size_t>(dom.n[0] * dom.n[1] * dom.n[2]));
    for (int r = 0; r < comm.size(); ++r) {
        const std::array<int, 3> pc = dom.coords_of(r);
        std::array<index_t, 3> lo{}, nl{};
        for (int d = 0; d < 3; ++d) {
            lo[d] = dom.lo(d, pc[d]);
            nl[d] = dom.extent(d, pc[d]);
        }
        detail::Buffer<T> tmp(r == root ? 0 : nl[0] * nl[1] * nl[2]);
        if (r != root) comm.irecv(tmp.data(), tmp.size(), r, tag).wait();
        const T* src = r == root ? pack.data() : tmp.data();
        for (index_t c = 0; c < nl[2]; ++c)
            for (index_t b = 0; b < nl[1]; ++b)
                std::memcpy(out.data() + lo[0] + dom.n[0] * ((lo[1] + b) + dom.n[1] * (lo[2] + c)),
                            src + nl[0] * (b + nl[1] * c), sizeof(T) * nl[0]);
    }
    return out;
}

template class StencilField<float>;
template class StencilField<double>;

}  // namespace cala

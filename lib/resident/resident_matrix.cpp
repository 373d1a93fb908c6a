// ResidentMatrix: allocation on the device (collective: a cap exceeded on one rank fails on all),
// local copies to and from the host, and gather / scatter / redistribute staged through host
// memory over the host redistribution (lib/matrix).

#include <algorithm>
#include <cstring>
#include <utility>

#include "core/check.hpp"
#include "core/workspace.hpp"
#include "matrix/redistribute_impl.hpp"
#include "resident/stage.hpp"

namespace cala {

namespace {

template <class T>
std::string alloc_error(const ResidentDevice& dev, std::int64_t bytes, int rank, const std::string& what) {
    return detail::cat("ResidentMatrix: allocating ", bytes, " bytes on ", dev.name(), " (rank ", rank, ", ",
                       dev.used_bytes(), " of ", dev.budget_bytes(), " bytes in use) failed: ", what);
}

}  // namespace

template <class T>
ResidentMatrix<T>::ResidentMatrix(const Grid2D& grid, const BlockCyclic& layout, const ResidentDevice& dev)
    : grid_(grid), layout_(layout), dev_(dev) {
    std::string err = detail::check_same_grid("ResidentMatrix", "layout", grid, layout, grid);
    if (err.empty()) {
        const index_t m_loc = this->m_loc(), n_loc = this->n_loc();
        ld_ = std::max<index_t>(1, m_loc);
        bytes_ = static_cast<std::int64_t>(sizeof(T)) * m_loc * n_loc;
        try {
            if (bytes_ > 0 && dev_.on_device()) data_ = static_cast<T*>(dev_.get()->allocate(bytes_));
            else if (bytes_ > 0) data_ = static_cast<T*>(detail::workspace_alloc(static_cast<std::size_t>(bytes_)));
        } catch (const Error& e) {
            err = alloc_error<T>(dev_, bytes_, grid.comm().rank(), e.what());
            data_ = nullptr;
        }
    }
    try {
        grid.comm().agree(err, detail::fingerprint(1469598103934665603ull, layout), "ResidentMatrix");
        fill(T(0));
    } catch (...) {
        release();
        throw;
    }
}

template <class T>
ResidentMatrix<T>::ResidentMatrix(const Grid2D& grid, index_t m, index_t n, index_t mb, index_t nb,
                                  const ResidentDevice& dev, int rsrc, int csrc)
    : ResidentMatrix(grid, BlockCyclic(m, n, mb, nb, grid.p(), grid.q(), rsrc, csrc), dev) {}

template <class T>
void ResidentMatrix<T>::release() noexcept {
    if (data_ == nullptr) return;
    if (dev_.on_device()) {
        try {
            dev_.get()->synchronize();  // no pending work on the memory (CudaDevice orders it anyway)
        } catch (...) {
        }
        dev_.get()->release(data_, bytes_);
    } else {
        detail::workspace_free(data_, static_cast<std::size_t>(bytes_));
    }
    data_ = nullptr;
}

template <class T>
ResidentMatrix<T>::~ResidentMatrix() {
    release();
}

template <class T>
ResidentMatrix<T>::ResidentMatrix(ResidentMatrix&& o) noexcept
    : grid_(o.grid_), layout_(o.layout_), dev_(o.dev_), data_(std::exchange(o.data_, nullptr)), ld_(o.ld_),
      bytes_(std::exchange(o.bytes_, 0)) {}

template <class T>
ResidentMatrix<T>& ResidentMatrix<T>::operator=(ResidentMatrix&& o) noexcept {
    if (this != &o) {
        release();
        grid_ = o.grid_, layout_ = o.layout_, dev_ = o.dev_, ld_ = o.ld_;
        data_ = std::exchange(o.data_, nullptr);
        bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
}

template <class T>
void ResidentMatrix<T>::fill(T value) {
    const index_t m_loc = this->m_loc(), n_loc = this->n_loc();
    if (m_loc == 0 || n_loc == 0) return;
    if (!on_device()) {
        for (index_t j = 0; j < n_loc; ++j) std::fill(data_ + j * ld_, data_ + j * ld_ + m_loc, value);
        return;
    }
    // A host block of whole columns, copied over the local array a block of columns at a time.
    const index_t cols = std::clamp<index_t>((index_t{1} << 20) / m_loc, 1, n_loc);
    std::vector<T> host(static_cast<std::size_t>(m_loc * cols), value);
    device::Device& d = *dev_.get();
    for (index_t j = 0; j < n_loc; j += cols)
        d.copy_to_device(detail::copy2d(data_ + j * ld_, ld_, host.data(), m_loc, m_loc, std::min(cols, n_loc - j)));
    d.synchronize();
}

template <class T>
void ResidentMatrix<T>::to_host(T* host, index_t ld_host) const {
    const index_t m_loc = this->m_loc(), n_loc = this->n_loc();
    if (m_loc == 0 || n_loc == 0) return;
    if (ld_host < m_loc) throw Error(detail::cat("ResidentMatrix::to_host: ld_host is ", ld_host, ", below ", m_loc));
    const auto c = detail::copy2d(host, ld_host, static_cast<const T*>(data_), ld_, m_loc, n_loc);
    if (!on_device()) {
        device::HostDevice(0).copy_to_host(c);  // a plain 2D memcpy
        return;
    }
    dev_.get()->copy_to_host(c);
    dev_.get()->synchronize();
}

template <class T>
void ResidentMatrix<T>::from_host(const T* host, index_t ld_host) {
    const index_t m_loc = this->m_loc(), n_loc = this->n_loc();
    if (m_loc == 0 || n_loc == 0) return;
    if (ld_host < m_loc) throw Error(detail::cat("ResidentMatrix::from_host: ld_host is ", ld_host, ", below ", m_loc));
    const auto c = detail::copy2d(data_, ld_, host, ld_host, m_loc, n_loc);
    if (!on_device()) {
        device::HostDevice(0).copy_to_device(c);
        return;
    }
    dev_.get()->copy_to_device(c);
    dev_.get()->synchronize();
}

template <class T>
MatrixRef<T> ResidentMatrix<T>::host_view() const {
    if (on_device())
        throw Error("ResidentMatrix::host_view: the matrix lives on " + dev_.name() + ", not in host memory");
    return MatrixRef<T>(grid_, layout_, data_, ld_);
}

namespace detail {

template <class T>
std::string check_resident_redistribute(const char* fn, Op op, const Side<T>& src, const Side<T>& dst) {
    std::string e = check_same_grid(fn, "src", *src.grid, src.layout, *src.grid);
    if (e.empty()) e = check_same_grid(fn, "dst", *dst.grid, dst.layout, *dst.grid);
    if (!e.empty()) return e;
    int cmp = MPI_UNEQUAL;
    CALA_CHECK_MPI(MPI_Comm_compare(src.grid->comm().get(), dst.grid->comm().get(), &cmp));
    if (cmp != MPI_IDENT && cmp != MPI_CONGRUENT)
        return cat(fn, ": the grids of src (", src.grid->p(), " x ", src.grid->q(), ") and dst (", dst.grid->p(), " x ",
                   dst.grid->q(), ") are not over the same ranks");
    const index_t m = op == Op::N ? src.layout.m() : src.layout.n(), n = op == Op::N ? src.layout.n() : src.layout.m();
    if (m != dst.layout.m() || n != dst.layout.n())
        return cat(fn, ": op(src) is ", m, " x ", n, " but dst is ", dst.layout.m(), " x ", dst.layout.n());
    for (const auto* s : {&src, &dst})
        if (s->data == nullptr && s->m_loc() > 0 && s->n_loc() > 0)
            return cat(fn, ": ", s == &src ? "src" : "dst", " has no local storage for ", s->m_loc(), " x ", s->n_loc());
    return {};
}

template <class T>
void redistribute_staged(Op op, const Side<T>& src, const Side<T>& dst) {
    const index_t sm = src.m_loc(), sn = src.n_loc(), dm = dst.m_loc(), dn = dst.n_loc();
    Buffer<T> sbuf(src.dev ? sm * sn : 0), dbuf(dst.dev ? dm * dn : 0);
    const T* sdata = src.data;
    index_t sld = src.ld;
    if (src.dev && sm > 0 && sn > 0) {
        src.dev->copy_to_host(copy2d(sbuf.data(), sm, static_cast<const T*>(src.data), src.ld, sm, sn));
        src.dev->synchronize();
        sdata = sbuf.data(), sld = sm;
    }
    T* ddata = dst.dev ? dbuf.data() : dst.data;
    const index_t dld = dst.dev ? std::max<index_t>(dm, 1) : dst.ld;
    redistribute_placed(op, dst.grid->comm(), placement_of(*src.grid, src.layout), sdata, std::max<index_t>(sld, 1),
                        placement_of(*dst.grid, dst.layout), ddata, dld, false, T(0));
    if (dst.dev && dm > 0 && dn > 0) {
        dst.dev->copy_to_device(copy2d(dst.data, dst.ld, static_cast<const T*>(dbuf.data()), dm, dm, dn));
        dst.dev->synchronize();
    }
}

}  // namespace detail

namespace {

template <class T>
void redistribute_sides(Op op, const detail::Side<T>& src, const detail::Side<T>& dst) {
    const std::string err = detail::check_resident_redistribute("redistribute", op, src, dst);
    std::uint64_t fp = detail::fingerprint(detail::fingerprint(1469598103934665603ull, src.layout), dst.layout);
    fp = detail::fingerprint(fp, &op, sizeof op);
    dst.grid->comm().agree(err, fp, "redistribute");
    detail::redistribute_staged(op, src, dst);
}

// The whole matrix in one block on root.
BlockCyclic whole_on(const Grid2D& g, index_t m, index_t n, int root) {
    const auto [rr, rc] = g.coords_of(root);
    return BlockCyclic(m, n, std::max<index_t>(m, 1), std::max<index_t>(n, 1), g.p(), g.q(), rr, rc);
}

template <class T>
std::string check_root(const char* fn, const Grid2D& g, int root) {
    if (root < 0 || root >= g.comm().size())
        return detail::cat(fn, ": root is ", root, ", not a rank of the grid's ", g.comm().size(), " ranks");
    return {};
}

}  // namespace

template <class T>
void redistribute(Op op, const ResidentMatrix<T>& src, ResidentMatrix<T>& dst) {
    redistribute_sides(op, detail::side_of(src), detail::side_of(dst));
}
template <class T>
void redistribute(Op op, const MatrixRef<T>& src, ResidentMatrix<T>& dst) {
    redistribute_sides(op, detail::side_of(src), detail::side_of(dst));
}
template <class T>
void redistribute(Op op, const ResidentMatrix<T>& src, const MatrixRef<T>& dst) {
    redistribute_sides(op, detail::side_of(src), detail::side_of(dst));
}

template <class T>
std::vector<T> gather(const ResidentMatrix<T>& a, int root) {
    const Grid2D& g = a.grid();
    const std::string err = check_root<T>("gather", g, root);
    g.comm().agree(err, detail::fingerprint(detail::fingerprint(1469598103934665603ull, a.layout()), &root, sizeof root),
                   "gather");
    DistMatrix<T> whole(g, whole_on(g, a.m(), a.n(), root));
    detail::redistribute_staged(Op::N, detail::side_of(a), detail::side_of(whole.view()));
    if (g.comm().rank() != root) return {};
    return std::vector<T>(whole.data(), whole.data() + a.m() * a.n());
}

template <class T>
void scatter(const T* global, index_t ldg, ResidentMatrix<T>& a, int root) {
    const Grid2D& g = a.grid();
    const index_t m = a.m(), n = a.n();
    const bool mine = g.comm().rank() == root;
    std::string err = check_root<T>("scatter", g, root);
    if (err.empty() && mine && n > 0 && ldg < std::max<index_t>(1, m))
        err = detail::cat("scatter: ldg is ", ldg, ", must be >= max(1, m = ", m, ") on the root");
    if (err.empty() && mine && m > 0 && n > 0 && global == nullptr)
        err = detail::cat("scatter: global is a null pointer with ", m, " x ", n, " elements on the root");
    g.comm().agree(err, detail::fingerprint(detail::fingerprint(1469598103934665603ull, a.layout()), &root, sizeof root),
                   "scatter");
    const MatrixRef<T> src(g, whole_on(g, m, n, root), mine ? const_cast<T*>(global) : nullptr,
                           mine ? std::max<index_t>(ldg, 1) : 1);
    detail::redistribute_staged(Op::N, detail::side_of(src), detail::side_of(a));
}

#define CALA_INST(T)                                                                                           \
    template class ResidentMatrix<T>;                                                                          \
    template std::string detail::check_resident_redistribute<T>(const char*, Op, const detail::Side<T>&,         \
                                                                const detail::Side<T>&);                       \
    template void detail::redistribute_staged<T>(Op, const detail::Side<T>&, const detail::Side<T>&);          \
    template void redistribute<T>(Op, const ResidentMatrix<T>&, ResidentMatrix<T>&);                           \
    template void redistribute<T>(Op, const MatrixRef<T>&, ResidentMatrix<T>&);                                \
    template void redistribute<T>(Op, const ResidentMatrix<T>&, const MatrixRef<T>&);                          \
    template std::vector<T> gather<T>(const ResidentMatrix<T>&, int);                                          \
    template void scatter<T>(const T*, index_t, ResidentMatrix<T>&, int);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala

// cala::potrf -> planner (model.cpp) -> make_chol_plan -> [conversion] -> potrf_engine -> [back]
//              -> (1 x 1 grid, one device) potrf_streamed (lib/device/): the triangle on the device
//              -> (more ranks, one device) the local arrays to it, potrf(ResidentMatrix) (lib/resident/)

#include <mpi.h>

#include <cstdint>
#include <limits>
#include <optional>

#include "cala/cholesky.hpp"
#include "cala/grid3d.hpp"
#include "cala/resident.hpp"
#include "cholesky/engine.hpp"
#include "cholesky/layered.hpp"
#include "cholesky/plan.hpp"
#include "cholesky/planner.hpp"
#include "comm/traffic.hpp"
#include "core/check.hpp"
#include "core/workspace.hpp"
#include "device/potrf_streamed.hpp"
#include "gemm/driver.hpp"
#include "kernels/blas.hpp"
#include "matrix/redistribute_impl.hpp"
#include "node/options.hpp"

namespace cala {

const char* to_string(CholeskyVariant v) noexcept {
    switch (v) {
        case CholeskyVariant::TwoD: return "2D";
        case CholeskyVariant::Repl: return "Repl";
        case CholeskyVariant::ReplPart: return "ReplPart";
        default: return "auto";
    }
}

namespace detail {

std::string check_potrf_options(const CholeskyOptions& o, int nranks) {
    using detail::cat;
    if (o.variant < CholeskyVariant::Auto || o.variant > CholeskyVariant::ReplPart)
        return cat("potrf: variant is ", static_cast<int>(o.variant), ", not a CholeskyVariant");
    if (o.panel < PanelMode::Single || o.panel > PanelMode::Shared)
        return cat("potrf: panel is ", static_cast<int>(o.panel), ", not a PanelMode");
    if (o.lookahead < 0) return cat("potrf: lookahead must be >= 0, got ", o.lookahead);
    if (o.block_size < 0) return cat("potrf: block_size must be >= 0, got ", o.block_size);
    if (o.memory_limit_bytes < 0) return cat("potrf: memory_limit_bytes must be >= 0, got ", o.memory_limit_bytes);
    if (o.delay < 0) return cat("potrf: delay must be >= 0, got ", o.delay);
    if (o.panel_threads < 0) return cat("potrf: panel_threads must be >= 0, got ", o.panel_threads);
    if (o.max_device_bytes < 0) return cat("potrf: max_device_bytes must be >= 0, got ", o.max_device_bytes);
    if (std::string e = node::detail::units_error(o.devices, o.unit_speeds, o.node_strategy, "potrf"); !e.empty())
        return e;
    const auto& g = o.grid3d;
    if (g.p < 0 || g.q < 0 || g.c < 0) return cat("potrf: grid3d must not be negative, got ", g.p, "x", g.q, "x", g.c);
    const bool layered = o.variant == CholeskyVariant::Repl || o.variant == CholeskyVariant::ReplPart;
    if (layered && (g.p > 0 || g.q > 0 || g.c > 0)) {
        if (g.p == 0 || g.q == 0 || g.c == 0)
            return cat("potrf: grid3d must give p, q and h together, got ", g.p, "x", g.q, "x", g.c);
        if (std::int64_t(g.p) * g.q * g.c > nranks)
            return cat("potrf: grid3d ", g.p, "x", g.q, "x", g.c, " needs ", std::int64_t(g.p) * g.q * g.c,
                       " ranks, the grid has ", nranks);
    }
    if (!layered && o.variant != CholeskyVariant::Auto && (g.p > 0 || g.q > 0 || g.c > 0))
        return cat("potrf: grid3d is for the 2.5D variants (Repl, ReplPart), not ", to_string(o.variant));
    return {};
}

template <class T>
std::string check_potrf(Uplo uplo, const MatrixRef<T>& a, const CholeskyOptions& o) {
    using detail::cat;
    if (uplo != Uplo::Lower && uplo != Uplo::Upper) return "potrf: uplo must be Lower or Upper";
    std::string e = detail::check_same_grid("potrf", "A", a.grid(), a.layout(), a.grid());
    if (!e.empty()) return e;
    if (a.m() != a.n()) return cat("potrf: A must be square, got ", a.m(), " x ", a.n());
    e = detail::check_local("potrf", "A", a);
    if (!e.empty()) return e;
    return check_potrf_options(o, a.grid().comm().size());
}

namespace {

template <class T>
std::uint64_t potrf_fingerprint(Uplo uplo, const MatrixRef<T>& a, const CholeskyOptions& o) {
    std::uint64_t h = fingerprint(0, &uplo, sizeof uplo);
    h = fingerprint(h, a.layout());
    const std::int64_t opt[] = {static_cast<std::int64_t>(o.variant), o.lookahead, o.grid3d.p, o.grid3d.q, o.grid3d.c,
                                o.block_size, o.memory_limit_bytes, static_cast<std::int64_t>(o.panel), o.panel_threads,
                                o.max_device_bytes, o.delay};
    // The units of every rank's updates (a list that differs between ranks: an error on every rank).
    return node::detail::fingerprint_units(fingerprint(h, opt, sizeof opt), o.devices, o.unit_speeds, o.node_strategy);
}

// The first failed pivot over all ranks (0: none). Control traffic, like argument agreement.
index_t agree_info(const Comm& comm, index_t local) {
    std::int64_t v = local > 0 ? local : std::numeric_limits<std::int64_t>::max(), out = 0;
    CALA_CHECK_MPI(MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_MIN, comm.get()));
    if (comm.size() > 1) detail::count_control();
    return out == std::numeric_limits<std::int64_t>::max() ? 0 : out;
}

template <class T>
index_t run_2d(const CholPlan& plan, const MatrixRef<T>& a, const CholeskyOptions& o, const DeviceGemmOptions* dev) {
    const Grid2D& g = a.grid();
    EngineArgs args;
    args.g = plan.geom;
    args.row = g.row();
    args.col = g.col();
    args.row_comm = &g.row_comm();
    args.col_comm = &g.col_comm();
    args.lookahead = o.lookahead;
    args.panel = o.panel;
    args.panel_threads = o.panel_threads;
    args.devices = dev;
    args.node_shared = o.node_shared_memory;
    if (!plan.convert) return potrf_engine(args, a.data(), a.ld());
    const index_t mloc = plan.work.rows.local_size(g.row()), nloc = plan.work.cols.local_size(g.col());
    const index_t ld = std::max<index_t>(1, mloc);
    Buffer<T> store(mloc * nloc);
    const MatrixRef<T> w(g, plan.work, store.data(), ld);
    redistribute_unchecked(plan.op, a, w);
    const index_t info = potrf_engine(args, store.data(), ld);
    redistribute_unchecked(plan.op, MatrixRef<T>(w), a);
    return info;
}

template <class T>
index_t run_layered(const CholPlan& plan, const MatrixRef<T>& a, const CholeskyOptions& o,
                    const DeviceGemmOptions* dev) {
    const Grid3D& g3 = grid3d_for(a.grid(), Shape3{plan.p, plan.q, plan.h});
    const Placement user = placement_of(a.grid(), a.layout());
    const Placement compact = chol_compact_placement(plan);
    const LayeredShares sh(plan, g3);
    Buffer<T> cstore(sh.cm * sh.cn);
    redistribute_placed(plan.op, g3.comm(), user, a.data(), a.ld(), compact, cstore.data(), sh.cld, false, T(0));
    index_t info = 0;
    if (g3.active()) {
        const CholGeom& geo = plan.geom;
        Buffer<T> w(sh.wm * sh.wn);
        kernels::scale(sh.wm, sh.wn, T(0), w.data(), sh.wld);
        copy_home_rows(plan, g3, sh, cstore.data(), w.data(), true);
        EngineArgs args;
        args.g = geo;
        args.layer = g3.layer();
        args.row = g3.row();
        args.col = g3.col();
        args.row_comm = &g3.layer_grid().row_comm();
        args.col_comm = &g3.layer_grid().col_comm();
        args.fiber = &g3.fiber_comm();
        args.lookahead = o.lookahead;
        args.panel = o.panel;
        args.panel_threads = o.panel_threads;
        args.devices = dev;
        info = potrf_engine(args, w.data(), sh.wld);
        copy_home_rows(plan, g3, sh, cstore.data(), w.data(), false);
    }
    redistribute_placed(plan.op, g3.comm(), compact, cstore.data(), sh.cld, user, a.data(), a.ld(), false, T(0));
    return info;
}

// The one device of a 1 x 1 grid whose options name exactly one (not "cpu", not a node list):
// its list entry, else "" (the 2D / 2.5D engines run).
std::string streamed_device(const Comm& comm, const CholeskyOptions& o) {
    if (comm.size() != 1) return {};
    const std::vector<std::string> items = node::detail::split_list(node::detail::resolve_devices(o.devices));
    return items.size() == 1 && items.front() != "cpu" ? items.front() : std::string{};
}

}  // namespace
}  // namespace detail

ResidentPotrfOptions resident_potrf_options(const CholeskyOptions& o) {
    ResidentPotrfOptions r{.lookahead = o.lookahead == 0 ? 0 : 1};
    if (o.variant == CholeskyVariant::Repl || o.variant == CholeskyVariant::ReplPart) {
        r.variant = o.variant;
        r.grid3d = o.grid3d;
        r.block_size = o.block_size;
        r.memory_limit_bytes = o.memory_limit_bytes;
    }
    return r;
}

namespace detail {
namespace {

// More than one rank and one device named (not "cpu", not a list): every rank's local array goes
// to that device, the resident Cholesky (lib/resident: NCCL or MPI-staged panels, cuSOLVER /
// cuBLAS on the tiles) factors it there, and it comes back. -1 where the device cannot hold the
// local array and the resident algorithm's slots (a cala::Error on every rank, A untouched): the
// 2D / 2.5D engines then run, their local updates on the device.
template <class T>
index_t potrf_resident(Uplo uplo, const MatrixRef<T>& a, const CholeskyOptions& o) {
    if (a.grid().comm().size() == 1) return -1;
    const std::vector<std::string> items = node::detail::split_list(node::detail::resolve_devices(o.devices));
    if (items.size() != 1 || items.front() == "cpu") return -1;
    const ResidentDevice dev = ResidentDevice::open(items.front(), o.max_device_bytes);
    std::optional<ResidentMatrix<T>> r;
    try {
        r.emplace(a.grid(), a.layout(), dev);  // collective: fails on every rank or on none
    } catch (const Error&) {
        return -1;
    }
    r->from_host(a.data(), a.ld());
    index_t info = 0;
    try {
        info = cala::potrf<T>(uplo, *r, resident_potrf_options(o));
    } catch (const Error&) {  // the slots did not fit (every rank, before anything changed)
        return -1;
    }
    r->to_host(a.data(), a.ld());
    return info;
}

}  // namespace
}  // namespace detail

template <class T>
index_t potrf(Uplo uplo, const MatrixRef<T>& a, const CholeskyOptions& opts) {
    const Comm& comm = a.grid().comm();
    std::string err = detail::check_potrf(uplo, a, opts);
    if (err.empty()) err = node::detail::devices_error(opts.devices, opts.max_device_bytes, "potrf");
    const std::uint64_t fp = err.empty() ? detail::potrf_fingerprint(uplo, a, opts) : 0;
    comm.agree(err, fp, "potrf");
    if (a.m() == 0) return 0;
    if (const std::string one = detail::streamed_device(comm, opts); !one.empty()) {
        // The whole matrix is local: it streams through one device that holds its triangle.
        auto devs = device::make_devices(one, opts.max_device_bytes);
        return device::potrf_streamed<T>(*devs.front(), uplo == Uplo::Lower, a.n(), a.data(), a.ld());
    }
    if (const index_t info = detail::potrf_resident(uplo, a, opts); info >= 0) return info;
    const CholeskyOptions o = detail::resolve_potrf(uplo, a.layout(), a.grid().order(), opts, sizeof(T), is_complex_v<T>);
    const detail::CholPlan plan = detail::make_chol_plan(uplo, a.layout(), comm.size(), o);
    // The user's unit options (the planner's choice carries only what it plans).
    DeviceGemmOptions dev;
    const std::vector<double> speeds =
        node::detail::agree_speeds(comm, opts.devices, opts.max_device_bytes, opts.unit_speeds, "potrf");
    const bool on_dev = node::detail::local_devices(opts.devices, opts.max_device_bytes, speeds, opts.node_strategy, dev);
    const DeviceGemmOptions* d = on_dev ? &dev : nullptr;
    const index_t local = plan.h > 1 ? detail::run_layered(plan, a, o, d) : detail::run_2d(plan, a, o, d);
    return detail::agree_info(comm, local);
}

#define CALA_INST(T)                                                                                   \
    template std::string detail::check_potrf<T>(Uplo, const MatrixRef<T>&, const CholeskyOptions&);     \
    template index_t potrf<T>(Uplo, const MatrixRef<T>&, const CholeskyOptions&);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala

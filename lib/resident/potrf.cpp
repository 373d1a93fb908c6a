// cala::potrf on a resident matrix -> checks, transport, plan (this file) -> one Device::potrf on
//   a 1 x 1 grid | resident_potrf_2d (potrf_2d.cpp: 2D right-looking, lookahead 1) |
//   resident_potrf_25d (potrf_25d.cpp: the layered plan of the host planner, each layer the same
//   engine with the fiber steps) -> panel transport (NCCL | MPI staged) -> Device::potrf / trsm /
//   herk / gemm (CudaDevice: cuSOLVER, cuBLAS; HostDevice: LAPACK, BLIS)

#include <mpi.h>

#include <limits>
#include <optional>

#include "cala/grid3d.hpp"
#include "cala/resident.hpp"
#include "cholesky/plan.hpp"
#include "cholesky/planner.hpp"
#include "gemm/driver.hpp"
#include "comm/traffic.hpp"
#include "core/check.hpp"
#include "matrix/redistribute_impl.hpp"
#include "resident/checks.hpp"
#include "resident/potrf_25d.hpp"
#include "resident/potrf_2d.hpp"
#include "resident/transport.hpp"

namespace cala {

namespace {

// The host Cholesky's options for the layered variants (the planner resolves Auto and a zero grid).
CholeskyOptions chol_options(const ResidentPotrfOptions& o) {
    return {.variant = o.variant, .lookahead = o.lookahead, .grid3d = o.grid3d, .block_size = o.block_size,
            .memory_limit_bytes = o.memory_limit_bytes};
}

template <class T>
std::string check_resident_potrf(Uplo uplo, const ResidentMatrix<T>& a, const ResidentPotrfOptions& o, int kind_lo,
                                 int kind_hi, std::optional<detail::CholPlan>& layered) {
    using detail::cat;
    if (uplo != Uplo::Lower && uplo != Uplo::Upper)
        return cat("potrf: uplo is ", static_cast<int>(uplo), ", must be Lower or Upper");
    std::string e = detail::check_same_grid("potrf", "A", a.grid(), a.layout(), a.grid());
    if (!e.empty()) return e;
    if (a.m() != a.n()) return cat("potrf: A must be square, got ", a.m(), " x ", a.n());
    if (o.lookahead < 0 || o.lookahead > 1) return cat("potrf: lookahead is ", o.lookahead, ", must be 0 or 1");
    const int nranks = a.grid().comm().size();
    if (e = detail::check_potrf_options(chol_options(o), nranks); !e.empty()) return e;
    if (e = detail::memory_error("potrf", "A lives", o.transport, kind_lo, kind_hi); !e.empty()) return e;
    if (o.variant != CholeskyVariant::TwoD && a.m() > 0 && nranks > 1) {
        try {  // the same answer on every rank: the inputs agree
            const CholeskyOptions co = detail::resolve_potrf(uplo, a.layout(), a.grid().order(), chol_options(o),
                                                             sizeof(T), is_complex_v<T>);
            if (co.variant != CholeskyVariant::TwoD) layered = detail::make_chol_plan(uplo, a.layout(), nranks, co);
        } catch (const Error& x) {
            return x.what();
        }
    }
    if (!a.on_device() || a.m() == 0 || nranks == 1) return {};
    if (layered) {
        const index_t work = detail::resident_potrf_workspace_25d(*layered, a.grid().comm().rank());
        return detail::workspace_error("potrf", "layered factorization", work * std::int64_t(sizeof(T)), a.device(),
                                       a.grid().comm().rank());
    }
    const BlockCyclic wl = detail::res_potrf_layout(a.layout());
    const auto g = detail::res_potrf_geom(uplo == Uplo::Upper, wl, a.grid().row(), a.grid().col());
    const index_t work = wl == a.layout() ? 0 : wl.rows.local_size(a.grid().row()) * wl.cols.local_size(a.grid().col());
    return detail::workspace_error("potrf", "factorization", (g.slots().total() + work) * std::int64_t(sizeof(T)),
                                   a.device(), a.grid().comm().rank());
}

// The first failed minor over all ranks (0: none). Control traffic, like argument agreement.
index_t agree_info(const Comm& comm, index_t local) {
    std::int64_t v = local > 0 ? local : std::numeric_limits<std::int64_t>::max(), out = 0;
    CALA_CHECK_MPI(MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_MIN, comm.get()));
    if (comm.size() > 1) detail::count_control();
    return out == std::numeric_limits<std::int64_t>::max() ? 0 : out;
}

}  // namespace

template <class T>
index_t potrf(Uplo uplo, ResidentMatrix<T>& a, const ResidentPotrfOptions& opts) {
    const Grid2D& grid = a.grid();
    const Comm& comm = grid.comm();
    const auto [kind_lo, kind_hi] = detail::agree_kinds(grid, {&a.device()});
    std::optional<detail::CholPlan> layered;
    const std::string err = check_resident_potrf(uplo, a, opts, kind_lo, kind_hi, layered);
    std::uint64_t fp = 0;
    if (err.empty()) {
        const std::int64_t v[] = {static_cast<int>(uplo), opts.lookahead, static_cast<int>(opts.transport),
                                  static_cast<int>(opts.variant), opts.grid3d.p, opts.grid3d.q, opts.grid3d.c,
                                  opts.block_size, opts.memory_limit_bytes};
        fp = detail::fingerprint(detail::fingerprint(1469598103934665603ull, v, sizeof v), a.layout());
    }
    comm.agree(err, fp, "potrf");

    if (!a.on_device()) {  // host memory: the host algorithm (the layered one where the options name it)
        return opts.variant == CholeskyVariant::TwoD ? potrf(uplo, a.host_view())
                                                     : potrf(uplo, a.host_view(), chol_options(opts));
    }
    if (a.m() == 0) return 0;
    device::Device& dev = *a.device().get();
    if (comm.size() == 1) {  // the whole matrix is local: one device potrf (cuSOLVER's in-core rate)
        dev.potrf(device::scalar_of<T>(), uplo == Uplo::Lower, a.n(), a.data(), a.ld(), 0);
        const index_t info = dev.take_info();
        dev.synchronize();
        if (opts.report) *opts.report = {PanelTransport::Staged, "one rank: nothing travels", 0};
        return info;
    }
    std::string reason;
    const bool nccl = detail::pick_transport("potrf", grid, a.device(), opts.transport, "A", reason);
    if (layered) {
        const detail::CholPlan& plan = *layered;
        if (opts.report) {
            *opts.report = {nccl ? PanelTransport::Nccl : PanelTransport::Staged, reason,
                            detail::resident_potrf_workspace_25d(plan, comm.rank()) * std::int64_t(sizeof(T))};
            opts.report->grid3d = {plan.p, plan.q, plan.h};
        }
        const Grid3D& g3 = detail::grid3d_for(grid, detail::Shape3{plan.p, plan.q, plan.h});
        const index_t local = detail::resident_potrf_25d(plan, g3, detail::side_of(a), opts.lookahead, nccl,
                                                         a.device().ordinal());
        return agree_info(comm, local);
    }
    // A layout without square aligned tiles: redistributed into one on the device and back (staged).
    const BlockCyclic wl = detail::res_potrf_layout(a.layout());
    const bool convert = !(wl == a.layout());
    const index_t wm = wl.rows.local_size(grid.row()), wn = wl.cols.local_size(grid.col());
    const auto g = detail::res_potrf_geom(uplo == Uplo::Upper, wl, grid.row(), grid.col());
    if (opts.report)
        *opts.report = {nccl ? PanelTransport::Nccl : PanelTransport::Staged, reason,
                        (g.slots().total() + (convert ? wm * wn : 0)) * std::int64_t(sizeof(T))};
    detail::DeviceArray<T> store(dev, convert ? wm * wn : 0);
    const detail::Side<T> work = convert ? detail::Side<T>{&grid, wl, &dev, store.data(), std::max<index_t>(wm, 1)}
                                         : detail::side_of(a);
    if (convert) detail::redistribute_staged(Op::N, detail::side_of(a), work);
    const index_t local = detail::resident_potrf_2d(uplo == Uplo::Upper, work, opts.lookahead, nccl, a.device().ordinal());
    if (convert) detail::redistribute_staged(Op::N, work, detail::side_of(a));
    return agree_info(comm, local);
}

#define CALA_INST(T) template index_t potrf<T>(Uplo, ResidentMatrix<T>&, const ResidentPotrfOptions&);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala

// cala::potrs on resident matrices -> checks, transport, operand move (this file) -> two
//   Device::trsm on a 1 x 1 grid | resident_potrs_2d (potrs_2d.cpp: op = N, potrs_2d_trans.cpp:
//   op = C; the host potrs's loops and plan, cholesky/solve/trsm_plan.hpp) -> panel transport
//   (NCCL | MPI staged) -> Device::trsm / gemm (CudaDevice: cuBLAS; HostDevice: BLIS)

#include <mpi.h>

#include "cala/resident.hpp"
#include "cholesky/solve/trsm_plan.hpp"
#include "core/check.hpp"
#include "matrix/redistribute_impl.hpp"
#include "resident/checks.hpp"
#include "resident/potrs_2d.hpp"

namespace cala {

namespace {

template <class T>
std::string check_resident_potrs(Uplo uplo, const ResidentMatrix<T>& a, const ResidentMatrix<T>& b,
                                 const ResidentPotrfOptions& o, int kind_lo, int kind_hi) {
    using detail::cat;
    if (uplo != Uplo::Lower && uplo != Uplo::Upper)
        return cat("potrs: uplo is ", static_cast<int>(uplo), ", must be Lower or Upper");
    std::string e = detail::check_same_grid("potrs", "A", a.grid(), a.layout(), b.grid());
    if (e.empty()) e = detail::check_same_grid("potrs", "B", b.grid(), b.layout(), b.grid());
    if (!e.empty()) return e;
    if (a.m() != a.n()) return cat("potrs: A must be square, got ", a.m(), " x ", a.n());
    if (b.m() != a.n()) return cat("potrs: B has ", b.m(), " rows but A is ", a.n(), " x ", a.n());
    if (o.lookahead < 0 || o.lookahead > 1) return cat("potrs: lookahead is ", o.lookahead, ", must be 0 or 1");
    const int rank = b.grid().comm().rank();
    if (e = detail::same_device_error("potrs", "B", b.device(), "A", a.device(), rank); !e.empty()) return e;
    if (e = detail::memory_error("potrs", "the operands live", o.transport, kind_lo, kind_hi); !e.empty()) return e;
    if (!b.on_device()) return {};
    const auto plan = detail::plan_trsm(a.layout(), b.layout(), {.lookahead = o.lookahead});
    const index_t need = detail::res_potrs_workspace(uplo, plan, b.grid().row(), b.grid().col());
    return detail::workspace_error("potrs", "solve", need * std::int64_t(sizeof(T)), b.device(), rank);
}

}  // namespace

template <class T>
void potrs(Uplo uplo, const ResidentMatrix<T>& a, ResidentMatrix<T>& b, const ResidentPotrfOptions& opts) {
    const Grid2D& grid = b.grid();
    const auto [kind_lo, kind_hi] = detail::agree_kinds(grid, {&a.device(), &b.device()});
    const std::string err = check_resident_potrs(uplo, a, b, opts, kind_lo, kind_hi);
    std::uint64_t fp = 0;
    if (err.empty()) {
        const std::int64_t v[3] = {static_cast<int>(uplo), opts.lookahead, static_cast<int>(opts.transport)};
        fp = detail::fingerprint(detail::fingerprint(1469598103934665603ull, v, sizeof v), a.layout());
        fp = detail::fingerprint(fp, b.layout());
    }
    grid.comm().agree(err, fp, "potrs");

    if (opts.report) *opts.report = {PanelTransport::Staged, b.on_device() ? "nothing to solve" : "host memory", 0};
    if (!b.on_device()) {  // host memory on every rank: the host algorithm on the views
        potrs(uplo, a.host_view(), b.host_view(), TrsmOptions{.lookahead = opts.lookahead});
        return;
    }
    if (a.n() == 0 || b.n() == 0) return;
    device::Device& dev = *b.device().get();
    const device::Scalar s = device::scalar_of<T>();
    const bool lower = uplo == Uplo::Lower;
    if (grid.comm().size() == 1) {  // the whole matrices are local: two device solves in place
        const T one(1);
        dev.trsm(s, true, lower, lower ? Op::N : Op::C, false, b.m(), b.n(), &one, a.data(), a.ld(), b.data(), b.ld());
        dev.trsm(s, true, lower, lower ? Op::C : Op::N, false, b.m(), b.n(), &one, a.data(), a.ld(), b.data(), b.ld());
        dev.synchronize();
        if (opts.report) opts.report->reason = "one rank: nothing travels";
        return;
    }
    std::string reason;
    const bool nccl = detail::pick_transport("potrs", grid, b.device(), opts.transport, "operands", reason);
    // The host potrs's plan: A or B moved once into layouts that line up (staged, counted).
    const auto plan = detail::plan_trsm(a.layout(), b.layout(), {.lookahead = opts.lookahead});
    if (opts.report)
        *opts.report = {nccl ? PanelTransport::Nccl : PanelTransport::Staged, reason,
                        detail::res_potrs_workspace(uplo, plan, grid.row(), grid.col()) * std::int64_t(sizeof(T))};
    const BlockCyclic& ml = plan.move_a ? plan.a_layout : plan.b_layout;
    const index_t mm = ml.rows.local_size(grid.row()), mn = ml.cols.local_size(grid.col());
    detail::DeviceArray<T> store(dev, plan.move_a || plan.move_b ? mm * mn : 0);
    const detail::Side<T> moved{&grid, ml, &dev, store.data(), std::max<index_t>(mm, 1)};
    const detail::Side<T> a2 = plan.move_a ? moved : detail::side_of(a);
    const detail::Side<T> b2 = plan.move_b ? moved : detail::side_of(b);
    if (plan.move_a) detail::redistribute_staged(Op::N, detail::side_of(a), a2);
    if (plan.move_b) detail::redistribute_staged(Op::N, detail::side_of(b), b2);
    detail::resident_potrs_2d(uplo, opts.lookahead, a2, b2, nccl, b.device().ordinal());
    if (plan.move_b) detail::redistribute_staged(Op::N, b2, detail::side_of(b));
}

#define CALA_INST(T) \
    template void potrs<T>(Uplo, const ResidentMatrix<T>&, ResidentMatrix<T>&, const ResidentPotrfOptions&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala

// cala::trsm on resident matrices -> checks, transport, the host trsm's plan (this file) -> one
//   Device::trsm on a 1 x 1 grid | B into a transposed copy (right side: redistribute T or C, on
//   the device, staged) -> A or B moved into layouts that line up (plan_trsm) -> B scaled by alpha
//   -> resident_solves_2d (potrs_2d.cpp: op = N, potrs_2d_trans.cpp: op = T/C) -> panel transport
//   (NCCL | MPI staged) -> Device::trsm / gemm (CudaDevice: cuBLAS; HostDevice: BLIS)
//
// The moves, the loops and their messages are the host cala::trsm's (lib/cholesky/solve/trsm.cpp),
// so that the host trsm_cost is this one's traffic (resident_trsm_cost below).

#include "cala/resident.hpp"
#include "cholesky/solve/trsm_plan.hpp"
#include "core/check.hpp"
#include "matrix/redistribute_impl.hpp"
#include "resident/checks.hpp"
#include "resident/potrs_2d.hpp"

namespace cala {

namespace {

// The left-side problem the loops solve: op, the layout of B there (B itself, or its transposed
// copy on the right side), and the plan on it.
struct LeftProblem {
    Op op = Op::N;
    bool right = false;
    detail::RightProblem rp;
    detail::TrsmPlan plan;
};

LeftProblem left_problem(Side side, Op op, const BlockCyclic& a, const BlockCyclic& b, int lookahead) {
    LeftProblem l;
    l.op = op;
    l.right = side == Side::Right;
    const BlockCyclic* bl = &b;
    if (l.right) {
        l.rp = detail::right_problem(op, a, b);
        l.op = l.rp.op;
        bl = &l.rp.bt_layout;
    }
    l.plan = detail::plan_trsm(a, *bl, {.lookahead = lookahead});
    return l;
}

// Device elements beside A and B on process (row, col): the transposed copy of B (right side),
// the plan's moved operand and the loop's slots. None on one rank.
index_t res_trsm_workspace(const LeftProblem& l, int row, int col) {
    const BlockCyclic& bt = l.rp.bt_layout;
    if (l.plan.a_layout.p() * l.plan.a_layout.q() == 1) return 0;
    const index_t copy = l.right ? bt.rows.local_size(row) * bt.cols.local_size(col) : 0;
    return copy + detail::res_solve_workspace({l.op}, l.plan, row, col);
}

template <class T>
std::string check_resident_trsm(Side side, Uplo uplo, Op op, Diag diag, const ResidentMatrix<T>& a,
                                const ResidentMatrix<T>& b, const ResidentPotrfOptions& o, int kind_lo, int kind_hi) {
    using detail::cat;
    if (side != Side::Left && side != Side::Right) return cat("trsm: side is ", static_cast<int>(side), ", not a Side");
    if (uplo != Uplo::Lower && uplo != Uplo::Upper) return cat("trsm: uplo is ", static_cast<int>(uplo), ", not a Uplo");
    if (op != Op::N && op != Op::T && op != Op::C) return cat("trsm: op is ", static_cast<int>(op), ", not an Op");
    if (diag != Diag::NonUnit && diag != Diag::Unit) return cat("trsm: diag is ", static_cast<int>(diag), ", not a Diag");
    std::string e = detail::check_same_grid("trsm", "A", a.grid(), a.layout(), b.grid());
    if (e.empty()) e = detail::check_same_grid("trsm", "B", b.grid(), b.layout(), b.grid());
    if (!e.empty()) return e;
    if (a.m() != a.n()) return cat("trsm: A is ", a.m(), " x ", a.n(), ", not square");
    if (side == Side::Left && b.m() != a.n()) return cat("trsm: B has ", b.m(), " rows but A is ", a.n(), " x ", a.n());
    if (side == Side::Right && b.n() != a.n())
        return cat("trsm: B has ", b.n(), " columns but A is ", a.n(), " x ", a.n(), " (right side)");
    if (o.lookahead < 0 || o.lookahead > 1) return cat("trsm: lookahead is ", o.lookahead, ", must be 0 or 1");
    const int rank = b.grid().comm().rank();
    if (e = detail::same_device_error("trsm", "B", b.device(), "A", a.device(), rank); !e.empty()) return e;
    if (e = detail::memory_error("trsm", "the operands live", o.transport, kind_lo, kind_hi); !e.empty()) return e;
    if (!b.on_device()) return {};
    const LeftProblem l = left_problem(side, op, a.layout(), b.layout(), o.lookahead);
    const index_t need = res_trsm_workspace(l, b.grid().row(), b.grid().col());
    return detail::workspace_error("trsm", "solve", need * std::int64_t(sizeof(T)), b.device(), rank);
}

// B (m_loc x n_loc on the device) := alpha·B: a product of depth 0 (c := beta·c, BLAS semantics).
template <class T>
void scale_on_device(device::Device& dev, const detail::Side<T>& b, T alpha) {
    const index_t m = b.m_loc(), n = b.n_loc();
    if (m == 0 || n == 0 || alpha == T(1)) return;
    const T zero(0);
    dev.gemm(device::scalar_of<T>(), Op::N, Op::N, m, n, 0, &zero, b.data, b.ld, b.data, 1, &alpha, b.data, b.ld);
}

}  // namespace

template <class T>
void trsm(Side side, Uplo uplo, Op op, Diag diag, T alpha, const ResidentMatrix<T>& a, ResidentMatrix<T>& b,
          const ResidentPotrfOptions& opts) {
    const Grid2D& grid = b.grid();
    const auto [kind_lo, kind_hi] = detail::agree_kinds(grid, {&a.device(), &b.device()});
    const std::string err = check_resident_trsm(side, uplo, op, diag, a, b, opts, kind_lo, kind_hi);
    std::uint64_t fp = 0;
    if (err.empty()) {
        const std::int64_t v[6] = {static_cast<int>(side), static_cast<int>(uplo), static_cast<int>(op),
                                   static_cast<int>(diag), opts.lookahead, static_cast<int>(opts.transport)};
        fp = detail::fingerprint(detail::fingerprint(1469598103934665603ull, v, sizeof v), a.layout());
        fp = detail::fingerprint(detail::fingerprint(fp, b.layout()), &alpha, sizeof alpha);
    }
    grid.comm().agree(err, fp, "trsm");

    if (opts.report) *opts.report = {PanelTransport::Staged, b.on_device() ? "nothing to solve" : "host memory", 0};
    if (!b.on_device()) {  // host memory on every rank: the host algorithm on the views
        trsm(side, uplo, op, diag, alpha, a.host_view(), b.host_view(), TrsmOptions{.lookahead = opts.lookahead});
        return;
    }
    if (b.m() == 0 || b.n() == 0) return;
    if (alpha == T(0)) {  // B := 0; A is not read, nothing moves
        b.fill(T(0));
        return;
    }
    device::Device& dev = *b.device().get();
    const bool lower = uplo == Uplo::Lower, unit = diag == Diag::Unit;
    if (grid.comm().size() == 1) {  // the whole matrices are local: one device solve in place
        dev.trsm(device::scalar_of<T>(), side == Side::Left, lower, op, unit, b.m(), b.n(), &alpha, a.data(), a.ld(),
                 b.data(), b.ld());
        dev.synchronize();
        if (opts.report) opts.report->reason = "one rank: nothing travels";
        return;
    }
    std::string reason;
    const bool nccl = detail::pick_transport("trsm", grid, b.device(), opts.transport, "operands", reason);
    const LeftProblem l = left_problem(side, op, a.layout(), b.layout(), opts.lookahead);
    if (opts.report)
        *opts.report = {nccl ? PanelTransport::Nccl : PanelTransport::Staged, reason,
                        res_trsm_workspace(l, grid.row(), grid.col()) * std::int64_t(sizeof(T))};
    const auto local_elems = [&](const BlockCyclic& x) {
        return x.rows.local_size(grid.row()) * x.cols.local_size(grid.col());
    };
    // The right side: X·op(A) = alpha·B <=> op(A)ᵀ·Xᵀ = alpha·Bᵀ, or A·Xᴴ = conj(alpha)·Bᴴ (op = C).
    const BlockCyclic& btl = l.rp.bt_layout;
    detail::DeviceArray<T> tstore(dev, l.right ? local_elems(btl) : 0);
    const detail::Side<T> bleft =
        l.right ? detail::Side<T>{&grid, btl, &dev, tstore.data(), std::max<index_t>(btl.rows.local_size(grid.row()), 1)}
                : detail::side_of(b);
    if (l.right) detail::redistribute_staged(l.rp.move, detail::side_of(b), bleft);
    // The host trsm's plan on the left-side problem: A or B moved once into layouts that line up.
    const detail::TrsmPlan& plan = l.plan;
    const BlockCyclic& ml = plan.move_a ? plan.a_layout : plan.b_layout;
    detail::DeviceArray<T> store(dev, plan.move_a || plan.move_b ? local_elems(ml) : 0);
    const detail::Side<T> moved{&grid, ml, &dev, store.data(), std::max<index_t>(ml.rows.local_size(grid.row()), 1)};
    const detail::Side<T> a2 = plan.move_a ? moved : detail::side_of(a);
    const detail::Side<T> b2 = plan.move_b ? moved : bleft;
    if (plan.move_a) detail::redistribute_staged(Op::N, detail::side_of(a), a2);
    if (plan.move_b) detail::redistribute_staged(Op::N, bleft, b2);
    scale_on_device(dev, b2, l.right && op == Op::C ? conj_if(alpha, true) : alpha);
    detail::resident_solves_2d(lower, {l.op}, unit, opts.lookahead, a2, b2, nccl, b.device().ordinal());
    if (plan.move_b) detail::redistribute_staged(Op::N, b2, bleft);
    if (l.right) detail::redistribute_staged(l.rp.move, bleft, detail::side_of(b));
    dev.synchronize();
}

Cost resident_trsm_cost(Side side, Uplo uplo, Op op, const BlockCyclic& a, const BlockCyclic& b,
                        const ResidentPotrfOptions& opts, int row, int col, std::size_t elem_size, bool is_complex) {
    using detail::cat;
    const char* fn = "resident_trsm_cost";
    if (opts.lookahead < 0 || opts.lookahead > 1)
        throw Error(cat(fn, ": lookahead is ", opts.lookahead, ", must be 0 or 1"));
    // The host model checks the rest (side, uplo, op, shapes, grids, the process).
    Cost cost = trsm_cost(side, uplo, op, a, b, TrsmOptions{.lookahead = opts.lookahead}, row, col, elem_size,
                          is_complex);
    if (a.p() * a.q() == 1) return Cost{.flops = cost.flops};  // in place on the device
    if (a.n() == 0 || b.m() == 0 || b.n() == 0) return Cost{};
    cost.extra_bytes =
        res_trsm_workspace(left_problem(side, op, a, b, opts.lookahead), row, col) * std::int64_t(elem_size);
    return cost;
}

#define CALA_INST(T)                                                                                       \
    template void trsm<T>(Side, Uplo, Op, Diag, T, const ResidentMatrix<T>&, ResidentMatrix<T>&,            \
                          const ResidentPotrfOptions&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala

// cala::gemm on resident matrices -> checks, variant, transport, operand moves (this file: the
//   planner) -> resident_summa_c | resident_summa_a | resident_summa_b (engines) -> PanelMover
//   (NCCL | MPI staged: broadcasts and partial sums) -> Device::gemm / add

#include <mpi.h>

#include <algorithm>

#include "cala/gemm.hpp"
#include "comm/traffic.hpp"
#include "core/check.hpp"
#include "matrix/redistribute_impl.hpp"
#include "model/check.hpp"
#include "resident/checks.hpp"
#include "resident/plan.hpp"
#include "gemm/driver.hpp"
#include "resident/summa3d.hpp"
#include "resident/summa_ab.hpp"
#include "resident/summa_c.hpp"
#include "resident/transport.hpp"

namespace cala {

const char* to_string(PanelTransport t) noexcept {
    switch (t) {
        case PanelTransport::Staged: return "staged";
        case PanelTransport::Nccl: return "nccl";
        default: return "auto";
    }
}

namespace {

template <class T>
std::string check_resident_gemm(Op op_a, Op op_b, const ResidentMatrix<T>& a, const ResidentMatrix<T>& b,
                                const ResidentMatrix<T>& c, const ResidentGemmOptions& o, int kind_lo, int kind_hi) {
    using detail::cat;
    std::string e = detail::check_same_grid("gemm", "A", a.grid(), a.layout(), c.grid());
    if (e.empty()) e = detail::check_same_grid("gemm", "B", b.grid(), b.layout(), c.grid());
    if (e.empty()) e = detail::check_same_grid("gemm", "C", c.grid(), c.layout(), c.grid());
    if (!e.empty()) return e;
    if (e = detail::gemm_shape_error("gemm", op_a, op_b, a.layout(), b.layout(), c.layout()); !e.empty()) return e;
    if (o.lookahead < 1) return cat("gemm: lookahead is ", o.lookahead, ", must be >= 1");
    if (o.panel_width < 0) return cat("gemm: panel_width is ", o.panel_width, ", must be >= 0");
    if (o.variant < Variant::Auto || o.variant > Variant::StationaryB)
        return cat("gemm: variant is ", static_cast<int>(o.variant), ", not a Variant");
    if (o.memory_limit_bytes < 0) return cat("gemm: memory_limit_bytes is ", o.memory_limit_bytes, ", must be >= 0");
    if (e = detail::gemm_options_error("gemm", detail::resident_gemm_options(o), c.grid().p() * c.grid().q()); !e.empty()) return e;
    for (auto [name, x] : {std::pair{"A", &a}, std::pair{"B", &b}})
        if (e = detail::same_device_error("gemm", name, x->device(), "C", c.device(), c.grid().comm().rank());
            !e.empty())
            return e;
    return detail::memory_error("gemm", "the operands live", o.transport, kind_lo, kind_hi);
}

// Device elements this rank's part of the product holds beside its operands.
template <class T>
std::int64_t workspace_bytes(const detail::ResidentGemmPlan& plan, const ResidentMatrix<T>& c) {
    const Grid2D& g = c.grid();
    const index_t elems = plan.three ? detail::resident_workspace_3d(*plan.three, g.comm().rank())
                                     : detail::resident_workspace(plan.two, c.layout(), g.row(), g.col());
    return elems * std::int64_t(sizeof(T));
}

template <class T>
std::uint64_t resident_fingerprint(Op op_a, Op op_b, T alpha, const ResidentMatrix<T>& a, const ResidentMatrix<T>& b,
                                   T beta, const ResidentMatrix<T>& c, const ResidentGemmOptions& o) {
    using detail::fingerprint;
    std::uint64_t h = 1469598103934665603ull;
    const std::int64_t v[12] = {static_cast<int>(op_a), static_cast<int>(op_b), o.lookahead, o.panel_width,
                                static_cast<int>(o.transport), static_cast<int>(o.variant), o.grid3d.p, o.grid3d.q,
                                o.grid3d.c, o.plan_grid, o.block_size, o.memory_limit_bytes};
    h = fingerprint(h, v, sizeof v);
    h = fingerprint(fingerprint(fingerprint(h, a.layout()), b.layout()), c.layout());
    return fingerprint(fingerprint(h, &alpha, sizeof alpha), &beta, sizeof beta);
}

}  // namespace

template <class T>
void gemm(Op op_a, Op op_b, T alpha, const ResidentMatrix<T>& a, const ResidentMatrix<T>& b, T beta,
          ResidentMatrix<T>& c, const ResidentGemmOptions& opts) {
    const Grid2D& grid = c.grid();
    // Every rank's kind of memory, before the argument agreement (one control allreduce).
    const auto [kind_lo, kind_hi] = detail::agree_kinds(grid, {&c.device()});
    std::string err = check_resident_gemm(op_a, op_b, a, b, c, opts, kind_lo, kind_hi);
    const index_t m = c.m(), n = c.n(), k = op_a == Op::N ? a.n() : a.m();
    const bool work = err.empty() && m > 0 && n > 0 && k > 0 && c.on_device();
    // (the planner's Error, where nothing fits its memory limit, is the same on every rank)
    const detail::ResidentGemmPlan chosen =
        work ? detail::plan_resident_gemm(op_a, op_b, a.layout(), b.layout(), c.layout(), grid.order(), opts, sizeof(T),
                                          is_complex_v<T>)
             : detail::ResidentGemmPlan{};
    const detail::GemmPlan& plan = chosen.two;
    if (work) err = detail::workspace_error("gemm", "product", workspace_bytes(chosen, c), c.device(), grid.comm().rank());
    const std::uint64_t fp = err.empty() ? resident_fingerprint(op_a, op_b, alpha, a, b, beta, c, opts) : 0;
    grid.comm().agree(err, fp, "gemm");

    if (!c.on_device()) {  // all three in host memory
        gemm(op_a, op_b, alpha, a.host_view(), b.host_view(), beta, c.host_view(), detail::resident_gemm_options(opts));
        return;
    }
    if (m == 0 || n == 0) return;
    device::Device& dev = *c.device().get();
    if (k == 0) {  // C := beta·C on the device
        if (c.m_loc() > 0 && c.n_loc() > 0)
            dev.gemm(device::scalar_of<T>(), Op::N, Op::N, c.m_loc(), c.n_loc(), 0, &alpha, c.data(), c.ld(), c.data(),
                     c.ld(), &beta, c.data(), c.ld());
        dev.synchronize();
        return;
    }
    std::string reason;
    const bool nccl = detail::pick_transport("gemm", grid, c.device(), opts.transport, "operands", reason);
    if (opts.report) {
        opts.report->transport = nccl ? PanelTransport::Nccl : PanelTransport::Staged;
        opts.report->variant = chosen.three ? chosen.three->variant : plan.variant;
        opts.report->grid3d = chosen.three ? Shape3D{chosen.three->g.p, chosen.three->g.q, chosen.three->g.c} : Shape3D{};
        opts.report->reason = reason;
        opts.report->device_bytes = workspace_bytes(chosen, c);
    }
    const int ordinal = c.device().ordinal();
    if (chosen.three) {
        detail::resident_summa_3d(*chosen.three, detail::grid3d_for(grid, chosen.three->g), alpha, detail::side_of(a),
                                  detail::side_of(b), beta, detail::side_of(c), nccl, ordinal);
        return;
    }
    // Operands whose layouts do not line up with C's, redistributed onto the device (staged).
    std::unique_ptr<detail::DeviceArray<T>> astore, bstore;
    const detail::Side<T> a2 = detail::materialize_operand(plan.a, detail::side_of(a), dev, astore);
    const detail::Side<T> b2 = detail::materialize_operand(plan.b, detail::side_of(b), dev, bstore);
    switch (plan.variant) {
        case Variant::StationaryA: detail::resident_summa_a(plan, alpha, a2, b2, beta, detail::side_of(c), nccl, ordinal); break;
        case Variant::StationaryB: detail::resident_summa_b(plan, alpha, a2, b2, beta, detail::side_of(c), nccl, ordinal); break;
        default: detail::resident_summa_c(plan, alpha, a2, b2, beta, detail::side_of(c), nccl, ordinal); break;
    }
}

#define CALA_INST(T)                                                                                         \
    template void gemm<T>(Op, Op, T, const ResidentMatrix<T>&, const ResidentMatrix<T>&, T, ResidentMatrix<T>&, \
                          const ResidentGemmOptions&);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala

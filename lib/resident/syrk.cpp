// cala::herk / cala::syrk on resident matrices -> checks -> one Device::herk / syrk on a 1 x 1
//   grid | the resident gemm's plan for C := A·Aᴴ (syrk: A·Aᵀ; this file: A into C's rows and
//   Aᴴ into C's columns where they do not line up, staged) -> resident_summa_c with each group's
//   product restricted to C's triangle (triangle_update: Device::gemm off the diagonal tiles,
//   Device::herk / syrk on them) -> PanelMover (NCCL | MPI staged)
//
// The panels that travel are the gemm's (whole block columns of A' along the rows, whole block
// rows of Aᴴ down the columns), so resident_gemm_cost counts the words and messages; the flops
// are the triangle's.

#include <algorithm>
#include <memory>

#include "cala/symm.hpp"
#include "core/check.hpp"
#include "matrix/redistribute_impl.hpp"
#include "model/check.hpp"
#include "resident/checks.hpp"
#include "resident/plan.hpp"
#include "resident/summa_c.hpp"

namespace cala {

namespace {

// The operand B of C := A·op(A): Aᴴ (Aᵀ for real types, the same).
template <class T>
constexpr Op herm_op() {
    return is_complex_v<T> ? Op::C : Op::T;
}

// The gemm options of the triangle's product: stationary C whatever the caller asked (the
// triangle restricts C's tiles, which the A- and B-stationary variants do not keep in place).
ResidentGemmOptions stationary_c(ResidentGemmOptions o) {
    o.variant = Variant::StationaryC;
    return o;
}

std::string herk_shape_error(const char* fn, const BlockCyclic& a, const BlockCyclic& c) {
    using detail::cat;
    if (c.m() != c.n()) return cat(fn, ": C is ", c.m(), " x ", c.n(), ", must be square");
    if (c.rows.nb != c.cols.nb || c.rows.ib != c.cols.ib)
        return cat(fn, ": C's tiles are not square (row blocks ", c.rows.nb, " first ", c.rows.ib, ", column blocks ",
                   c.cols.nb, " first ", c.cols.ib, ")");
    if (a.m() != c.n()) return cat(fn, ": A has ", a.m(), " rows but C is ", c.n(), " x ", c.n());
    return {};
}

// Device elements beside A and C on process (row, col): the gemm's moved operands and slots.
index_t herk_workspace(const BlockCyclic& a, const BlockCyclic& c, Op bop, const ResidentGemmOptions& o, int row,
                       int col) {
    if (c.n() == 0 || a.n() == 0 || c.p() * c.q() == 1) return 0;
    return detail::resident_workspace(detail::resident_plan(Op::N, bop, a, a, c, stationary_c(o)), c, row, col);
}

template <class T>
std::string check_resident_herk(const char* fn, Op bop, Uplo uplo, const ResidentMatrix<T>& a,
                                const ResidentMatrix<T>& c, const ResidentGemmOptions& o, bool product, int kind_lo,
                                int kind_hi) {
    using detail::cat;
    if (uplo != Uplo::Lower && uplo != Uplo::Upper) return cat(fn, ": uplo is ", static_cast<int>(uplo), ", not a Uplo");
    std::string e = detail::check_same_grid(fn, "A", a.grid(), a.layout(), c.grid());
    if (e.empty()) e = detail::check_same_grid(fn, "C", c.grid(), c.layout(), c.grid());
    if (e.empty()) e = herk_shape_error(fn, a.layout(), c.layout());
    if (!e.empty()) return e;
    if (o.lookahead < 1) return cat(fn, ": lookahead is ", o.lookahead, ", must be >= 1");
    if (o.panel_width < 0) return cat(fn, ": panel_width is ", o.panel_width, ", must be >= 0");
    const int rank = c.grid().comm().rank();
    if (e = detail::same_device_error(fn, "A", a.device(), "C", c.device(), rank); !e.empty()) return e;
    if (e = detail::memory_error(fn, "the operands live", o.transport, kind_lo, kind_hi); !e.empty()) return e;
    if (!c.on_device()) return {};
    if (!product) return {};  // the triangle scaled in place: no workspace
    const index_t need = herk_workspace(a.layout(), c.layout(), bop, o, c.grid().row(), c.grid().col());
    return detail::workspace_error(fn, "update", need * std::int64_t(sizeof(T)), c.device(), rank);
}

// herk (Herm: S = real_t<T>, B' = Aᴴ) or complex syrk (S = T, B' = Aᵀ), the same algorithm.
template <bool Herm, class T, class S>
void rank_k_update(Uplo uplo, S alpha, const ResidentMatrix<T>& a, S beta, ResidentMatrix<T>& c,
                   const ResidentGemmOptions& opts) {
    const char* fn = Herm ? "herk" : "syrk";
    const Op bop = Herm ? herm_op<T>() : Op::T;
    const Grid2D& grid = c.grid();
    const auto [kind_lo, kind_hi] = detail::agree_kinds(grid, {&a.device(), &c.device()});
    const std::string err = check_resident_herk(fn, bop, uplo, a, c, opts, alpha != S(0), kind_lo, kind_hi);
    std::uint64_t fp = 0;
    if (err.empty()) {
        const std::int64_t v[5] = {static_cast<int>(uplo), opts.lookahead, opts.panel_width,
                                   static_cast<int>(opts.transport), Herm ? 1 : 0};
        fp = detail::fingerprint(detail::fingerprint(1469598103934665603ull, v, sizeof v), a.layout());
        fp = detail::fingerprint(detail::fingerprint(fp, c.layout()), &alpha, sizeof alpha);
        fp = detail::fingerprint(fp, &beta, sizeof beta);
    }
    grid.comm().agree(err, fp, fn);

    if (opts.report) *opts.report = {PanelTransport::Staged, c.on_device() ? "nothing to update" : "host memory", 0};
    if (!c.on_device()) {  // host memory on every rank: the host algorithm on the views
        if constexpr (Herm) herk(uplo, alpha, a.host_view(), beta, c.host_view());
        else syrk(uplo, alpha, a.host_view(), beta, c.host_view());
        return;
    }
    if (c.n() == 0) return;
    device::Device& dev = *c.device().get();
    const detail::TriangleUpdate tu{uplo, &alpha, &beta, !Herm};
    if (alpha == S(0) || a.n() == 0) {  // the triangle := beta·C; A is not read, nothing moves
        detail::triangle_update(dev, tu, detail::side_of(c), 0, T(0), c.data(), c.ld(), c.data(), c.ld(), true);
        dev.synchronize();
        return;
    }
    if (grid.comm().size() == 1) {  // the local arrays are the whole matrices: one device herk / syrk
        if constexpr (Herm)
            dev.herk(device::scalar_of<T>(), uplo == Uplo::Lower, Op::N, c.n(), a.n(), &alpha, a.data(), a.ld(), &beta,
                     c.data(), c.ld());
        else
            dev.syrk(device::scalar_of<T>(), uplo == Uplo::Lower, Op::N, c.n(), a.n(), &alpha, a.data(), a.ld(), &beta,
                     c.data(), c.ld());
        dev.synchronize();
        if (opts.report) opts.report->reason = "one rank: nothing travels";
        return;
    }
    std::string reason;
    const bool nccl = detail::pick_transport(fn, grid, c.device(), opts.transport, "operands", reason);
    const detail::GemmPlan plan = detail::resident_plan(Op::N, bop, a.layout(), a.layout(), c.layout(), stationary_c(opts));
    if (opts.report)
        *opts.report = {nccl ? PanelTransport::Nccl : PanelTransport::Staged, reason,
                        detail::resident_workspace(plan, c.layout(), grid.row(), grid.col()) * std::int64_t(sizeof(T))};
    // A' (C's rows) and B' = Aᴴ or Aᵀ (C's columns), redistributed on the device where they move.
    std::unique_ptr<detail::DeviceArray<T>> astore, bstore;
    const detail::Side<T> a2 = detail::materialize_operand(plan.a, detail::side_of(a), dev, astore);
    const detail::Side<T> b2 = detail::materialize_operand(plan.b, detail::side_of(a), dev, bstore);
    detail::resident_summa_c(plan, T(alpha), a2, b2, T(beta), detail::side_of(c), nccl, c.device().ordinal(), &tu);
}

Cost rank_k_cost(const char* fn, const char* name, Op bop, Uplo uplo, const BlockCyclic& a, const BlockCyclic& c,
                 const ResidentGemmOptions& opts, int row, int col, std::size_t elem_size, bool is_complex) {
    using detail::cat;
    if (uplo != Uplo::Lower && uplo != Uplo::Upper) throw Error(cat(fn, ": uplo is ", static_cast<int>(uplo), ", not a Uplo"));
    detail::throw_if(detail::same_grid_error(fn, "C", c, {{"A", &a}}));
    if (const std::string e = herk_shape_error(name, a, c); !e.empty()) throw Error(cat(fn, ": ", e));
    // One rank: one device herk in place, nothing moves and no workspace.
    Cost cost = c.p() * c.q() == 1 ? Cost{}
                                   : resident_gemm_cost(Op::N, bop, a, a, c, stationary_c(opts), row, col, elem_size, is_complex);
    double flops = 0;  // the triangle's
    const index_t k = a.n();
    for (const detail::TrianglePiece& t : detail::triangle_pieces(uplo, c, row, col)) {
        const index_t off = uplo == Uplo::Lower ? t.row_end - t.band_end : t.band_begin - t.row_begin;
        flops += 2.0 * double(off) * double(t.cols) * double(k);
        if (t.band_end > t.band_begin) flops += double(t.cols) * double(t.cols + 1) * double(k);
    }
    cost.flops = (is_complex ? 4.0 : 1.0) * flops;
    return cost;
}

}  // namespace

template <class T>
void herk(Uplo uplo, real_t<T> alpha, const ResidentMatrix<T>& a, real_t<T> beta, ResidentMatrix<T>& c,
          const ResidentGemmOptions& opts) {
    rank_k_update<true>(uplo, alpha, a, beta, c, opts);
}

template <class T>
void syrk(Uplo uplo, T alpha, const ResidentMatrix<T>& a, T beta, ResidentMatrix<T>& c,
          const ResidentGemmOptions& opts) {
    if constexpr (is_complex_v<T>) rank_k_update<false>(uplo, alpha, a, beta, c, opts);
    else rank_k_update<true>(uplo, alpha, a, beta, c, opts);  // the same update, herk's names in errors
}

Cost resident_herk_cost(Uplo uplo, const BlockCyclic& a, const BlockCyclic& c, const ResidentGemmOptions& opts,
                        int row, int col, std::size_t elem_size, bool is_complex) {
    return rank_k_cost("resident_herk_cost", "herk", is_complex ? Op::C : Op::T, uplo, a, c, opts, row, col, elem_size,
                       is_complex);
}

Cost resident_syrk_cost(Uplo uplo, const BlockCyclic& a, const BlockCyclic& c, const ResidentGemmOptions& opts,
                        int row, int col, std::size_t elem_size, bool is_complex) {
    return rank_k_cost("resident_syrk_cost", "syrk", Op::T, uplo, a, c, opts, row, col, elem_size, is_complex);
}

#define CALA_INST(T)                                                                                         \
    template void herk<T>(Uplo, real_t<T>, const ResidentMatrix<T>&, real_t<T>, ResidentMatrix<T>&,          \
                          const ResidentGemmOptions&);                                                       \
    template void syrk<T>(Uplo, T, const ResidentMatrix<T>&, T, ResidentMatrix<T>&, const ResidentGemmOptions&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala

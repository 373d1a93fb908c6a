// cala::getrf -> checks, argument agreement, plan (lu_plan) -> getrf_engine (2D CALU on the user's grid), or
//   for a p x 1 grid on_one_row (the matrix on the 1 x p grid of its ranks) -> getrf_engine there -> back
// cala::getrs -> checks -> the interchanges (exchange_rows, step by step) -> cala::trsm twice

#include <cstdint>
#include <string>

#include "cala/cholesky.hpp"
#include "cala/lu.hpp"
#include "core/check.hpp"
#include "gemm/driver.hpp"
#include "lu/engine.hpp"
#include "kernels/blas.hpp"
#include "lu/plan.hpp"
#include "matrix/one_row.hpp"
#include "matrix/redistribute_impl.hpp"

namespace cala {

const char* to_string(LuVariant v) noexcept {
    switch (v) {
        case LuVariant::TwoD: return "2D";
        case LuVariant::OneRow: return "1xP";
        case LuVariant::Layered: return "2.5D";
        default: return "auto";
    }
}

namespace detail {

std::string lu_options_error(const char* fn, const LuOptions& o) {
    if (o.variant < LuVariant::Auto || o.variant > LuVariant::Layered)
        return cat(fn, ": variant is ", static_cast<int>(o.variant), ", not an LuVariant");
    if (o.lookahead < 0) return cat(fn, ": lookahead must be >= 0, got ", o.lookahead);
    if (o.memory_limit_bytes < 0) return cat(fn, ": memory_limit_bytes must be >= 0, got ", o.memory_limit_bytes);
    return {};
}

std::string lu_layout_error(const char* fn, const BlockCyclic& l) {
    if (l.rows.nb != l.cols.nb)
        return cat(fn, ": A's blocks are ", l.rows.nb, " x ", l.cols.nb, " (mb x nb), must be square");
    if (l.rows.ib != l.cols.ib)
        return cat(fn, ": A starts ", l.rows.nb - l.rows.ib, " rows but ", l.cols.nb - l.cols.ib,
                   " columns into its first block (a submatrix must start at the same offset in both)");
    return {};
}

std::string lu_grid_error(const char* fn, const BlockCyclic& a, const LuOptions& o);  // model.cpp

LuGeom lu_geom(const BlockCyclic& l) { return LuGeom{l.rows, l.cols}; }

namespace {

template <class T>
std::string check_getrf(const MatrixRef<T>& a, const LuOptions& o) {
    std::string e = check_same_grid("getrf", "A", a.grid(), a.layout(), a.grid());
    if (e.empty()) e = check_local("getrf", "A", a);
    if (e.empty()) e = lu_layout_error("getrf", a.layout());
    if (e.empty()) e = lu_options_error("getrf", o);
    if (e.empty()) e = lu_grid_error("getrf", a.layout(), o);
    return e;
}

template <class T>
std::string check_getrs(Op op, const MatrixRef<T>& a, const std::vector<index_t>& ipiv, const MatrixRef<T>& b) {
    std::string e = check_same_grid("getrs", "A", a.grid(), a.layout(), b.grid());
    if (e.empty()) e = check_same_grid("getrs", "B", b.grid(), b.layout(), b.grid());
    if (e.empty()) e = check_local("getrs", "A", a);
    if (e.empty()) e = check_local("getrs", "B", b);
    if (!e.empty()) return e;
    if (op != Op::N && op != Op::T && op != Op::C) return cat("getrs: op is ", static_cast<int>(op), ", not an Op");
    if (a.m() != a.n()) return cat("getrs: A is ", a.m(), " x ", a.n(), ", not square");
    if (b.m() != a.n()) return cat("getrs: B has ", b.m(), " rows but A is ", a.n(), " x ", a.n());
    e = lu_layout_error("getrs", a.layout());
    if (!e.empty()) return e;
    const Dist1D &ar = a.layout().rows, &br = b.layout().rows;
    if (br.nb != ar.nb || br.ib != ar.ib)
        return cat("getrs: B's row blocks (", br.nb, ", first ", br.ib, ") must line up with A's (", ar.nb, ", first ",
                   ar.ib, ")");
    if (static_cast<index_t>(ipiv.size()) != a.n())
        return cat("getrs: ipiv has ", ipiv.size(), " entries, A is ", a.n(), " x ", a.n());
    for (std::size_t i = 0; i < ipiv.size(); ++i)
        if (ipiv[i] < static_cast<index_t>(i) || ipiv[i] >= a.n())
            return cat("getrs: ipiv[", i, "] is ", ipiv[i], ", must be in [", i, ", ", a.n(), ")");
    return {};
}

LuArgs lu_args(const Grid2D& g, const BlockCyclic& l, const LuOptions& o) {
    LuArgs args;
    args.g = lu_geom(l);
    args.row = g.row();
    args.col = g.col();
    args.row_comm = &g.row_comm();
    args.col_comm = &g.col_comm();
    args.lookahead = o.lookahead;
    args.node_shared = o.node_shared_memory;
    return args;
}

// Layered: block row i of A homed on layer (i mod h·p) / p (compact_placement: one move of about
// m·n/P words per rank in, and one out), zero elsewhere, so that the layers' shares sum to A; each
// layer's engine with the fiber; then every layer holds the same factors and sends its home block
// rows back. Ranks beyond the grid only take part in the moves; they get the pivots and info from
// rank 0 (every layer has them).
template <class T>
index_t run_layered(const MatrixRef<T>& a, const LuPlan& plan, const LuOptions& o, std::vector<index_t>& ipiv) {
    const int p = plan.work.p(), q = plan.work.q(), h = plan.h;
    const Grid3D& g3 = grid3d_for(a.grid(), Shape3{p, q, h});
    const Placement compact = lu_compact_placement(plan), user = placement_of(a.grid(), a.layout());
    const BlockCyclic& cl = compact.layout;
    const bool on = g3.active();
    const index_t cm = on ? cl.rows.local_size(g3.layer() * p + g3.row()) : 0, cn = on ? cl.cols.local_size(g3.col()) : 0;
    const index_t cld = std::max<index_t>(1, cm);
    Buffer<T> cstore(cm * cn);
    redistribute_placed(Op::N, g3.comm(), user, a.data(), a.ld(), compact, cstore.data(), cld, false, T(0));
    index_t info = 0;
    if (on) {
        const Dist1D& rows = plan.work.rows;
        const index_t wm = rows.local_size(g3.row()), wn = plan.work.cols.local_size(g3.col());
        const index_t wld = std::max<index_t>(1, wm);
        Buffer<T> w(wm * wn);
        kernels::scale(wm, wn, T(0), w.data(), wld);
        // My home block rows between the compact share and the layer's share.
        auto copy_home = [&](bool to_layer) {
            for (index_t i = 0; i < rows.num_blocks(); ++i) {
                if (rows.block_owner(i) != g3.row() || lu_home(plan, i) != g3.layer()) continue;
                const index_t g0 = rows.block_start(i), sz = rows.block_size(i);
                T* c = cstore.data() + cl.rows.to_local(g0);
                T* x = w.data() + rows.to_local(g0);
                if (to_layer) kernels::copy(Op::N, sz, wn, c, cld, x, wld);
                else kernels::copy(Op::N, sz, wn, x, wld, c, cld);
            }
        };
        copy_home(true);
        LuArgs args = lu_args(g3.layer_grid(), plan.work, o);
        args.fiber = &g3.fiber_comm();
        args.layer = g3.layer();
        args.layers = h;
        info = getrf_engine(args, w.data(), wld, ipiv);
        copy_home(false);
    }
    redistribute_placed(Op::N, g3.comm(), compact, static_cast<const T*>(cstore.data()), cld, user, a.data(), a.ld(),
                        false, T(0));
    if (g3.comm().size() > p * q * h) {
        ipiv.resize(static_cast<std::size_t>(std::min(a.m(), a.n())));
        g3.comm().ibcast(&info, 1, 0).wait();
        g3.comm().ibcast(ipiv.data(), static_cast<std::int64_t>(ipiv.size()), 0).wait();
    }
    return info;
}

}  // namespace
}  // namespace detail

template <class T>
index_t getrf(const MatrixRef<T>& a, std::vector<index_t>& ipiv, const LuOptions& opts) {
    using namespace detail;
    const std::string err = check_getrf(a, opts);
    std::uint64_t fp = 0;
    LuPlan plan;
    std::string plan_err;
    if (err.empty()) {
        try {  // (the planner's memory limit may read CALA_MAX_MEMORY_MB, which may differ between ranks)
            plan = lu_plan(a.layout(), opts, sizeof(T));
        } catch (const Error& e) {
            plan_err = e.what();
        }
        // The plan too: CALA_MAX_MEMORY_MB may differ between ranks.
        const std::int64_t o[] = {static_cast<std::int64_t>(opts.variant), opts.lookahead, opts.memory_limit_bytes,
                                  opts.node_shared_memory ? 1 : 0, static_cast<std::int64_t>(plan.variant),
                                  plan.work.p(), plan.work.q(), plan.h};
        fp = fingerprint(fingerprint(0x4c55, o, sizeof o), a.layout());
    }
    a.grid().comm().agree(err.empty() ? plan_err : err, fp, "getrf");
    if (!plan.convert()) return getrf_engine(lu_args(a.grid(), a.layout(), opts), a.data(), a.ld(), ipiv);
    if (plan.variant == LuVariant::Layered) return run_layered(a, plan, opts, ipiv);
    // OneRow: the 1 x p grid of the same ranks (rank r, process row r here, is its column r).
    return on_one_row(a, grid3d_for(a.grid(), Shape3{1, a.grid().p(), 1}), plan.work, [&](const MatrixRef<T>& w) {
        return getrf_engine(lu_args(w.grid(), w.layout(), opts), w.data(), w.ld(), ipiv);
    });
}

template <class T>
void getrs(Op op, const MatrixRef<T>& a, const std::vector<index_t>& ipiv, const MatrixRef<T>& b) {
    using namespace detail;
    const std::string err = check_getrs(op, a, ipiv, b);
    std::uint64_t fp = 0;
    if (err.empty()) {
        fp = fingerprint(fingerprint(fingerprint(0x4c53, &op, sizeof op), a.layout()), b.layout());
        fp = fingerprint(fp, ipiv.data(), ipiv.size() * sizeof(index_t));
    }
    b.grid().comm().agree(err, fp, "getrs");
    if (a.n() == 0 || b.n() == 0) return;
    const LuGeom g = lu_geom(a.layout());
    const Grid2D& grid = b.grid();
    const index_t w = b.n_loc();
    ExchangeBuffers<T> ws;
    // All the interchanges at once (their composite: every row of B moves at most once, one
    // message per pair of process rows): forward for op N, undone for T and C.
    auto permute = [&](bool undo) {
        if (g.steps() == 0) return;
        DeferredMoves dm(g, ipiv);
        for (index_t b = g.steps() - 2; b >= -1; --b) dm.back_to(b);  // then steps 0, 1, ... composed
        const Moves mv = undo ? inverse_moves(dm.moves()) : dm.moves();
        const RowPermutation part{&mv, 0, w};
        permute_rows<T>(b.layout().rows, grid.row(), grid.col_comm(), std::span<const RowPermutation>(&part, 1), b.data(),
                        b.ld(), ws);
    };
    if (op == Op::N) {
        permute(false);
        trsm(Uplo::Lower, Op::N, Diag::Unit, T(1), a, b);
        trsm(Uplo::Upper, Op::N, Diag::NonUnit, T(1), a, b);
        return;
    }
    trsm(Uplo::Upper, op, Diag::NonUnit, T(1), a, b);
    trsm(Uplo::Lower, op, Diag::Unit, T(1), a, b);
    permute(true);
}

#define CALA_INST(T)                                                                          \
    template index_t getrf<T>(const MatrixRef<T>&, std::vector<index_t>&, const LuOptions&);  \
    template void getrs<T>(Op, const MatrixRef<T>&, const std::vector<index_t>&, const MatrixRef<T>&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala

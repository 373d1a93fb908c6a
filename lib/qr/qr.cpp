// cala::geqrf -> checks, agreement, plan (qr_plan: the user's grid, or on_one_row for a p x 1 grid)
//   -> geqrf_engine (engine.cpp: panels by panel.cpp, TSQR and
//   the reconstruction) -> tau summed over the grid from the panels' roots
// cala::ormqr -> checks, agreement -> ormqr_left_engine (engine.cpp) | ormqr_right_engine
//   (ormqr_right.cpp: V gathered along C's columns)

#include <string>

#include "cala/qr.hpp"
#include "core/check.hpp"
#include "gemm/driver.hpp"
#include "matrix/one_row.hpp"
#include "matrix/redistribute_impl.hpp"
#include "qr/engine.hpp"
#include "qr/model.hpp"

namespace cala {

const char* to_string(QrVariant v) noexcept {
    switch (v) {
        case QrVariant::TwoD: return "2D";
        case QrVariant::OneRow: return "1xP";
        default: return "auto";
    }
}

namespace detail {
namespace {

// A layout whose row block l and column block l cover the same indices.
std::string aligned_error(const char* fn, const char* name, const BlockCyclic& l) {
    if (l.rows.nb != l.cols.nb)
        return cat(fn, ": ", name, " must have square blocks (mb == nb), got mb = ", l.rows.nb, ", nb = ", l.cols.nb);
    if (l.m() > 0 && l.n() > 0 && l.rows.ib != l.cols.ib)
        return cat(fn, ": ", name, "'s blocks must line up with its diagonal: its first block is ", l.rows.ib,
                   " rows by ", l.cols.ib, " columns (a submatrix must start at the same offset within a block in "
                   "rows and columns)");
    return {};
}

template <class T>
std::string check_geqrf(const MatrixRef<T>& a, const QrOptions& o) {
    std::string e = check_same_grid("geqrf", "A", a.grid(), a.layout(), a.grid());
    if (e.empty()) e = check_local("geqrf", "A", a);
    if (e.empty()) e = aligned_error("geqrf", "A", a.layout());
    if (e.empty() && o.lookahead < 0) e = cat("geqrf: lookahead must be >= 0, got ", o.lookahead);
    if (e.empty() && o.delay < 0) e = cat("geqrf: delay must be >= 0, got ", o.delay);
    if (e.empty() && (o.variant < QrVariant::Auto || o.variant > QrVariant::OneRow))
        e = cat("geqrf: variant is ", static_cast<int>(o.variant), ", not a QrVariant");
    if (e.empty() && o.memory_limit_bytes < 0)
        e = cat("geqrf: memory_limit_bytes must be >= 0, got ", o.memory_limit_bytes);
    return e;
}

template <class T>
std::string check_ormqr(Side side, Op op, const MatrixRef<T>& a, const std::vector<T>& tau, const MatrixRef<T>& c,
                        const QrOptions& o) {
    if (side != Side::Left && side != Side::Right) return "ormqr: side must be Left or Right";
    if (op != Op::N && op != Op::T && op != Op::C) return "ormqr: op must be N, T or C";
    if (op == Op::T && is_complex_v<T>) return "ormqr: op T is for real types; use C for complex Q";
    std::string e = check_same_grid("ormqr", "A", a.grid(), a.layout(), c.grid());
    if (e.empty()) e = check_same_grid("ormqr", "C", c.grid(), c.layout(), c.grid());
    if (e.empty()) e = check_local("ormqr", "A", a);
    if (e.empty()) e = check_local("ormqr", "C", c);
    if (!e.empty()) return e;
    const auto k = static_cast<index_t>(tau.size());
    if (k > a.n()) return cat("ormqr: tau holds ", k, " reflectors but A has ", a.n(), " columns");
    if (k > a.m()) return cat("ormqr: tau holds ", k, " reflectors but A has ", a.m(), " rows");
    const bool left = side == Side::Left;
    if (left && a.m() != c.m()) return cat("ormqr: A has ", a.m(), " rows but C has ", c.m(), " (side Left)");
    if (!left && a.m() != c.n()) return cat("ormqr: A has ", a.m(), " rows but C has ", c.n(), " columns (side Right)");
    if (k > 0) {
        e = aligned_error("ormqr", "A", a.layout());
        if (!e.empty()) return e;
    }
    const Dist1D& ra = a.layout().rows;
    if (left) {
        const Dist1D& rc = c.layout().rows;
        if (ra.nb != rc.nb || ra.ib != rc.ib || ra.src != rc.src)
            return cat("ormqr: the rows of C must be distributed as those of A: A in blocks of ", ra.nb, " (first ",
                       ra.ib, ", source row ", ra.src, "), C in blocks of ", rc.nb, " (first ", rc.ib, ", source row ",
                       rc.src, ")");
    } else {
        const Dist1D& cc = c.layout().cols;
        if (ra.nb != cc.nb || ra.ib != cc.ib)
            return cat("ormqr: the columns of C must be blocked as the rows of A (side Right): A's rows in blocks of ",
                       ra.nb, " (first ", ra.ib, "), C's columns in blocks of ", cc.nb, " (first ", cc.ib, ")");
    }
    if (o.lookahead < 0) return cat("ormqr: lookahead must be >= 0, got ", o.lookahead);
    return {};
}

}  // namespace
}  // namespace detail

template <class T>
void geqrf(const MatrixRef<T>& a, std::vector<T>& tau, const QrOptions& opts) {
    const Grid2D& grid = a.grid();
    const std::string err = detail::check_geqrf(a, opts);
    std::uint64_t fp = 0;
    detail::QrPlan plan;
    if (err.empty()) {
        plan = detail::qr_plan(a.layout(), opts, sizeof(T));
        fp = detail::fingerprint(0x51a7, a.layout());
        // The plan too: CALA_MAX_MEMORY_MB may differ between ranks.
        const std::int64_t o[] = {opts.lookahead, opts.delay, static_cast<std::int64_t>(opts.variant),
                                  opts.memory_limit_bytes, static_cast<std::int64_t>(plan.variant)};
        fp = detail::fingerprint(fp, o, sizeof o);
    }
    grid.comm().agree(err, fp, "geqrf");
    const index_t k = std::min(a.m(), a.n());
    tau.assign(static_cast<std::size_t>(k), T(0));
    if (k == 0) return;
    auto run = [&](const MatrixRef<T>& w) {
        const Grid2D& g = w.grid();
        const detail::QrGeom geom{w.layout().rows, w.layout().cols, k};
        detail::geqrf_engine(geom, g.row(), g.col(), g.row_comm(), g.col_comm(), w.data(), w.ld(), tau.data(),
                             opts.lookahead, opts.delay);
        if (g.comm().size() > 1) g.comm().iallreduce_sum(tau.data(), k).wait();
        return 0;
    };
    if (!plan.convert()) {
        run(a);
        return;
    }
    // OneRow: the 1 x p grid of the same ranks (rank r, process row r here, is its column r).
    detail::on_one_row(a, detail::grid3d_for(grid, detail::Shape3{1, grid.p(), 1}), plan.work, run);
}

template <class T>
void ormqr(Side side, Op op, const MatrixRef<T>& a, const std::vector<T>& tau, const MatrixRef<T>& c,
           const QrOptions& opts) {
    const Grid2D& grid = c.grid();
    const std::string err = detail::check_ormqr(side, op, a, tau, c, opts);
    std::uint64_t fp = 0;
    if (err.empty()) {
        const std::int64_t v[] = {static_cast<std::int64_t>(side), static_cast<std::int64_t>(op == Op::T ? Op::C : op),
                                  static_cast<std::int64_t>(tau.size()), opts.lookahead};
        fp = detail::fingerprint(0x0a7a, v, sizeof v);
        fp = detail::fingerprint(fp, a.layout());
        fp = detail::fingerprint(fp, c.layout());
        fp = detail::fingerprint(fp, tau.data(), tau.size() * sizeof(T));
    }
    grid.comm().agree(err, fp, "ormqr");
    const auto k = static_cast<index_t>(tau.size());
    if (k == 0 || c.n() == 0 || c.m() == 0) return;
    const detail::QrGeom g{a.layout().rows, a.layout().cols, k};
    if (side == Side::Left)
        detail::ormqr_left_engine(g, grid.row(), grid.col(), grid.row_comm(), grid.col_comm(), op, a.data(), a.ld(),
                                  tau.data(), c.data(), c.ld(), c.n_loc());
    else
        detail::ormqr_right_engine(g, c.layout().cols, grid.row(), grid.col(), grid.row_comm(), grid.col_comm(), op,
                                   a.data(), a.ld(), tau.data(), c.data(), c.ld(), c.m_loc());
}

#define CALA_INST(T)                                                                                     \
    template void geqrf<T>(const MatrixRef<T>&, std::vector<T>&, const QrOptions&);                      \
    template void ormqr<T>(Side, Op, const MatrixRef<T>&, const std::vector<T>&, const MatrixRef<T>&,    \
                           const QrOptions&);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala

// cala::geqrf -> checks, agreement -> geqrf_engine (engine.cpp: panels by panel.cpp, TSQR and
//   the reconstruction) -> tau summed over the grid from the panels' roots
// cala::ormqr -> checks, agreement -> ormqr_left_engine (engine.cpp) | ormqr_right_engine
//   (ormqr_right.cpp: V gathered along C's columns)

#include <string>

#include "cala/qr.hpp"
#include "core/check.hpp"
#include "matrix/redistribute_impl.hpp"
#include "qr/engine.hpp"

namespace cala {

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
    if (err.empty()) {
        fp = detail::fingerprint(0x51a7, a.layout());
        const std::int64_t la[] = {opts.lookahead, opts.delay};
        fp = detail::fingerprint(fp, la, sizeof la);
    }
    grid.comm().agree(err, fp, "geqrf");
    const index_t k = std::min(a.m(), a.n());
    tau.assign(static_cast<std::size_t>(k), T(0));
    if (k == 0) return;
    const detail::QrGeom g{a.layout().rows, a.layout().cols, k};
    detail::geqrf_engine(g, grid.row(), grid.col(), grid.row_comm(), grid.col_comm(), a.data(), a.ld(), tau.data(),
                         opts.lookahead, opts.delay);
    if (grid.comm().size() > 1) grid.comm().iallreduce_sum(tau.data(), k).wait();
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

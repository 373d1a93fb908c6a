// Submatrices of the caller's arrays as cala layouts.

#include "scalapack/view.hpp"

#include "core/check.hpp"

namespace cala::scalapack {

std::optional<SubMatrix> sub_matrix(const Desc& d, const GridPos& g, int ix, int jx, index_t rows, index_t cols) {
    auto r = sub_axis(d[M_], d[IMB_], d[MB_], d[RSRC_], g.p, ix - 1, rows, g.row);
    auto c = sub_axis(d[N_], d[INB_], d[NB_], d[CSRC_], g.q, jx - 1, cols, g.col);
    if (!r || !c) return std::nullopt;
    return SubMatrix{*r, *c, d[LLD_]};
}

std::string threshold_text(double t) {
    return t < 9e18 ? std::to_string(static_cast<long long>(t)) : detail::cat(t);
}

}  // namespace cala::scalapack

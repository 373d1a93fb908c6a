// The shim's solves between their checks and their work (solve_settle.hpp).

#include "scalapack/solve_settle.hpp"

#include "core/check.hpp"
#include "scalapack/blacs.hpp"

namespace cala::scalapack {

Call solve_call(const char* rout, const int* desca, const std::string& what) {
    Call c{rout, desca[SL_CTXT - 1], {}, settings().verbose, ""};
    Cblacs_gridinfo(c.ctxt, &c.g.p, &c.g.q, &c.g.row, &c.g.col);
    if (c.verbose) c.head = detail::cat(c.rout, what, " on ", c.g.p, "x", c.g.q, " -> ");
    return c;
}

SolveOperands settle_solve(const Call& c, const ArgCheck& chk, Route route, std::span<const SameArg> same,
                           const int* desca, int ia, int ja, const int* descb, int ib, int jb, int n, int nrhs,
                           int* info, const std::function<void()>& scalapack) {
    SolveOperands o;
    const bool compute = chk.ok() && route == Route::Cala;
    if (compute) {
        o.a = sub_matrix(read_descriptor(desca), c.g, ia, ja, n, n);
        o.b = sub_matrix(read_descriptor(descb), c.g, ib, jb, n, nrhs);
    }
    const bool layouts = !compute || (o.a && o.b);
    o.grid = settle(c, chk, route, layouts, same, "an operand has no cala layout", info, scalapack);
    return o;
}

}  // namespace cala::scalapack

// The CALA_VERBOSE line of a declined call, and what a computed call starts.

#include "scalapack/decline.hpp"

#include "core/check.hpp"
#include "scalapack/blacs.hpp"
#include "scalapack/view.hpp"

namespace cala::scalapack {

void say_declined(int ctxt, const std::string& head, const char* what, double size) {
    GridPos g;
    Cblacs_gridinfo(ctxt, &g.p, &g.q, &g.row, &g.col);
    if (g.row != 0 || g.col != 0) return;
    say(detail::cat(head, " on ", g.p, "x", g.q, " -> ScaLAPACK: ", what, " = ", static_cast<long long>(size),
                    " < CALA_SCALAPACK_THRESHOLD = ", threshold_text(settings().threshold)));
}

void compute_starts() noexcept {}

}  // namespace cala::scalapack

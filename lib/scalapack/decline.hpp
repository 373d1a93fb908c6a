#pragma once
// Which calls the shim leaves to ScaLAPACK, decided first, from the call's own global arguments.
//
// every entry (pgemm.cpp, ptrxm.cpp, pgeadd.cpp, psymm.cpp, psyrk.cpp, ppotrf.cpp, ppotrs.cpp,
// pposv.cpp) -> decline (this) -> report (settings, the real symbol)
//
// A call whose size (m·n·k, n³, m·n: the routine's own product) is below CALA_SCALAPACK_THRESHOLD
// goes straight to ScaLAPACK's symbol: no argument check, no MPI call, no BLACS call (but
// Cblacs_gridinfo for a CALA_VERBOSE line), no grid, no thread -- the program runs as it does
// without the shim, with ScaLAPACK's own behaviour on bad input. The sizes and the threshold are
// the same on every process of a correct program (ScaLAPACK requires the same M, N, K
// everywhere), so every process decides alike without a word; only the calls cala computes agree
// over the grid (context.hpp: agree), where the shim's own checks, the cross-process ones
// included, report bad input. A negative size is never declined: the agreement reports it.
//
//   size >= 0, size < threshold  -> ScaLAPACK's routine, nothing else      (no collective)
//   otherwise                    -> checks, one allreduce over the grid, then cala (or
//                                   ScaLAPACK when an operand has no cala layout); cala's
//                                   runtime is set up only there (report.hpp: compute_starts)

#include <initializer_list>
#include <string>

#include "scalapack/report.hpp"

namespace cala::scalapack {

/// Whether the shim leaves a call of this size to ScaLAPACK: every dimension in `dims` >= 0 and
/// `size` below CALA_SCALAPACK_THRESHOLD. Local and pure: no MPI, no BLACS.
inline bool declines(double size, std::initializer_list<int> dims) noexcept {
    for (const int d : dims)
        if (d < 0) return false;
    return size < settings().threshold;
}

/// Under CALA_VERBOSE, grid process (0, 0) of `ctxt` says that the call went to ScaLAPACK:
/// "`head` on PxQ -> ScaLAPACK: `what` = `size` < CALA_SCALAPACK_THRESHOLD = T". Local.
void say_declined(int ctxt, const std::string& head, const char* what, double size);

}  // namespace cala::scalapack

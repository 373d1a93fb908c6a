// The steps the shim's ScaLAPACK routines share around their own checks and work.

#include "scalapack/settle.hpp"

#include "scalapack/report.hpp"

namespace cala::scalapack {

bool foreign_context(const Call& c, int desc_pos, int* info) {
    if (c.g.p != -1) return false;
    *info = -(desc_pos * ArgCheck::kDescMult + SL_CTXT);
    if (c.verbose)
        say(c.head + "illegal argument, info = " + std::to_string(*info) + ": DESCA context " + std::to_string(c.ctxt) +
            " is not a BLACS grid here");
    report_illegal(c.ctxt, c.rout, *info, c.who);
    return true;
}

const Grid2D* settle(const Call& c, const ArgCheck& chk, Route route, bool layouts, std::span<const SameArg> same,
                     const char* no_layout, int* info, const std::function<void()>& scalapack) {
    const bool speaker = c.speaker();
    const MPI_Comm comm = grid_communicator(c.ctxt);
    const Grid2D* grid = route == Route::Cala && layouts ? cached_grid(c.ctxt, comm, c.g) : nullptr;
    const Agreement agreed =
        agree(comm, c.g, chk.code, layouts, route != Route::Cala || !layouts || grid != nullptr, same);
    if (agreed.code != ArgCheck::kNone) {
        *info = report_agreed(agreed.code, chk, kElsewhere, c.ctxt, c.rout, speaker, c.head, c.who);
        return nullptr;
    }
    if (!agreed.cala_layouts) {
        if (speaker) say(c.head + "ScaLAPACK: " + no_layout);
        scalapack();
        return nullptr;
    }
    if (route == Route::Nothing) {
        if (speaker) say(c.head + "cala: nothing to do");
        return nullptr;
    }
    return agreed.cached ? grid : &make_grid(c.ctxt, comm, c.g, agreed);
}

}  // namespace cala::scalapack

#pragma once
// The factorization step p?potrf_ and p?posv_ share on a GPU node: the route (CALA_DEVICES and the
// model, resident_route.hpp), its CALA_SHIM=log note and CALA_VERBOSE line, then the resident run
// or cala::potrf on the caller's array.
//
// ppotrf.cpp, pposv.cpp -> factor_routed (this) -> choose_potrf_route + run_resident_potrf
// (resident_route.hpp) | cala::potrf (lib/cholesky)

#include <functional>
#include <string>

#include "cala/cholesky.hpp"
#include "cala/matrix.hpp"
#include "core/check.hpp"
#include "scalapack/report.hpp"
#include "scalapack/resident_route.hpp"
#include "scalapack/settle.hpp"

namespace cala::scalapack {

/// A := its Cholesky factor (the triangle uplo of the caller's array `a`; info := LAPACK's info on
/// every process): resident on the rank's device where the route says so (a cala::Error of the
/// resident run, on every rank before A is written back, leaves A as it was and the CPU path
/// computes it), else cala::potrf on the caller's array (`say_plan()` first, for CALA_VERBOSE).
/// `scalapack()` when cala declines: a device in CALA_DEVICES that some rank cannot open (the CPU
/// path's cala::potrf would read the same list as its units), or a cala::Error of the CPU path.
/// `note`: appended to the CALA_SHIM=log note. Returns true when cala factored A. Collective over
/// A's grid.
template <class T>
bool factor_routed(const Call& c, Uplo uplo, const MatrixRef<T>& a, int* info, const char* note,
                   const std::function<void()>& say_plan, const std::function<void()>& scalapack) {
    using detail::cat;
    const DeviceRoute dr = choose_potrf_route<T>(a.grid(), uplo, a.layout());
    if (dr.asked) note_call(cat("where=", dr.where, ": ", dr.reason, note));
    if (dr.asked && c.speaker()) say(cat(c.head, "cala: ", dr.where, ": ", dr.reason, note));
    if (dr.asked && !dr.usable) {
        if (c.speaker()) say(cat(c.head, "ScaLAPACK: a rank's device in CALA_DEVICES cannot be opened"));
        scalapack();
        return false;
    }
    bool factored = false;
    const auto host = [&] {
        *info = static_cast<int>(potrf(uplo, a));
        factored = true;
    };
    if (!dr.resident) {
        say_plan();
        cala_or_scalapack(c.rout, c.g, host, scalapack);
        return factored;
    }
    cala_or_scalapack(c.rout, c.g, [&] {
        try {
            *info = static_cast<int>(run_resident_potrf(dr.dev, uplo, a));
            factored = true;
        } catch (const RankError&) {  // one rank only: the others cannot follow a fallback
            throw;
        } catch (const Error& e) {  // raised on every rank before A was written back
            if (c.g.row == 0 && c.g.col == 0) say(cat(c.rout, ": resident: ", e.what(), "; the CPU path computes this call"));
            note_call(cat("where=cpu: the resident run failed: ", e.what()));
            host();
        }
    }, scalapack);
    return factored;
}

}  // namespace cala::scalapack

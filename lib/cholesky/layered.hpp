#pragma once
// A rank's two shares of a layered (2.5D) Cholesky plan: the compact share (its home block rows,
// what the conversion moves in and out; chol_compact_placement) and the full layer share the
// engine factors (every block row of the rank's grid row, zero but for the home ones). Shared by
// the host driver (potrf.cpp) and the resident one (resident/potrf_25d.cpp).

#include "cala/grid3d.hpp"
#include "cholesky/plan.hpp"

namespace cala::detail {

/// This rank's two shares (both empty on ranks outside the plan's grid).
struct LayeredShares {
    index_t cm = 0, cn = 0, cld = 1;  ///< the compact share: cm x cn, leading dimension cld
    index_t wm = 0, wn = 0, wld = 1;  ///< the layer share

    LayeredShares(const CholPlan& plan, const Grid3D& g3);
};

/// The home block rows from the compact share into their places in the layer share (to_layer),
/// or back from it.
template <class T>
void copy_home_rows(const CholPlan& plan, const Grid3D& g3, const LayeredShares& s, T* compact, T* layer,
                    bool to_layer);

}  // namespace cala::detail

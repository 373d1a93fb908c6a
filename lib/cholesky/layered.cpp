// A rank's compact and layer shares of a layered Cholesky plan (layered.hpp).

#include "cholesky/layered.hpp"

#include <algorithm>
#include <complex>

#include "kernels/blas.hpp"

namespace cala::detail {

LayeredShares::LayeredShares(const CholPlan& plan, const Grid3D& g3) {
    if (!g3.active()) return;
    const BlockCyclic cl = chol_compact_layout(plan);
    cm = cl.rows.local_size(g3.layer() * plan.p + g3.row());
    cn = cl.cols.local_size(g3.col());
    cld = std::max<index_t>(1, cm);
    wm = plan.geom.rows.local_size(g3.row());
    wn = plan.geom.cols.local_size(g3.col());
    wld = std::max<index_t>(1, wm);
}

template <class T>
void copy_home_rows(const CholPlan& plan, const Grid3D& g3, const LayeredShares& s, T* compact, T* layer,
                    bool to_layer) {
    if (!g3.active()) return;
    const CholGeom& geo = plan.geom;
    const BlockCyclic cl = chol_compact_layout(plan);
    for (index_t i = 0; i < geo.mt(); ++i) {
        if (geo.ro(i) != g3.row() || geo.home(i) != g3.layer()) continue;
        T* c = compact + cl.rows.to_local(geo.start(i));
        T* w = layer + geo.rows.to_local(geo.start(i));
        if (to_layer) kernels::copy(Op::N, geo.size(i), s.cn, c, s.cld, w, s.wld);
        else kernels::copy(Op::N, geo.size(i), s.cn, w, s.wld, c, s.cld);
    }
}

#define CALA_INST(T) \
    template void copy_home_rows<T>(const CholPlan&, const Grid3D&, const LayeredShares&, T*, T*, bool);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::detail

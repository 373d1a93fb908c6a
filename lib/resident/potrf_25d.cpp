// The replicated-diagonal 2.5D Cholesky on resident matrices: cala::potrf's layered schedule
// (lib/cholesky/geometry.hpp, thesis Alg. 21/22) with the tiles in device memory.
//
//   1. A into the compact placement (block row i on layer home(i) of a virtual (h·p) x q grid)
//      and from there into each layer's full p x q share (the other block rows zero: the
//      partial sums of the updates that layer runs)          (staged: redistribute_placed, counted)
//   2. every layer: the resident engine (potrf_2d.cpp) with the fiber steps: the diagonal tile
//      all-reduced and the panel tiles reduced onto their home layers (MPI, through host memory),
//      the solve on the home layers, the solved tiles (Repl) or their column slices (ReplPart)
//      to the update layers (MPI), the panel along the rows and down the columns of each update
//      layer (NCCL | MPI staged), herk / gemm on the device
//   3. the home block rows back into the compact placement and into A's layout   (staged, counted)
//
// Traffic is cala::potrf's (run_layered), message for message; the model is potrf_plan_cost on
// the same CholPlan.

#include "resident/potrf_25d.hpp"

#include <algorithm>

#include "cholesky/layered.hpp"
#include "core/workspace.hpp"
#include "kernels/blas.hpp"
#include "matrix/redistribute_impl.hpp"
#include "model/costs.hpp"
#include "resident/potrf_2d.hpp"

namespace cala::detail {

ResPotrfGeom res_potrf_layer_geom(const CholPlan& plan, int layer, int row, int col) {
    ResPotrfGeom g = res_potrf_geom(false, plan.work, row, col);
    g.h = plan.h;
    g.part = plan.geom.part;
    g.me = layer;
    return g;
}

index_t resident_potrf_workspace_25d(const CholPlan& plan, int rank) {
    if (rank >= plan.p * plan.q * plan.h) return 0;
    const int layer = rank / (plan.p * plan.q), r = rank / plan.q % plan.p, c = rank % plan.q;
    return local_elems(plan.work, r, c) + res_potrf_layer_geom(plan, layer, r, c).slots().total();
}

template <class T>
index_t resident_potrf_25d(const CholPlan& plan, const Grid3D& g3, const Side<T>& a, int lookahead, bool nccl,
                           int ordinal) {
    device::Device& dev = *a.dev;
    const Placement user = placement_of(*a.grid, a.layout), compact = chol_compact_placement(plan);
    const LayeredShares sh(plan, g3);
    const index_t um = a.m_loc(), un = a.n_loc(), uld = std::max<index_t>(um, 1);
    Buffer<T> cstore(sh.cm * sh.cn);
    {
        const Buffer<T> src = to_host(dev, static_cast<const T*>(a.data), a.ld, um, un);
        redistribute_placed(plan.op, g3.comm(), user, src.data(), uld, compact, cstore.data(), sh.cld, false, T(0));
    }
    index_t info = 0;
    if (g3.active()) {
        const int me = g3.layer();
        Buffer<T> w(sh.wm * sh.wn);
        kernels::scale(sh.wm, sh.wn, T(0), w.data(), sh.wld);
        copy_home_rows(plan, g3, sh, cstore.data(), w.data(), true);
        const DeviceArray<T> share(dev, sh.wm * sh.wn);
        to_device(dev, share.data(), sh.wld, w.data(), sh.wm, sh.wn);
        const Side<T> layer{&g3.layer_grid(), plan.work, &dev, share.data(), sh.wld};
        info = resident_potrf_layer(res_potrf_layer_geom(plan, me, g3.row(), g3.col()), layer, g3.fiber_comm(),
                                    lookahead, nccl, ordinal);
        w = to_host(dev, static_cast<const T*>(share.data()), sh.wld, sh.wm, sh.wn);
        copy_home_rows(plan, g3, sh, cstore.data(), w.data(), false);
    }
    Buffer<T> dst(um * un);
    redistribute_placed(plan.op, g3.comm(), compact, cstore.data(), sh.cld, user, dst.data(), uld, false, T(0));
    to_device(dev, a.data, a.ld, dst.data(), um, un);
    return info;
}

#define CALA_INST(T) \
    template index_t resident_potrf_25d<T>(const CholPlan&, const Grid3D&, const Side<T>&, int, bool, int);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::detail

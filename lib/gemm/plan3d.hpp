#pragma once
// 2.5D / 3D SUMMA on a p x q x c grid: where each operand lives, as virtual block-cyclic
// placements over all ranks. Pure arithmetic, shared by lib/gemm/summa3d.cpp and the model.
//
// Spreading blocks over layers is itself block-cyclic. "By layer" over the columns: a virtual
// p x (c·q) grid, block b on virtual column v = b mod c·q, i.e. on layer v mod c and layer
// column v / c. Layer h then holds blocks h, h+c, h+2c, ... in the order a plain p x q layout
// of those blocks would store them: its local storage *is* a layer-local block-cyclic matrix.
//
//   k-blocks 0..7, c = 2, q = 2:   block  0 1 2 3 4 5 6 7
//                                  layer  0 1 0 1 0 1 0 1     layer 0 holds blocks 0 2 4 6
//                                  col    0 0 1 1 0 0 1 1       = its layer-local blocks 0 1 2 3
//
//   variant  layer h computes                        then
//   C        op(A)(:, K_h)·op(B)(K_h, :), k by layer  partial C reduced over the fiber, block t of
//                                                     a rank's local columns to layer t mod c, and
//                                                     returned from there to the user's layout
//   A        op(A) (replicated) · op(B)(:, N_h)       C(:, N_h) returned from layer h
//   B        op(A)(M_h, :) · op(B) (replicated)       C(M_h, :) returned from layer h
// Replicated operands go to layer 0 in one redistribution and are broadcast along fibers.

#include "cala/gemm.hpp"
#include "gemm/plan.hpp"
#include "matrix/redist_plan.hpp"

namespace cala::detail {

/// How a virtual grid's coordinates map to the ranks of a p x q x c grid.
enum class Spread {
    ColsByLayer,    ///< virtual p x (c·q): v -> layer v mod c, column v / c
    RowsByLayer,    ///< virtual (c·p) x q: v -> layer v mod c, row v / c
    ColsReduced,    ///< virtual p x (c·q): v -> layer v / q, column v mod q (reduce-scatter target)
    Layer0,         ///< p x q on layer 0 (the source of a replication)
};

struct Shape3 {
    int p = 1, q = 1, c = 1;
};

/// Ranks of a virtual layout's process coordinates (rank = (h·p + r)·q + col).
Placement spread_placement(const BlockCyclic& virt, Spread s, const Shape3& g);

/// Number of indices layer h holds of Dist1D(n, nb) spread by layer over c layers.
index_t layer_extent(index_t n, index_t nb, int c, int h);

struct Operand3D {
    Op redist_op = Op::N;  ///< op applied when moving the user's matrix
    Op kernel_op = Op::N;  ///< op the layer kernel applies (A/B-stationary's transposed operand)
    BlockCyclic virt;      ///< its layout over the virtual grid of `spread`
    Spread spread = Spread::Layer0;
    bool replicated = false;  ///< Layer0 + broadcast along fibers
};

struct Plan3D {
    Variant variant = Variant::StationaryC;
    Shape3 g;
    index_t nb = 1;
    Operand3D a, b;       ///< what the layer kernel reads (A', B' | A', Bt | At, B')
    BlockCyclic c_virt;   ///< where C's result is returned from (ColsReduced, ColsByLayer, RowsByLayer)
    Spread c_spread = Spread::ColsReduced;
    GemmOptions opts;
    /// The layers run the resident engines (lib/resident/summa3d.cpp): their plans take the panel
    /// path (on_devices, no device list), 512-wide panels unless opts says, all of the looped
    /// dimension in one group on a 1 x 1 layer.
    bool resident = false;

    /// Layouts on layer h's p x q grid of the kernel's operands and of its C.
    BlockCyclic a_layer(int h) const;
    BlockCyclic b_layer(int h) const;
    BlockCyclic c_layer(int h) const;
    /// The 2D plan the layer kernel runs with (nothing moves inside a layer).
    GemmPlan layer_plan(int h) const;
};

Plan3D plan_gemm_3d(Op op_a, Op op_b, index_t m, index_t n, index_t k, Variant v, Shape3 g, index_t nb,
                    const GemmOptions& opts);

}  // namespace cala::detail

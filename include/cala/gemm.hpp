#pragma once
// cala::gemm: C := alpha·op(A)·op(B) + beta·C on a 2D process grid.
//
// cala::gemm -> plan (model/) -> summa_c | summa_a | summa_b -> kernels::gemm (BLIS)

#include <cstdint>

#include "cala/matrix.hpp"

namespace cala {

/// Which matrix stays in place while the other two move (Schatz, van de Geijn, Poulson).
enum class Variant {
    Auto,         ///< the variant the model says moves the fewest words
    StationaryC,  ///< panels of A and B broadcast along rows and columns (classic SUMMA)
    StationaryA,  ///< panels of B broadcast along columns, partial C reduced along rows
    StationaryB,  ///< panels of A broadcast along rows, partial C reduced along columns
};

const char* to_string(Variant v) noexcept;

struct GemmOptions {
    Variant variant = Variant::Auto;
    /// Panels whose broadcasts (and, for A/B-stationary, reductions) are in flight while the
    /// current panel's local GEMM runs.
    int lookahead = 1;
    /// Width of one step's panel along the looped dimension, rounded up to whole blocks;
    /// 0 picks 512 (wide enough for the local GEMM to run at the BLAS rate).
    index_t panel_width = 0;
};

/// C := alpha·op(A)·op(B) + beta·C.
///
/// Collective over the grid of C; every rank passes the same ops, scalars, shapes, layouts and
/// options (checked: a disagreement is a cala::Error on every rank). Local memory of A and B is
/// only read; C is written in place. A, B and C may have any block sizes and source processes:
/// operands that do not line up with the chosen variant are redistributed internally (counted in
/// the traffic and in the model).
/// @pre  A, B, C live on the same process grid; op(A) is m x k, op(B) is k x n, C is m x n
///       (otherwise cala::Error on every rank, inputs untouched)
/// @note beta == 0: C is not read (NaN in C does not leak). k == 0: C := beta·C.
template <class T>
void gemm(Op op_a, Op op_b, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta,
          const MatrixRef<T>& c, const GemmOptions& opts = {});

}  // namespace cala

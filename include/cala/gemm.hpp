#pragma once
// cala::gemm: C := alpha·op(A)·op(B) + beta·C on a 2D process grid.
//
// cala::gemm -> plan (model/) -> summa_c | summa_a | summa_b -> kernels::gemm (BLIS)

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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

/// A p x q x c process grid for 2.5D/3D SUMMA (c layers of p x q). All zero: the planner
/// decides; c = 1 with p, q set: 2D SUMMA on a p x q regridding of the ranks.
struct Shape3D {
    int p = 0, q = 0, c = 0;
};

struct GemmOptions {
    Variant variant = Variant::Auto;
    /// Panels whose broadcasts (and, for A/B-stationary, reductions) are in flight while the
    /// current panel's local GEMM runs.
    int lookahead = 1;
    /// Width of one step's panel along the looped dimension, rounded up to whole blocks;
    /// 0 picks 512 (wide enough for the local GEMM to run at the BLAS rate); with `devices`,
    /// all of k on a 1 x 1 grid and 8192 otherwise (each group's chunked call moves C in and out).
    index_t panel_width = 0;
    /// Force a p x q x c grid (see Shape3D). Left zero with a forced variant: 2D SUMMA on the
    /// user's own grid. Left zero with Variant::Auto: the planner chooses among 2D on the user's
    /// grid and every 2.5D/3D grid that fits the memory limit.
    Shape3D grid3d = {};
    /// Block size of the layouts the 2.5D/3D path works in; 0 lets the planner choose.
    index_t block_size = 0;
    /// Hard limit on the workspace cala may allocate per rank, in bytes; 0 reads
    /// CALA_MAX_MEMORY_MB from the environment, and no limit if that is unset.
    std::int64_t memory_limit_bytes = 0;
    /// Devices that run each rank's local updates with the chunked out-of-core engine
    /// (cala/device.hpp): "host", "host,host", "0,1" (CUDA ordinals; a GPU may be listed twice).
    /// Empty: the CALA_DEVICES environment variable; unset too: the rank's cores through BLIS.
    std::string devices = {};
    /// Memory cap per device in bytes for the chunked engine (0: the device's own).
    std::int64_t max_device_bytes = 0;
    /// A device list naming more than one kind of unit ("cpu,0,1") runs each local update on the
    /// node runtime (cala/node.hpp) with these speeds, one per unit (empty: CALA_UNIT_SPEEDS, else
    /// all 1), and this strategy (empty: CALA_NODE_STRATEGY, else "nrrp-rounded-effective").
    std::vector<double> unit_speeds = {};
    std::string node_strategy = {};
    /// Stationary C on a p x 1 grid broadcasts each process row's whole local op(B) once and
    /// keeps a copy of A' in owner order (docs/gemm.md, "whole rows") while one rank's A' plus
    /// all of op(B) stay within this many elements (default 2^25: 256 MiB of doubles); larger
    /// products take the panel path, whose workspace is a few panels. 0: never.
    std::int64_t whole_rows_max_elements = std::int64_t{1} << 25;
    /// Stationary C on a p x 1 or 1 x q grid whose ranks all run on one node gathers the operand
    /// split along k (op(B) on p x 1, op(A) on 1 x q) into shared memory (/dev/shm): each rank copies
    /// its part in place once, then every rank runs one local GEMM on all of it; no message moves
    /// (docs/gemm.md, "node-shared gather"). Used while each rank's share of that operand stays
    /// within whole_rows_max_elements. The cost model assumes the ranks share a node when this
    /// is set: set it false for a model of ranks on several nodes (cala::gemm then broadcasts).
    bool node_shared_memory = true;
    /// ... and while every rank holds at least this many rows (p x 1) or columns (1 x q) of C: the
    /// local GEMM packs the gathered operand from shared memory, in 4 KiB pages (/dev/shm has no
    /// transparent huge pages), and with few rows or columns of C to reuse each packed element
    /// that costs more than the broadcast saves. Measured through the ABI on 1 x 2 at nb = 64:
    /// 65536 x 512 x 512 (256 local columns) 0.85 s gathered against 0.53 s by owner runs,
    /// 1024 x 1024 x 65536 (512) 1.96 s against 1.55 s; the squares (1024 and more) gained
    /// 2-13%. 0: whatever the shape.
    index_t node_shared_min_reuse = 1024;
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

namespace cala {

struct GemmPlanInfo;

/// A 2.5D/3D product whose operands stay in the layered layouts between calls: iterative users
/// (the same A against many B, say) pay the conversion and replication once.
///
///   cala::Gemm3D<double> g(Op::N, Op::N, a, b, c, {.grid3d = {4, 4, 4}});   // plans, moves A and B
///   for (...) { update b;  g.set_b(b);  g.multiply(1.0, 0.0, c); }          // A is not moved again
///
/// Every member is collective over the grid of C; shapes and layouts are fixed at construction.
template <class T>
class Gemm3D {
public:
    /// Plans (opts.grid3d, or the planner's best 2.5D/3D grid) and moves A and B into place.
    Gemm3D(Op op_a, Op op_b, const MatrixRef<T>& a, const MatrixRef<T>& b, const MatrixRef<T>& c,
           const GemmOptions& opts = {});
    ~Gemm3D();
    Gemm3D(Gemm3D&&) noexcept;
    Gemm3D& operator=(Gemm3D&&) noexcept;

    void set_a(const MatrixRef<T>& a);  ///< A's values again (same shape and layout)
    void set_b(const MatrixRef<T>& b);
    /// C := alpha·op(A)·op(B) + beta·C with the stored operands; C in the layout given at construction.
    void multiply(T alpha, T beta, const MatrixRef<T>& c);
    const GemmPlanInfo& plan() const noexcept;

private:
    struct State;
    std::unique_ptr<State> s_;
};

}  // namespace cala

#pragma once
// Analytic cost of cala's algorithms: words and messages per rank (the Traffic convention of
// comm.hpp), flops, and extra memory per rank. Pure functions, no MPI.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cala/gemm.hpp"
#include "cala/grid.hpp"
#include "cala/layout.hpp"

namespace cala {

struct Cost {
    std::int64_t words = 0;  ///< sent + received, in elements
    std::int64_t words_recv = 0;  ///< received only (the bandwidth cost of a full-duplex link)
    std::int64_t msgs = 0;   ///< sent + received
    double flops = 0;        ///< local floating-point operations (a complex multiply-add = 8)
    std::int64_t extra_bytes = 0;  ///< peak workspace cala allocates on this rank
    /// Elements the rank's local kernels pass through memory beside the flops: op(A) of each
    /// local GEMM, packed once per 4096 columns of its C, and twice each reduced element it
    /// receives (MPI's sum, then the add into C): the time the flop rate alone misses when C
    /// has few columns or the partial results are large.
    double stream_words = 0;
};

/// Exact cost on process (row, col) of 2D SUMMA on the user's grid (variant v; Auto: the one
/// with the fewest words) for operands with these layouts.
/// `elem_size` is sizeof(T); `is_complex` selects the flop count.
Cost gemm_cost(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
               Variant v, const GemmOptions& opts, int row, int col, std::size_t elem_size,
               bool is_complex);

/// Exact cost on communicator rank `rank` of cala::gemm as it runs, the planner's choice (2D on
/// the user's grid, or 2.5D/3D with the conversions from and to the user's layout) included,
/// for operands on a grid of the given order.
Cost gemm_cost(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
               const GemmOptions& opts, GridOrder order, int rank, std::size_t elem_size, bool is_complex);

/// Words moved summed over all ranks by 2D SUMMA on the user's grid (cheap: no loop over ranks).
std::int64_t gemm_total_words(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b,
                              const BlockCyclic& c, Variant v, const GemmOptions& opts);

/// The variant with the fewest total words (ties: C, then A, then B).
Variant choose_gemm_variant(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b,
                            const BlockCyclic& c, const GemmOptions& opts);

/// Machine parameters of the predicted time: latency per message, time per byte moved by a
/// rank, time per flop of a rank's local kernels, time per byte its kernels pack from memory
/// (Cost::stream_words). Defaults: `cala-bench calibrate` measured on the development machine
/// (the packing term off); CALA_MODEL_LATENCY_US, CALA_MODEL_BANDWIDTH_GBS, CALA_MODEL_GFLOPS
/// and CALA_MODEL_STREAM_GBS override them.
struct MachineModel {
    double latency_s = 2.0e-6;
    double seconds_per_byte = 1.0 / 10.0e9;
    double seconds_per_flop = 1.0 / 100.0e9;
    double seconds_per_stream_byte = 0;
    static MachineModel from_env();
    /// latency·msgs + time per byte·words·elem + time per flop·flops + time per packed byte·stream·elem
    double seconds(double msgs, double words, double flops, double stream_words, std::size_t elem) const {
        return latency_s * msgs + seconds_per_byte * double(elem) * words + seconds_per_flop * flops +
               seconds_per_stream_byte * double(elem) * stream_words;
    }
};

/// What the planner chose for C := op(A)·op(B) on P ranks, and what it predicts per rank.
struct GemmPlanInfo {
    Variant variant = Variant::StationaryC;
    bool user_grid = false;  ///< 2D SUMMA on the user's own grid (no regridding)
    Shape3D grid;            ///< p x q x c (c = 1 with user_grid for the 2D case)
    index_t block_size = 0;
    int idle_ranks = 0;      ///< ranks left out because P does not factor well
    double words = 0, msgs = 0, flops = 0;  ///< max(sent, received) words, messages, flops per busiest rank
    double stream_words = 0;                ///< elements its kernels pack from memory (Cost::stream_words)
    std::int64_t memory_bytes = 0;          ///< peak workspace per rank (upper bound)
    double predicted_time_s = 0;
    std::string describe() const;           ///< one line, e.g. "C 2x2x2 nb=256 ..."
};

/// The decomposition cala::gemm picks for an m x n x k product on P ranks whose operands are
/// laid out block-cyclically (nb x nb blocks) on the squarest 2D grid: every 2D and 2.5D/3D
/// grid with p·q·c <= P, every variant, under the memory limit of `opts` (or CALA_MAX_MEMORY_MB).
/// Throws cala::Error saying how much memory per rank the cheapest plan needs when none fits.
GemmPlanInfo plan_gemm(index_t m, index_t n, index_t k, Op op_a, Op op_b, int nranks, const GemmOptions& opts = {},
                       const MachineModel& machine = MachineModel::from_env(), index_t user_block = 256,
                       std::size_t elem_size = 8);

/// What cala::gemm will do for operands with these layouts on a grid of the given order.
GemmPlanInfo plan_gemm(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
                       GridOrder order, const GemmOptions& opts, std::size_t elem_size, bool is_complex);

/// One plan the planner scored for a call: its prediction, whether it fits the memory limit, and
/// the kind of layout it computes in ("caller's layout", "caller's grid, nb=256", "1D rows 2x1",
/// "1D columns 1x2", "1D over layers 1x1x2", "2D 2x2", "2.5D 2x2x2").
struct GemmCandidate {
    GemmPlanInfo info;
    bool fits = true;  ///< within the memory limit
    std::string kind;
};

/// Why cala::gemm computes where it does: every candidate the planner scored, fastest first (ties
/// in the order the planner scores them, which is the order it breaks ties in), and the choice.
struct GemmPlanReport {
    GemmPlanInfo chosen;
    std::vector<GemmCandidate> candidates;
    MachineModel machine;  ///< the constants the predicted seconds were computed with
    std::size_t elem_size = 8;
    std::string reason;    ///< one sentence: why the choice, against the caller's layout
    /// The candidates' lines (the fastest variant of each kind, grid and block size; "*" marks
    /// the choice), then the machine constants and the reason.
    std::vector<std::string> lines() const;
};

/// The planner's choice for these operands with every candidate it scored. Deterministic in its
/// arguments and the CALA_MODEL_* / CALA_MAX_MEMORY_MB environment: no communication.
/// Throws cala::Error as plan_gemm does when nothing fits the memory limit.
GemmPlanReport explain_gemm_plan(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
                                 GridOrder order, const GemmOptions& opts, std::size_t elem_size, bool is_complex);

/// Predicted seconds of a cost on a machine: latency·messages + time per byte·max(words sent,
/// words received)·elem_size + time per flop·flops (the planner's formula, for one rank's Cost).
double predicted_seconds(const Cost& cost, const MachineModel& machine, std::size_t elem_size);

/// Exact words/messages process (row, col) moves in redistribute(op, src -> dst).
Cost redistribute_cost(Op op, const BlockCyclic& src, const BlockCyclic& dst, int row, int col);
/// Words moved summed over all ranks by redistribute(op, src -> dst).
std::int64_t redistribute_total_words(Op op, const BlockCyclic& src, const BlockCyclic& dst);

}  // namespace cala

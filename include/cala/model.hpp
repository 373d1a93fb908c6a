#pragma once
// Analytic cost of cala's algorithms: words and messages per rank (the Traffic convention of
// comm.hpp), flops, and extra memory per rank. Pure functions, no MPI.

#include <cstddef>
#include <cstdint>

#include "cala/gemm.hpp"
#include "cala/layout.hpp"

namespace cala {

struct Cost {
    std::int64_t words = 0;  ///< sent + received, in elements
    std::int64_t msgs = 0;   ///< sent + received
    double flops = 0;        ///< local floating-point operations (a complex multiply-add = 8)
    std::int64_t extra_bytes = 0;  ///< peak workspace cala allocates on this rank
};

/// Exact cost on process (row, col) of cala::gemm for operands with these layouts.
/// `elem_size` is sizeof(T); `is_complex` selects the flop count.
Cost gemm_cost(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
               Variant v, const GemmOptions& opts, int row, int col, std::size_t elem_size,
               bool is_complex);

/// Words moved summed over all ranks (cheap: no loop over ranks); Auto resolves by this.
std::int64_t gemm_total_words(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b,
                              const BlockCyclic& c, Variant v, const GemmOptions& opts);

/// The variant with the fewest total words (ties: C, then A, then B).
Variant choose_gemm_variant(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b,
                            const BlockCyclic& c, const GemmOptions& opts);

/// Exact words/messages process (row, col) moves in redistribute(op, src -> dst).
Cost redistribute_cost(Op op, const BlockCyclic& src, const BlockCyclic& dst, int row, int col);
/// Words moved summed over all ranks by redistribute(op, src -> dst).
std::int64_t redistribute_total_words(Op op, const BlockCyclic& src, const BlockCyclic& dst);

}  // namespace cala

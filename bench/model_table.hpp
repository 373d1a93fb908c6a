#pragma once
// The table `cala-bench model` prints: per-rank words and memory of every algorithm cala has a
// cost model for, for P = 1, 2, 4, ... ranks, beside the communication lower bounds that hold
// for it. Pure functions over the library's own model (cala::gemm_cost, plan_gemm, potrf_cost,
// plan_potrf, trsm_cost): no second model here, no MPI.
//
// Lower bounds, on the words a rank sends plus receives (the Traffic convention of comm.hpp),
// for square n x n x n problems (F = multiply-adds of the busiest rank's share):
//   GEMM, memory-dependent (Irony-Toledo-Tiskin 2004 with the constant of COSMA, Kwasniewski et
//     al. SC'19, Theorem 2 less the memory's own load): 2·n³/(P·sqrt(M)) − M, M = the largest
//     memory (data held + workspace, in elements) of any probed rank;
//   GEMM, memory-independent (Ballard et al. 2012; COSMA's 3·(mnk/P)^(2/3)): 3·(n³/P)^(2/3) − H,
//     H = the most elements of A, B and C any rank holds before the call;
//   GEMM, 2D reference: the memory-dependent bound at the memory of one copy of the operands,
//     M = 3n²/P (what a 2D algorithm has): 2n²/sqrt(3P) − 3n²/P. Printed for every GEMM row,
//     binding only the rows that use no more memory than that;
//   Cholesky, memory-dependent (Kwasniewski et al. SC'21, the thesis' reference [82]):
//     n³/(3·P·sqrt(M)) − M (2F/sqrt(M) − M, F = n³/(6P)); with M = c·n²/P this is
//     n²/(3·sqrt(cP)) − c·n²/P;
//   Cholesky, memory-independent: F^(2/3) − H. The update L(i,j) −= L(i,k)·L(j,k) touches three
//     elements of the one matrix L, so Loomis-Whitney gives only that the largest of the three
//     projections, hence the elements the rank touches, number at least F^(2/3).
// A bound holds for the rank with at least the average share of the work, so the busiest
// rank's words can be compared with it; M and H are maxima over ranks, which keeps the bounds
// valid (both decrease as M and H grow).

#include <optional>
#include <string>
#include <vector>

#include "cala/types.hpp"

namespace cala::bench {

struct ModelSpec {
    index_t n = 32768;     ///< order of the square problem (GEMM m = n = k; Cholesky, trsm n x n)
    index_t nb = 256;      ///< block size of the user's layouts on the squarest 2D grid
    int p_max = 16384;     ///< P = 1, 2, 4, ... up to this
    int exact_up_to = 64;  ///< every rank's cost for P up to this; a sample of `probes` above
    int probes = 64;
    std::vector<std::string> families{"gemm", "potrf", "trsm"};
};

struct ModelRow {
    std::string family;     ///< gemm, potrf, trsm
    std::string algorithm;  ///< e.g. summa2d-C, summa3d, planner, 2d, repl, replpart
    std::string
        plan;       ///< what ran: grid, variant, block (the library's describe() for planner rows)
    int ranks = 0;  ///< P
    int p = 1, q = 1, c = 1;
    int probed_ranks = 0;   ///< ranks whose exact cost the maxima are over
    double words = 0;       ///< max over probed ranks, sent + received
    double words_recv = 0;  ///< max over probed ranks, received only
    double msgs = 0;
    double held_words = 0;    ///< max elements of the operands a rank holds before the call
    double extra_bytes = 0;   ///< max workspace
    double memory_words = 0;  ///< max over probed ranks of held + workspace, in elements
    std::optional<double> bound_mem, bound_indep, bound_2d;
    std::optional<double> bound;  ///< the largest bound that holds for this row
    std::string bound_name;
};

/// Every row of the table (GEMM: SUMMA 2D C/A/B, 2.5D with c = 4, 3D with c = 2^floor(log2(P)/3),
/// the planner's choice; Cholesky: 2D, Repl and ReplPart with h = 2^floor(log2(P)/3), the
/// planner's choice; trsm: 2D with n right-hand sides).
std::vector<ModelRow> model_rows(const ModelSpec& spec);

}  // namespace cala::bench

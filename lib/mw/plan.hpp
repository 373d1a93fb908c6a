#pragma once
// Internal: the block geometry of a master-worker product and the plan a strategy produces.
// Shared by the simulator (simulate.cpp) and the real run (master.cpp): both execute a Plan
// through the same MasterCore (master_core.hpp), so a prediction and a run differ only in where
// the event times come from.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cala/mw.hpp"

namespace cala::mw::detail {

/// Sizes in elements and in q x q blocks (edge blocks are partial).
struct Dims {
    index_t m = 0, n = 0, k = 0, q = 1;
    index_t r = 0, s = 0, t = 0;  ///< block rows of C, block columns of C, blocks along k
};

inline Dims make_dims(index_t m, index_t n, index_t k, index_t q) {
    return {m, n, k, q, ceil_div(m, q), ceil_div(n, q), ceil_div(k, q)};
}

/// How a worker uses its memory, in blocks: a rows x cols square of C (rows <= r, cols <= s);
/// per step `depth` blocks along k of A (rows x depth) and of B (depth x cols), `nbuf` buffers.
struct Layout {
    index_t rows = 0, cols = 0, depth = 0;
    int nbuf = 0;
    bool used() const { return rows > 0; }
    std::int64_t blocks() const { return rows * cols + nbuf * depth * (rows + cols); }
};

/// Maximum re-use layout with side mu (capped by the matrix), double-buffered.
inline Layout ml_layout(std::int64_t mu, const Dims& d) {
    if (mu < 1) return {};
    return {std::min<index_t>(mu, d.r), std::min<index_t>(mu, d.s), 1, 2};
}

/// Toledo's layout: beta x beta squares of A, B and C, single-buffered.
inline Layout bmm_layout(std::int64_t beta, const Dims& d) {
    if (beta < 1) return {};
    return {std::min<index_t>(beta, d.r), std::min<index_t>(beta, d.s),
            std::min<index_t>(beta, d.t), 1};
}

/// A chunk of C in blocks: block rows [i0, i0 + ni), block columns [j0, j0 + nj).
struct Chunk {
    index_t i0 = 0, ni = 0, j0 = 0, nj = 0;
};

/// Element extents of a chunk and of step s of a chunk.
struct ChunkShape {
    index_t row0, rows, col0, cols;  ///< elements of C
};
inline ChunkShape shape_of(const Chunk& c, const Dims& d) {
    const index_t r0 = c.i0 * d.q, c0 = c.j0 * d.q;
    return {r0, std::min(d.m, (c.i0 + c.ni) * d.q) - r0, c0,
            std::min(d.n, (c.j0 + c.nj) * d.q) - c0};
}
inline index_t steps_of(const Layout& l, const Dims& d) { return ceil_div(d.t, l.depth); }
/// Elements of k covered by step s: [k0, k0 + len).
inline void step_range(const Layout& l, const Dims& d, index_t s, index_t& k0, index_t& len) {
    k0 = s * l.depth * d.q;
    len = std::min(d.k, (s + 1) * l.depth * d.q) - k0;
}

/// What a strategy decided. Static plans fix each worker's chunks and the order of all step
/// sends (`sequence`, one worker index per step); dynamic plans fix only the layouts, and the
/// master hands out C panels and steps as workers become ready (MasterCore).
struct Plan {
    Strategy strategy = Strategy::Het;
    std::string variant;
    bool dynamic = false;
    std::vector<Layout> layout;              ///< per worker (unused: rows == 0)
    std::vector<std::vector<Chunk>> chunks;  ///< static: per worker, in order
    std::vector<int> sequence;               ///< static: worker of each step send, in order
};

/// Chunks of one panel of block columns [j0, j0 + w), top to bottom, rows blocks high.
inline void panel_chunks(const Dims& d, index_t rows, index_t j0, index_t w,
                         std::vector<Chunk>& out) {
    for (index_t i0 = 0; i0 < d.r; i0 += rows) out.push_back({i0, std::min(rows, d.r - i0), j0, w});
}

/// Simulated execution of a plan under the one-port model (simulate.cpp).
struct SimResult {
    double makespan = 0;
    double port_busy = 0;
    std::vector<std::int64_t> chunks;  ///< per worker
    TrafficModel traffic;
};
SimResult run_plan(const Platform& p, const Dims& d, const Plan& plan);

/// The plan of a strategy (strategies.cpp); Het and HomI simulate candidates to choose.
Plan make_plan(const Platform& p, const Dims& d, Strategy s);

/// Greedy step-by-step selection (selection.cpp): Het's 8 variants and OMMOML.
struct Selection {
    bool global = true;      ///< global ratio (work so far / port time) or local (this step's)
    bool lookahead = false;  ///< score a choice by the best pair (this step, the next)
    bool c_cost = false;     ///< charge the C exchange at each chunk start
    bool min_min = false;    ///< OMMOML: earliest finish of the step instead of a ratio
};
Plan select_plan(const Platform& p, const Dims& d, const std::vector<Layout>& layout,
                 const Selection& sel);

/// Round robin (ORROML, Hom, HomI): panels dealt to `workers` in turn, one step each per round.
Plan round_robin_plan(const Dims& d, const std::vector<Layout>& layout,
                      const std::vector<int>& workers);

/// The master's traffic for a list of processed chunks (counting convention of TrafficModel).
void add_chunk_traffic(TrafficModel& t, const Dims& d, const Layout& l, const Chunk& c);
void add_worker_traffic(TrafficModel& t);  ///< STOP task and final report of one worker

std::string validate_message(const Platform& p, const char* what, int master);

}  // namespace cala::mw::detail

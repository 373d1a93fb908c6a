#pragma once
// cala::mw: the matrix product C <- C + A·B on a heterogeneous master-worker platform
// (Dongarra, Pineau, Robert and Vivien, PPoPP 2008).
//
// cala::mw::gemm -> discover platform (block transfers and block products per worker, medians)
//                -> plan (lib/hetero: Het | Hom | HomI | ORROML | OMMOML | ODDOML | BMM, each
//                   simulated under the one-port model) -> master loop | worker loop
//                -> Comm::isend/irecv (counted) -> kernels::gemm on q x q blocks (BLIS)
//
// A, B and C live only on the master. Every worker keeps, with the "maximum re-use" layout, a
// mu x mu square of C blocks, and per step receives mu blocks of B (one block row) and mu blocks
// of A (one block column), double-buffered: mu^2 + 4·mu <= m_i blocks. Worked example, one worker
// with m = 21 blocks (mu = 3: 9 C blocks + 2 x (3 A + 3 B) step buffers), t block columns of A:
//
//   master -> w : TASK (chunk shape), C11..C33            (9 blocks, once per chunk)
//   master -> w : step 1: B11 B12 B13, A11 A21 A31        (6 blocks; w computes Cij += Ai1·B1j)
//   master -> w : step 2: B21 B22 B23, A12 A22 A32        (into the second buffer, while step 1
//   ...                                                     is computed)
//   w -> master : C11..C33 after step t                   (9 blocks)
//
// One-port model: the master sends to, or receives from, one worker at a time (one block in
// flight, tracked); a worker receives step s+1 while it computes step s.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cala/comm.hpp"
#include "cala/types.hpp"

namespace cala::mw {

/// Who is sent what, and when (Section 6.2 of the paper).
enum class Strategy {
    Het,     ///< incremental resource selection: its 8 variants simulated, the best one runs
    Hom,     ///< homogeneous algorithm on the best virtual platform "workers with >= M blocks"
    HomI,    ///< homogeneous algorithm on the best virtual platform over thresholds of m, c and w
    ORROML,  ///< round robin over all workers, maximum re-use layout
    OMMOML,  ///< min-min: each step goes to the worker that would finish it first (static)
    ODDOML,  ///< demand driven: each step goes to the first worker able to receive it (dynamic)
    BMM,     ///< Toledo's blocked algorithm: memory in thirds (A, B, C squares), demand driven
};

/// The seven strategies, in the order above.
inline constexpr std::array<Strategy, 7> all_strategies{
    Strategy::Het,    Strategy::Hom,    Strategy::HomI, Strategy::ORROML,
    Strategy::OMMOML, Strategy::ODDOML, Strategy::BMM};

/// The name as the paper spells it ("Het", "HomI", "ODDOML", ...).
const char* to_string(Strategy s) noexcept;
/// Inverse of to_string (case-insensitive); cala::Error naming the string otherwise.
Strategy strategy_from_string(const std::string& name);

/// One worker as the model sees it (linear costs, no start-up: Section 2 of the paper).
struct Worker {
    double c = 0;        ///< seconds for the master to send one q x q block to it (or receive one)
    double w = 0;        ///< seconds for one block update C_ij += A_ik·B_kj (q^3 multiply-adds)
    std::int64_t m = 0;  ///< memory: how many q x q blocks it may hold at once
};

/// A star platform: the master and its workers. Worker i is the i-th rank of the communicator
/// other than the master (in increasing rank order).
struct Platform {
    index_t q = 0;  ///< block size the costs and memory refer to
    std::vector<Worker> workers;
};

/// Maximum re-use layout: the largest mu with mu^2 + 4·mu <= m (0 when m < 5).
std::int64_t mu_of(std::int64_t m) noexcept;
/// Toledo's layout: the largest beta with 3·beta^2 <= m (square A, B and C blocks of beta x beta).
std::int64_t bmm_side_of(std::int64_t m) noexcept;

/// Checks a platform: q > 0, at least one worker, each c and w positive and finite, each m >= 5
/// (one step of the maximum re-use layout with mu = 1). cala::Error naming the first bad worker
/// ("<what>: worker 2 (rank 3) ..."); `master` is the master's rank, used to name ranks.
void validate(const Platform& p, const char* what = "mw", int master = 0);

/// Traffic of the master under cala's counting convention (cala/comm.hpp): data words are matrix
/// elements, control words are 64-bit integers (TASK: 6 words per chunk and one to stop each
/// worker; READY credits and the final report: 1 word each).
struct TrafficModel {
    std::int64_t msgs_sent = 0, msgs_recv = 0;
    std::int64_t words_sent = 0, words_recv = 0;
    std::int64_t data_words_sent = 0, data_words_recv = 0;  ///< matrix elements only
};

/// A strategy's schedule evaluated under the one-port model (no MPI).
struct Prediction {
    Strategy strategy = Strategy::Het;
    std::string variant;               ///< Het: the selection that won, e.g. "global+lookahead+C"
    double makespan_s = 0;             ///< first message to last C block back at the master
    std::vector<int> enrolled;         ///< workers (indices into Platform::workers) given C chunks
    std::vector<std::int64_t> blocks;  ///< per worker: most blocks it holds at once (<= m)
    std::vector<std::int64_t> chunks;  ///< per worker: C chunks computed
    double block_updates = 0;          ///< q^3 multiply-add units in the product (m·n·k / q^3)
    double port_busy_s = 0;            ///< time the master's port was busy
    TrafficModel traffic;              ///< the master's messages and words
};

/// Predicts the makespan of `s` computing C(m x n) += A(m x k)·B(k x n) on `p` (validated as in
/// validate()). Deterministic; local, no MPI. Het simulates its 8 selection variants and reports
/// the best; Hom and HomI simulate each candidate virtual platform.
Prediction simulate(const Platform& p, index_t m, index_t n, index_t k, Strategy s);

/// Every strategy, in all_strategies order.
std::vector<Prediction> simulate_all(const Platform& p, index_t m, index_t n, index_t k);

/// The steady-state linear program of the paper (Table 1): maximize sum x_i subject to
/// sum y_i·c_i <= 1 (one port), x_i·w_i <= 1, x_i <= mu_i·y_i / 2. Its optimum is
/// bandwidth-centric: workers by increasing 2c_i/mu_i, enrolled while
/// sum 2c_i/(mu_i·w_i) <= 1, the next one in part.
/// It ignores memory limits beyond mu_i and the C traffic: an upper bound on throughput.
struct SteadyState {
    double throughput = 0;        ///< block updates per second
    std::vector<double> x;        ///< per worker: block updates per second
    double makespan_bound_s = 0;  ///< (m·n·k / q^3) / throughput: a lower bound on any makespan
};
SteadyState steady_state(const Platform& p, index_t m, index_t n, index_t k);

/// Heterogeneity emulation for experiments, per worker (empty vector: none). Compute: after each
/// block product of duration d the worker idles (f - 1)·d (the paper computed f times). Links:
/// after each block transfer of duration d the master keeps its port (f - 1)·d longer (the paper
/// sent f times). Factors are >= 1. Memory caps are Options::memory_bytes.
struct Emulation {
    std::vector<double> compute_slowdown;
    std::vector<double> link_slowdown;
};

/// Options of mw::gemm; every rank passes the same values (checked).
struct Options {
    Strategy strategy = Strategy::Het;
    int master = 0;  ///< rank holding A, B and C
    /// Given platform (q, c, w, m per worker): used as is. Absent: discovered at the call.
    std::optional<Platform> platform;
    /// Block size when discovering; 0 picks the smallest of 32, 48, ..., 256 whose block product
    /// runs at >= 85% of the best of them on the master.
    index_t q = 0;
    /// Memory budget of each worker in bytes when discovering: one value for all or one per
    /// worker; m_i = budget / (q^2·sizeof(T)) blocks.
    std::vector<std::int64_t> memory_bytes{64ll << 20};
    Emulation emulation;
    /// The master waits by testing its requests and sleeping this long between tests; a
    /// waiting worker sleeps a fifth of it (0: everyone spins, as MPI_Wait would). A block
    /// transfer then takes about one interval; make it exceed the worker's block product time
    /// plus two block copies for steady transfer times (docs/mw.md). The calling thread's timer
    /// slack is set to 1 us during the call (restored after) so that sleeps last what they ask.
    double poll_interval_s = 100e-6;
};

/// What a call did. Complete on the master; on a worker only `blocks_peak` (its own, one
/// entry) and `traffic` are set.
struct Report {
    Strategy strategy = Strategy::Het;
    std::string variant;
    Platform platform;                       ///< as used (discovered, or given)
    std::vector<int> enrolled_ranks;         ///< ranks given C chunks
    double predicted_makespan_s = 0;         ///< simulate() of the strategy on `platform`
    double makespan_s = 0;                   ///< measured on the master, first send to last receive
    double discovery_s = 0, planning_s = 0;  ///< master time to measure the platform and to plan
    double master_cpu_s = 0;                 ///< CPU time of the master thread during the product
    int max_port_transfers = 0;    ///< most block transfers the master had in flight at once
    double port_busy_s = 0;        ///< master time with a block transfer in flight
    std::int64_t port_blocks = 0;  ///< block transfers (C out, A and B out, C back)
    std::vector<std::int64_t> blocks_peak;  ///< per worker: most blocks held at once (<= m_i)
    Traffic traffic;     ///< this rank's traffic during the product (not discovery)
    TrafficModel model;  ///< the master's traffic the plan predicts
};

/// C := C + A·B, A m x k, B k x n, C m x n, column-major with leading dimensions, on the master.
///
/// Collective over `comm` (duplicated inside): every rank passes the same m, n, k and options;
/// the pointers and leading dimensions are significant on the master only (others may pass
/// nullptr, 0). The master sends blocks of A, B and C to the workers and receives the C blocks
/// back, one transfer at a time; it waits for MPI by polling and sleeping, not spinning.
/// Workers multiply block by block and test MPI between two block products (so the next step
/// arrives meanwhile); a waiting worker sleeps too. Only the calling thread calls MPI.
/// @pre  comm has >= 2 ranks; m, n, k >= 0; lda >= max(1, m), ldb >= max(1, k), ldc >= max(1, m)
///       on the master; a given platform has one worker per non-master rank, each with memory
///       for one step (m_i >= 5): otherwise cala::Error on every rank naming the argument or the
///       worker, before any communication that could hang; C untouched.
/// @note Instantiated for float, double, complex<float>, complex<double>.
template <class T>
Report gemm(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb, T* c,
            index_t ldc, const Comm& comm, const Options& opts = {});

}  // namespace cala::mw

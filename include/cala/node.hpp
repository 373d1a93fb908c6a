#pragma once
// The node (issue 19): the units of one rank (the host's CPU team and devices, each a memory node
// with a speed), a static allocation of the C tiles of one update to them (NRRP of Beaumont et
// al., discretized by ROUNDED or PRECISE, seed Eyraud-Dubois & Lambert 2018, Algorithm 1) and a
// runtime that prefetches and steals. Local: no MPI.
//
// cala::node::gemm -> allocation (lib/node/nrrp.cpp, discretize.cpp) | dmda plan
//                  -> runtime (lib/node/runtime.cpp, tiles.cpp, steal.cpp)
//                  -> kernels::gemm (cpu unit) | Device::gemm

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cala/types.hpp"

namespace cala::node {

// ---------------------------------------------------------------------------------------------
// Allocation: pure functions.

/// A rectangle [x0, x1) x [y0, y1) of a partitioned region, part of the zone of `unit`.
/// x runs over rows of C tiles (its projection = rows of A needed), y over columns (B).
struct Rect {
    double x0, x1, y0, y1;
    int unit;
};

/// NRRP: partitions [0, width) x [0, height) into one zone per speed (a rectangle or an L of two
/// rectangles per recursion level), zone u of area speeds[u] / sum(speeds) · width · height, with
/// a small sum of half-perimeters (on the unit square at most 2/√3 times the lower bound
/// 2·Σ√(s_u / Σs)). Shared edges are the same double on both sides.
/// @pre speeds non-empty, each finite and > 0; width, height > 0 (cala::Error naming it)
std::vector<Rect> nrrp(std::span<const double> speeds, double width = 1.0, double height = 1.0);

/// Sum over units 0..units-1 of the half-perimeter of each zone: the length of the union of its
/// x intervals plus that of its y intervals.
double half_perimeter_sum(std::span<const Rect> zones, int units);

/// Tiles each unit computes when `total` tiles are shared by speeds, by rounding the partial sums
/// (seed: n_k = Round(total·Σ_{i<=k} s_i) - Σ_{i<k} n_i). Sums to total exactly.
std::vector<index_t> precise_shares(std::span<const double> speeds, index_t total);

/// An owner per C tile of an mt x nt tile grid.
class Allocation {
public:
    Allocation() = default;
    Allocation(index_t mt, index_t nt, int units);
    index_t mt() const noexcept { return mt_; }
    index_t nt() const noexcept { return nt_; }
    int units() const noexcept { return units_; }
    int owner(index_t i, index_t j) const { return owner_[static_cast<std::size_t>(i + j * mt_)]; }
    void set(index_t i, index_t j, int u) { owner_[static_cast<std::size_t>(i + j * mt_)] = u; }
    /// Tiles of unit u; tile rows (A) and tile columns (B) its tiles touch (its projections).
    index_t tiles(int u) const;
    index_t rows(int u) const;
    index_t cols(int u) const;

private:
    index_t mt_ = 0, nt_ = 0;
    int units_ = 0;
    std::vector<int> owner_;  // column-major; -1 before assignment
};

/// ROUNDED: every coordinate of zones (of [0, mt) x [0, nt), e.g. nrrp(speeds, mt, nt)) rounded
/// to the nearest integer (halves up); tile (i, j) goes to the rectangle whose rounded ranges
/// hold it. Throws if the rounded rectangles do not cover every tile exactly once.
Allocation rounded(std::span<const Rect> zones, int units, index_t mt, index_t nt);

/// PRECISE (seed Algorithm 1): inner rectangles first, then every remaining tile (column-major
/// order) to the neighbouring unit (8 neighbours) with the fewest tiles still owed, else to the
/// unit with the fewest positive tiles owed. Unit u gets precise_shares(speeds, mt·nt)[u] tiles.
Allocation precise(std::span<const Rect> zones, std::span<const double> speeds, index_t mt, index_t nt);

/// The naive 1D baseline: consecutive blocks of columns, precise_shares(speeds, nt) wide.
Allocation column_blocks(std::span<const double> speeds, index_t mt, index_t nt);

/// Today's dealing: column j to unit j mod units, speeds ignored.
Allocation cyclic_columns(int units, index_t mt, index_t nt);

enum class Discretization { Rounded, Precise };

/// nrrp(speeds, mt, nt) discretized.
Allocation nrrp_allocation(std::span<const double> speeds, index_t mt, index_t nt, Discretization d);

/// Checks speeds: non-empty, each finite and > 0; at most `units` of them (units < 0: no limit).
/// Throws cala::Error naming `what` and the offending entry.
void check_speeds(std::span<const double> speeds, int units, const char* what);

// ---------------------------------------------------------------------------------------------
// Runtime.

/// How the tiles of one update are dealt to the units.
enum class Placement { NrrpRounded, NrrpPrecise, Columns, Cyclic, Dmda };
/// What a unit does when it holds fewer than two prefetched tasks and its own list is empty.
enum class Steal { Static, Rand, Effective };

struct Strategy {
    Placement placement = Placement::NrrpRounded;
    Steal steal = Steal::Effective;
};

/// "nrrp-rounded-effective", "nrrp-precise-static", "columns-rand", "cyclic" (cyclic-static),
/// "dmda" (no stealing).
std::string strategy_name(const Strategy& s);
/// Inverse of strategy_name; throws cala::Error naming the string.
Strategy parse_strategy(const std::string& name);
/// The strategies cala-bench hetero compares, in its order.
std::vector<Strategy> all_strategies();

/// What one unit did during a node::gemm.
struct UnitStats {
    std::string kind;            ///< "cpu" (host memory, no transfers), "host" (emulated device), "cuda"
    double speed = 0;
    std::int64_t tasks = 0;      ///< tile tasks (C(i,j) += A(i,l)·B(l,j)) it ran
    std::int64_t stolen = 0;     ///< of those, taken from another unit's list
    std::int64_t tiles_in = 0;   ///< tiles copied into its memory (host -> unit, unit -> unit)
    std::int64_t tiles_out = 0;  ///< tiles copied out of its memory (C written back or handed on)
    std::int64_t tiles_d2d = 0;  ///< of tiles_in, those copied from another unit's memory
    std::int64_t peak_tiles = 0; ///< most tiles it held at once
    double busy_s = 0, idle_s = 0;
};

/// One task as it ran (times in seconds from the start of the run).
struct TaskRecord {
    index_t i, j, l;
    int planned;     ///< unit of the allocation (or of the DMDA plan)
    int prefetched;  ///< unit that took it into its prefetch window (-1: never)
    int ran;         ///< unit that ran it
    double t0, t1;   ///< holding C(i, j): from acquiring it to releasing it
};

struct NodeReport {
    std::string strategy;
    index_t tile = 0, mt = 0, nt = 0, kt = 0;
    std::vector<UnitStats> units;
    std::vector<TaskRecord> tasks;  ///< filled when NodeOptions::record_tasks
    std::int64_t steals = 0, tiles_moved = 0;  ///< sums over units (tiles_moved: in + out)
    double seconds = 0;
};

/// Options of node::gemm. Zero / empty means "choose".
struct NodeOptions {
    /// Comma-separated unit list: "cpu" (the host's cores reading host memory, no transfers),
    /// "host" (a HostDevice: own memory budget, copies), a CUDA ordinal ("0"). Empty: the
    /// CALA_DEVICES environment variable, else "cpu".
    std::string units;
    /// Relative speed per unit. Empty: CALA_UNIT_SPEEDS ("1,4,4,8"), else calibrated (calibrate(),
    /// with this call's tile; a single unit: 1).
    std::vector<double> speeds;
    Strategy strategy{};
    index_t tile = 0;                   ///< tile size (0: 256, at most the largest dimension)
    std::int64_t max_device_bytes = 0;  ///< memory per non-cpu unit; 0: the device's own (host: 1 GiB)
    int threads_per_unit = 1;           ///< BLAS threads of each non-cpu unit's tasks
    /// BLAS threads of each "cpu" unit's tasks (an aggregated team; list "cpu" twice for two
    /// teams). 0: the calling thread's BLAS threads (OpenMP's, or what cala gave it: potrf's
    /// update beside a panel gets the cores the panel does not use) not driving another unit,
    /// shared by the cpu units, >= 1.
    int cpu_threads = 0;
    /// Emulation: a task of a full tile on a unit of speed s holds the unit at least
    /// emulate_tile_s / s seconds (its real compute included); each tile moved holds the link of
    /// the unit that receives it emulate_link_s seconds. Zero: real speed.
    double emulate_tile_s = 0, emulate_link_s = 0;
    /// The speed each unit is emulated at (emulate_tile_s / s per full tile), one per unit; empty:
    /// the given speeds (`speeds`, CALA_UNIT_SPEEDS), else 1. Lets a test give the units true
    /// speeds that the allocation does not know, so that calibration must find them.
    std::vector<double> emulate_speeds;
    unsigned seed = 1;                  ///< RandSteal's victims
    bool record_tasks = false;          ///< fill NodeReport::tasks
    NodeReport* report = nullptr;
};

/// Per unit (by its place in the list), the UnitStats of every node::gemm of this process since
/// the last reset, summed (kind and speed: the latest run's). How a caller that runs many local
/// updates on the node (cala::gemm, cala::potrf with devices) sees what each unit did.
std::vector<UnitStats> unit_totals();
void reset_unit_totals();

/// Checks a unit list ("cpu", "host", CUDA ordinals; empty: CALA_DEVICES, else "cpu") and its
/// speeds (empty: CALA_UNIT_SPEEDS, else all 1) without making any unit; returns the speeds.
/// Throws cala::Error naming the entry (unknown unit, bad speed, more speeds than units).
std::vector<double> check_units(const std::string& units, std::vector<double> speeds, const char* what);

/// Each unit's relative speed, measured: one tile GEMM (double, opts.tile (0: 256) cubed, best of
/// five) per unit of opts.units, on the unit itself (a cpu unit on its team's BLAS threads in
/// host memory, a device on tiles in its own memory), a unit emulated at speed s
/// (opts.emulate_tile_s > 0, NodeOptions::emulate_speeds) timed as at least the hold
/// emulate_tile_s / s it would run with, so an emulated unit whose real GEMM fits its hold gets
/// its emulated speed back. Speeds are 1 / seconds, scaled so the slowest unit's is 1. Cached per
/// process by (units, tile, memory cap, threads, emulation): a second call measures nothing.
/// node::gemm calls it when no speeds are given (neither opts.speeds nor CALA_UNIT_SPEEDS);
/// cala::gemm and cala::potrf take the fastest time of each unit over their ranks (one control
/// allreduce), so every rank allocates with the same speeds. Local (no communication).
/// @pre units valid, tile >= 0, emulation >= 0, emulate_speeds valid and one per unit, every
///      device holds three tiles of doubles (cala::Error naming the argument)
std::vector<double> calibrate(const NodeOptions& opts);
/// The unit GEMMs calibrate has timed in this process (a cached call adds none).
std::int64_t calibrations();

/// C := alpha·op(A)·op(B) + beta·C (column-major host matrices) on the units of opts: the C tiles
/// allocated by opts.strategy, each unit running its tasks C(i,j) += A(i,l)·B(l,j) with the next
/// two tasks' inputs prefetched, stealing per the strategy; two tasks of one C tile never run at
/// once. Local (no communication); C is back in host memory on return. With tracing on
/// (core/trace), unit u's tasks and C moves land on track u (a task it stole from another
/// unit's list is named "stolen task", the others "task"), its A/B prefetches on track units + u.
/// @pre sizes >= 0, lds large enough, speeds valid and no more than units, every non-cpu unit
///      holds at least three tiles (cala::Error naming the argument; C untouched)
/// @note beta == 0: C is not read.
template <class T>
void gemm(Op op_a, Op op_b, index_t m, index_t n, index_t k, T alpha, const T* a, index_t lda, const T* b,
          index_t ldb, T beta, T* c, index_t ldc, const NodeOptions& opts = {});

}  // namespace cala::node

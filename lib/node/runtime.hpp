#pragma once
// Internal: the node runtime. One compute thread per unit runs its tasks C(i,j) += A(i,l)·B(l,j)
// in list order; a copy thread per non-cpu unit fetches the A and B tiles of the unit's next two
// tasks (its prefetch window) into the unit's memory; a unit whose window is not full and whose
// own list is empty steals from the other lists (never from a window). C(i,j) is held by one task
// at a time (its busy flag); it lives where its last task ran (host memory, or a unit's memory)
// and moves host -> unit, unit -> unit or unit -> host when a task elsewhere needs it; every
// unit writes its C tiles back when it has no more work.
//
// Tiles moved (UnitStats::tiles_in / tiles_out) count A, B and C tiles (edge tiles count as one).
// With memory for all of them and Static, a unit u != cpu moves exactly
//   in = kt·(rows(u) + cols(u)) + tiles(u),  out = tiles(u)
// (the allocation's projections); a cpu unit moves nothing.

#include <span>
#include <vector>

#include "cala/node.hpp"
#include "device/device.hpp"

namespace cala::node::detail {

struct Unit {
    device::Device* dev = nullptr;  ///< null: the cpu unit (host memory, no copies)
    double speed = 1;
    std::string kind;
    double emulate_speed = 1;  ///< the hold of a full tile is RunConfig::tile_s / emulate_speed
};

/// The unit list: `units`, else CALA_DEVICES, else "cpu".
std::string unit_list(const std::string& units);

/// BLAS threads of each cpu unit's tasks: opts.cpu_threads, else the OpenMP threads not driving
/// one of the `others` non-cpu units, shared by the `cpus` cpu units (at least 1).
int cpu_team_threads(const NodeOptions& opts, int cpus, int others);

/// The speed unit u is emulated at: opts.emulate_speeds[u], else given[u] (the given speeds),
/// else 1.
double emulated_speed(const NodeOptions& opts, const std::vector<double>& given, std::size_t u);

/// Seconds of each unit's calibration GEMM (node::calibrate; cached per process).
std::vector<double> calibration_seconds(const NodeOptions& opts);
/// Speeds from seconds: the slowest unit's is 1.
std::vector<double> speeds_of(const std::vector<double>& seconds);

/// True when the caller gave speeds: `speeds` non-empty or CALA_UNIT_SPEEDS set.
bool speeds_given(const std::vector<double>& speeds);

struct Task {
    index_t i, j, l;
    int planned;
};

struct RunConfig {
    Steal steal = Steal::Static;
    index_t tile = 0;
    double tile_s = 0, link_s = 0;
    unsigned seed = 1;
    int threads = 1;      ///< BLAS threads of a non-cpu unit's task
    int cpu_threads = 1;  ///< of a cpu unit's task
    bool record = false;
};

/// Runs the lists (lists[u]: unit u's tasks in order; together every task of the update once)
/// on c += alpha·op(a)·op(b) (C already scaled by beta). Fills rep.units, rep.tasks (record),
/// rep.steals, rep.tiles_moved, rep.seconds.
template <class T>
void run(std::span<const Unit> units, const std::vector<std::vector<Task>>& lists, const RunConfig& cfg, Op op_a,
         Op op_b, index_t m, index_t n, index_t k, T alpha, const T* a, index_t lda, const T* b, index_t ldb, T* c,
         index_t ldc, NodeReport& rep);

}  // namespace cala::node::detail

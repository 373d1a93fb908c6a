#pragma once
// The local sweep: out := S(in) over one box of a field's storage (OpenMP, cache blocked).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cala/stencil.hpp"
#include "stencil/internal.hpp"

namespace cala::detail {

/// A stencil's points as storage offsets for one layout, in the stencil's order.
template <class T>
struct Taps {
    std::vector<index_t> off;
    std::vector<T> coef;
    int radius = 0;
};

template <class T>
Taps<T> make_taps(const Stencil<T>& st, const Layout& L);

/// Cache blocking of the sweep. Rows (fixed j, k) are cut into tiles of bx points so that the
/// 2r+2 rows a row step touches fit in row_bytes (a share of L2); in 3D, rows are walked in tiles
/// of by rows along y, plane after plane along z, so that the 2r+1 planes of a tile fit in
/// plane_bytes (a share of L3: tiling y shortens the memory streams, which costs more than L3
/// hits do, so it is kept for planes too large for it). 0 picks the size from the budget.
///
/// Output rows go to memory with non-temporal stores (no read of the line before it is written:
/// 2 memory transfers per point instead of 3) when the box's output exceeds stream_bytes (-1:
/// the last-level cache, which the next step could not have read it from anyway; 0: always)
/// and the stencil takes one pass per row (at most 9 taps). The bits do not change.
struct Blocking {
    std::int64_t row_bytes = 512 * 1024;
    std::int64_t plane_bytes = 8 * 1024 * 1024;
    index_t bx = 0, by = 0;
    std::int64_t stream_bytes = -1;
    /// sweep_steps: the bytes of both buffers a wavefront may keep in cache (-1: the default,
    /// window_default_bytes(); 0: no temporal blocking), or its height in units (> 0: forced).
    std::int64_t window_bytes = -1;
    index_t wave_units = 0;
    index_t wave_tile = 0;  ///< sweep_steps' skewed tile width along x (2D) or y (3D) (> 0: forced)
};

/// The cache budget of sweep_steps' wavefront when Blocking::window_bytes is -1: the L2 window
/// (L2 / 2: the wavefront in the core's own cache) or the last-level one (min(8·L2, LLC / 8,
/// 16 MiB)), whichever sweeps faster on this machine by more than 3% (ties: the last-level one).
/// On an Intel Emerald Rapids Xeon, whose L3 moves about as much per core as memory does, the L2
/// window ran 25-40% faster per step; the last-level one was the only one before. Measured once
/// per CPU (window_rate: 8 steps of the 5-point stencil on a 2048² field, each budget) and cached
/// with cala's other measurements (kernels::machine_cache_*); CALA_STENCIL_WINDOW_BYTES forces
/// a budget (0: no temporal blocking).
struct WindowChoice {
    std::int64_t bytes = 0, l2_bytes = 0, llc_bytes = 0;
    double l2_rate = 0, llc_rate = 0;  ///< updates per second measured (0: forced)
    std::string reason;
};
const WindowChoice& window_choice();
/// The two candidates (bytes, reason and rates unset).
WindowChoice window_candidates();
std::int64_t window_default_bytes();

/// out(p) := sum_k coef_k·in(p + off_k), summed in tap order, for every p in b. The rows of b
/// are split over the OpenMP threads in contiguous runs of the blocked order. in and out are
/// distinct buffers of layout L.
template <class T>
void sweep_box(const Layout& L, const T* in, T* out, const Box& b, const Taps<T>& taps, const Blocking& blk = {});

/// S = boxes.size() steps in a row, step k over boxes[k], reading a and writing b when k is even,
/// the other way when odd: the same values, bit for bit, as S calls of sweep_box. Each box must
/// lie in the previous one shrunk by the radius (except along a side where both end at a fixed
/// boundary), as PA1's cycles are.
///
/// Temporal blocking: the slowest dimension with extent > 1 (y in 2D, z in 3D) is walked in
/// wavefronts of u units (rows in 2D, planes in 3D); wavefront w computes step k over units
/// [y0 + w·u − k·r, y0 + (w+1)·u − k·r) of its box, for k = 0..S−1 in order. Step k lags step
/// k−1 by r units, so the units it reads are done, and the step k−2 values it overwrites are
/// read by no later unit of step k−1. What the wavefront touches (about (u + (S+1)·r) units of
/// both buffers) stays in cache: a point goes to and from memory about once per S steps
/// instead of once per step. Threads split each unit range and meet at a barrier between steps.
/// Falls back to S sweeps (streamed where sweep_box streams) when S < 2 or the window does not
/// fit the budget.
/// `progress`, if set, is called by the calling thread now and then (between tiles, and every
/// few wavefronts), and at the end.
template <class T>
void sweep_steps(const Layout& L, T* a, T* b, const std::vector<Box>& boxes, const Taps<T>& taps,
                 const Blocking& blk = {}, const std::function<void()>& progress = {});

}  // namespace cala::detail

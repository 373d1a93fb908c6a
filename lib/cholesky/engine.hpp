#pragma once
// The right-looking tile loop of cala::potrf on one rank of a p x q x h grid (h = 1: 2D).
// See geometry.hpp for the schedule; lib/cholesky/potrf.cpp sets up layouts and grids.

#include "cala/cholesky.hpp"
#include "cala/comm.hpp"
#include "cala/device.hpp"
#include "cholesky/geometry.hpp"

namespace cala::detail {

struct EngineArgs {
    CholGeom g;
    int layer = 0, row = 0, col = 0;  ///< this rank
    const Comm* row_comm = nullptr;   ///< the q ranks of this process row in this layer (rank == col)
    const Comm* col_comm = nullptr;   ///< the p ranks of this process column (rank == row)
    const Comm* fiber = nullptr;      ///< the h ranks of this (row, col) (rank == layer); null for 2D
    int lookahead = 1;
    PanelMode panel = PanelMode::Single;
    int panel_threads = 0;
    /// 1 x q grids whose ranks share a node, one thread a rank: panels through node-shared slots
    /// (comm/node_slots.hpp) instead of row broadcasts (the same traffic counted).
    bool node_shared = false;
    /// Not null: each step's trailing update (but the lookahead column) runs through these
    /// units (node_update.hpp); the panel stays on the rank's cores, outside OpenMP tasks.
    const DeviceGemmOptions* devices = nullptr;
};

/// Factors the lower triangle held in the local array w (ld ldw, the working layout of a.g on
/// this rank's layer). Returns the 1-based global index of the first pivot that failed on this
/// rank, or 0. Traffic follows geometry.hpp's schedule exactly (the model counts the same).
template <class T>
index_t potrf_engine(const EngineArgs& a, T* w, index_t ldw);

}  // namespace cala::detail

#pragma once
// BLACS contexts as cala grids.
//
// shim -> context (this) -> BLACS (Cblacs_get, Cblacs2sys_handle) + cala::Grid2D (grid/)
//
// A BLACS grid owns an MPI communicator holding exactly its processes (BLACS's point-to-point
// scope); Cblacs_get(ctxt, 10, &h) registers it as a system context and Cblacs2sys_handle(h)
// returns it. Its rank order is the BLACS process number, row-major over the grid whatever the
// order the grid was made with, so a RowMajor Grid2D over it puts every process at its BLACS
// (myrow, mycol). The shim checks this on every process rather than assume it: a column-major
// numbering gets a ColumnMajor Grid2D, any other one (a communicator from some other BLACS) a
// row-major renumbering (reported once on stderr). Only the processes of the grid take part:
// programs that run ScaLAPACK on a sub-grid of their ranks work.

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cala/grid.hpp"
#include "scalapack/descriptor.hpp"

namespace cala::scalapack {

/// The MPI communicator of the processes of BLACS grid `ctxt` (BLACS's own; never freed here).
/// Local; `ctxt` must be a valid context that this process belongs to.
MPI_Comm grid_communicator(int ctxt);

/// What the processes of a grid agree on before a call does any work.
struct Agreement {
    int code = ArgCheck::kNone;  ///< the smallest argument-check code over the grid
    bool cala_layouts = true;    ///< cala has layouts for every operand (on every process)
    bool cached = true;          ///< every process holds a valid cached Grid2D for the context
    bool row_major = true;       ///< communicator rank == row·q + col on every process
    bool col_major = true;       ///< communicator rank == col·p + row on every process
};

/// An argument that must hold the same value on every process of the grid (ScaLAPACK's
/// PCHK1MAT / PCHK2MAT): where two processes differ, the call fails with `code` (in
/// ArgCheck's encoding), unless a smaller code fails first.
struct SameArg {
    int value;
    int code;
};

/// Appends the entries of descriptor argument number `pos` that must agree (DTYPE, M, N, MB, NB,
/// RSRC, CSRC; ScaLAPACK's 1-based entry numbers in the codes) to `out`.
void same_descriptor(std::vector<SameArg>& out, const int* desc, int pos);

/// The same for a descriptor in PBLAS's 11-entry form: DTYPE, M, N, IMB, INB, MB, NB, RSRC, CSRC
/// (CTXT and LLD may differ between processes), coded in that numbering.
void same_pblas_descriptor(std::vector<SameArg>& out, const Desc& d, int pos);

/// The bits of a scalar as an int that agree() can compare (FNV-1a, 31 bits).
template <class T>
int scalar_bits(const T& v) {
    std::uint64_t h = 1469598103934665603ull;
    const auto* p = reinterpret_cast<const unsigned char*>(&v);
    for (std::size_t i = 0; i < sizeof v; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return static_cast<int>(h & 0x7fffffff);
}

/// One MPI_Allreduce (5 + 2·same.size() integers) over `comm`, the grid's communicator:
/// collective over the grid. `same` must list the same arguments in the same order everywhere.
Agreement agree(MPI_Comm comm, const GridPos& g, int code, bool cala_layouts, bool cached,
                std::span<const SameArg> same = {});

/// The cached Grid2D of `ctxt` if it still describes this grid (same shape and position, a
/// communicator congruent to `comm`: BLACS reuses context numbers after Cblacs_gridexit);
/// nullptr otherwise. Local.
const Grid2D* cached_grid(int ctxt, MPI_Comm comm, const GridPos& g);

/// Builds the Grid2D of `ctxt` (the order `a` found) and caches it. Collective over `comm`;
/// throws cala::Error if the grid does not put this process at its BLACS coordinates.
const Grid2D& make_grid(int ctxt, MPI_Comm comm, const GridPos& g, const Agreement& a);

}  // namespace cala::scalapack

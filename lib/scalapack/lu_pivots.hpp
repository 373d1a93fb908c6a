#pragma once
// ScaLAPACK's IPIV (p?getrf's output, p?getrs's input) and cala's pivot vector, both ways.
//
// pgetrf.cpp, pgetrs.cpp, pgesv.cpp -> lu_pivots (this) -> descriptor (local_count); MPI (one
// allreduce to read IPIV)
//
// cala::getrf returns min(m, n) pivots, 0-based and relative to sub(A)'s first row, the same on
// every rank: row i was interchanged with row ipiv[i] >= i. ScaLAPACK keeps them in a local
// INTEGER array of LOCr(M_A) + MB_A entries tied to A's rows: the pivot of global row IA + i is
// the global row index (1-based, of the whole matrix: ipiv[i] + IA) stored at that row's local
// index on the process row that holds it, on every process column. p?getf2 writes each panel's
// pivots (rows I .. I+JB-1, one block) at IIA .. IIA+JB-1 on every process row, IIA = the local
// index of the first row >= I that the process row holds; on the process rows that do not hold
// the panel these entries belong to later rows and are overwritten by later panels (the last
// panel's may land in the MB_A slack). write_ipiv replays those writes, so that the array is
// the one ScaLAPACK's p?getrf leaves, entry for entry. For instance MB = 2, p = 2, IA = 1, n = 6:
//
//   panel (rows)   process row 0 writes local 1..2 | process row 1 writes local 1..2
//   0 (1, 2)       its own rows 1, 2               | rows 3, 4's places (overwritten next)
//   1 (3, 4)       rows 5, 6's places (overwritten)| its own rows 3, 4
//   2 (5, 6)       its own rows 5, 6 (local 3..4)  | local 3..4 (the MB_A slack)

#include <cstdint>
#include <optional>
#include <vector>

#include <mpi.h>

#include "cala/types.hpp"
#include "scalapack/descriptor.hpp"

namespace cala::scalapack {

/// Writes cala's pivots `piv` (min(m, n) of them, 0-based relative to sub(A)'s first row IA)
/// into this process's IPIV as ScaLAPACK's p?getrf leaves it, for A with descriptor `desca`
/// (9 entries, MB = NB, IA on a block boundary). Local.
void write_ipiv(const std::vector<index_t>& piv, int ia, const int* desca, const GridPos& g, int* ipiv);

/// The n pivots of sub(A) (rows IA .. IA+n-1) read from ScaLAPACK's IPIV on every process (each
/// entry from the process row that holds the row), as cala's 0-based relative vector: one
/// MPI_Allreduce of 2·n integers over `comm`, the grid's communicator (collective over the
/// grid). nullopt (on every process alike) when the copies of the process columns differ or a
/// pivot of row i is not in [i, n): not a pivot sequence of sub(A) that cala can apply.
std::optional<std::vector<index_t>> read_ipiv(MPI_Comm comm, int n, int ia, const int* desca, const GridPos& g,
                                              const int* ipiv);

}  // namespace cala::scalapack

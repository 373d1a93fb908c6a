#pragma once
// The BLACS and ScaLAPACK entry points the shim calls (C interface of the MPI BLACS; Debian's
// libscalapack-mpich uses 32-bit ints). None of them has a public header.

#include <mpi.h>

#include <cstddef>

extern "C" {
void Cblacs_gridinfo(int ictxt, int* nprow, int* npcol, int* myrow, int* mycol);
/// what = 10: the handle of a system context for the grid's own communicator (all its processes).
void Cblacs_get(int ictxt, int what, int* val);
/// The MPI communicator of a system context handle.
MPI_Comm Cblacs2sys_handle(int sys_ctxt);
}

namespace cala::scalapack {

/// PBLAS's error handler (PB_Cabort): libscalapack's prints and aborts; a PBLAS tester links its
/// own, which records INFO and returns.
using PbAbortFn = void (*)(int ictxt, char* rout, int info);
/// ScaLAPACK's PXERBLA (Fortran: ICTXT, SRNAME, INFO, hidden length of SRNAME).
using PxerblaFn = void (*)(const int* ictxt, const char* srname, const int* info, std::size_t len);

}  // namespace cala::scalapack

#pragma once
// The MPI datatype of a C++ element type.

#include <mpi.h>

#include <complex>
#include <cstdint>

namespace cala::detail {

template <class T> MPI_Datatype mpi_type();
template <> inline MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <> inline MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }
template <> inline MPI_Datatype mpi_type<std::complex<float>>() { return MPI_C_FLOAT_COMPLEX; }
template <> inline MPI_Datatype mpi_type<std::complex<double>>() { return MPI_C_DOUBLE_COMPLEX; }
template <> inline MPI_Datatype mpi_type<int>() { return MPI_INT; }
template <> inline MPI_Datatype mpi_type<std::int64_t>() { return MPI_INT64_T; }
template <> inline MPI_Datatype mpi_type<char>() { return MPI_CHAR; }

}  // namespace cala::detail

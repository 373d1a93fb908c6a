// The shim's MPI flavour against the program's: libcala_scalapack (MPICH) preloaded into an Open
// MPI program, or libcala_scalapack_openmpi into an MPICH one, would bring a second MPI library
// into the process, and the first MPI call would crash deep inside one of them (each MPI's
// handles mean nothing to the other). At load time, before main, the shim looks for the other
// flavour's library among those loaded and, if it is there, says which shim to use and exits.

#include <mpi.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>

namespace {

#if defined(OPEN_MPI)
constexpr const char* kBuiltFor = "Open MPI";
constexpr const char* kOther = "MPICH";
constexpr const char* kOtherSymbol = "MPIR_Err_create_code";  // exported by libmpich only
constexpr const char* kOtherShim = "libcala_scalapack.so (cala built with -Dmpi=mpich)";
#else
constexpr const char* kBuiltFor = "MPICH";
constexpr const char* kOther = "Open MPI";
constexpr const char* kOtherSymbol = "ompi_mpi_comm_world";  // exported by Open MPI's libmpi only
constexpr const char* kOtherShim = "libcala_scalapack_openmpi.so (cala built with -Dmpi=openmpi)";
#endif

__attribute__((constructor)) void check_mpi_flavour() {
    if (dlsym(RTLD_DEFAULT, kOtherSymbol) == nullptr) return;
    std::fprintf(stderr,
                 "cala_scalapack: this shim is built for %s, but the program runs %s (both MPI libraries are "
                 "now loaded, which cannot work): use %s instead\n",
                 kBuiltFor, kOther, kOtherShim);
    std::fflush(stderr);
    _exit(1);
}

}  // namespace

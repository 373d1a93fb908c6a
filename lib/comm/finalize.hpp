#pragma once
// Work that must run while MPI still works, at MPI_Finalize: MPI_Finalize deletes MPI_COMM_SELF's
// attributes first, and an attribute's delete callback may still free communicators. A process-
// wide cache of communicators left to the static destructors (after MPI_Finalize) is never freed:
// MPICH's memory for it leaks (LeakSanitizer).

#include <mpi.h>

#include "core/check.hpp"

namespace cala::detail {

/// Calls `release` once, inside MPI_Finalize. Call it where the cache is first filled; later calls
/// with the same function do nothing.
template <void (*release)()>
void release_at_mpi_finalize() {
    static const bool registered = [] {
        int key = MPI_KEYVAL_INVALID;
        const auto on_delete = [](MPI_Comm, int, void*, void*) -> int {
            release();
            return MPI_SUCCESS;
        };
        CALA_CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_delete, &key, nullptr));
        CALA_CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, key, nullptr));
        return true;
    }();
    (void)registered;
}

}  // namespace cala::detail

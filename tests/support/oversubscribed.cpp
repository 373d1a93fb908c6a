// Oversubscribed test runs (more ranks than cores, as every run of more than 2 ranks is on CI's
// 2-core machine): a rank waiting in MPI yields its core instead of spinning in MPICH's progress
// loop, so that the ranks with work get the cores. MPICH 4.0's ch4 device has no yield of its own
// (MPIR_CVAR_POLLS_BEFORE_YIELD is ch3's); Open MPI yields when it knows it is oversubscribed.
//
// Through MPI's profiling interface: the MPI tests' executables define the blocking calls that
// cala and the tests make (MPI_Wait, and the blocking collectives as their nonblocking forms), and
// libcala's calls bind to them. Each waits with PMPI_Test and sched_yield between tests. Nothing
// else changes: the same messages, in the same order, through the same MPICH. Measured on 2 cores
// (test_redistribute on 6 ranks): 39.3 s spinning, 14.0 s yielding.
//
// CALA_TEST_YIELD=0 turns it off, =1 on; unset: on where the world has more ranks than this
// process may run on cores.

#include <mpi.h>
#include <sched.h>

#include <cstdlib>

#include "support/oversubscribed.hpp"

namespace cala::test {

bool yield_in_waits() {
    static const bool on = [] {
        if (const char* e = std::getenv("CALA_TEST_YIELD"); e && *e) return std::atoi(e) != 0;
        int size = 1;
        PMPI_Comm_size(MPI_COMM_WORLD, &size);
        cpu_set_t cores;
        CPU_ZERO(&cores);
        if (sched_getaffinity(0, sizeof cores, &cores) != 0) return false;
        return size > CPU_COUNT(&cores);
    }();
    return on;
}

}  // namespace cala::test

namespace {

int wait_yielding(MPI_Request* r, MPI_Status* st) {
    int done = 0;
    for (int polls = 0;; ++polls) {
        const int rc = PMPI_Test(r, &done, st);
        if (rc != MPI_SUCCESS || done) return rc;
        if (polls >= 8) sched_yield();
    }
}

// A blocking collective as its nonblocking form and a yielding wait.
template <class Start>
int collective(Start start) {
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc = start(&r);
    return rc != MPI_SUCCESS ? rc : wait_yielding(&r, MPI_STATUS_IGNORE);
}

}  // namespace

using cala::test::yield_in_waits;

extern "C" {

int MPI_Wait(MPI_Request* r, MPI_Status* st) { return yield_in_waits() ? wait_yielding(r, st) : PMPI_Wait(r, st); }

int MPI_Barrier(MPI_Comm c) {
    if (!yield_in_waits()) return PMPI_Barrier(c);
    return collective([&](MPI_Request* r) { return PMPI_Ibarrier(c, r); });
}

int MPI_Bcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm c) {
    if (!yield_in_waits()) return PMPI_Bcast(b, n, t, root, c);
    return collective([&](MPI_Request* r) { return PMPI_Ibcast(b, n, t, root, c, r); });
}

int MPI_Allreduce(const void* s, void* d, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
    if (!yield_in_waits()) return PMPI_Allreduce(s, d, n, t, op, c);
    return collective([&](MPI_Request* r) { return PMPI_Iallreduce(s, d, n, t, op, c, r); });
}

int MPI_Reduce(const void* s, void* d, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c) {
    if (!yield_in_waits()) return PMPI_Reduce(s, d, n, t, op, root, c);
    return collective([&](MPI_Request* r) { return PMPI_Ireduce(s, d, n, t, op, root, c, r); });
}

int MPI_Allgather(const void* s, int sn, MPI_Datatype st, void* d, int dn, MPI_Datatype dt, MPI_Comm c) {
    if (!yield_in_waits()) return PMPI_Allgather(s, sn, st, d, dn, dt, c);
    return collective([&](MPI_Request* r) { return PMPI_Iallgather(s, sn, st, d, dn, dt, c, r); });
}

int MPI_Gather(const void* s, int sn, MPI_Datatype st, void* d, int dn, MPI_Datatype dt, int root, MPI_Comm c) {
    if (!yield_in_waits()) return PMPI_Gather(s, sn, st, d, dn, dt, root, c);
    return collective([&](MPI_Request* r) { return PMPI_Igather(s, sn, st, d, dn, dt, root, c, r); });
}

int MPI_Gatherv(const void* s, int sn, MPI_Datatype st, void* d, const int* dn, const int* displs, MPI_Datatype dt,
                int root, MPI_Comm c) {
    if (!yield_in_waits()) return PMPI_Gatherv(s, sn, st, d, dn, displs, dt, root, c);
    return collective([&](MPI_Request* r) { return PMPI_Igatherv(s, sn, st, d, dn, displs, dt, root, c, r); });
}

}  // extern "C"

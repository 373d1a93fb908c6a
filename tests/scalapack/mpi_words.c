/* mpi_words: a PMPI interposer (LD_PRELOAD) that counts what each rank sends and receives through
 * the MPI calls ScaLAPACK's BLACS (and cala) use, the large-count (_c) ones of MPI 4 too, and prints per-rank totals at MPI_Finalize:
 *
 *   mpi_words rank=R bytes_sent=S bytes_recv=V msgs_sent=M msgs_recv=N
 *
 * on stderr, one line per rank. The convention is cala's (include/cala/comm.hpp), so that the
 * counts compare with cala's counters and cost model:
 *   point to point (Send, Ssend, Rsend, Bsend, Isend, Issend, Irsend; Recv, Irecv; Sendrecv,
 *     Sendrecv_replace): the message's bytes sent, or received (a receive counts the bytes posted:
 *     BLACS posts exact sizes); a message to or from oneself counts nothing;
 *   Bcast / Ibcast of w bytes over s > 1 ranks: the root sends one message, every other rank
 *     receives one;
 *   Reduce / Ireduce: every non-root sends one message, the root receives one;
 *   Allreduce / Iallreduce: every rank sends one and receives one.
 * (How MPI itself moves a collective's data, a tree or a ring, is not what is counted: the
 * algorithms' own words are.) Bytes are type sizes times counts (MPI_Type_size: derived types
 * count their data only).
 *
 *   mpicc.mpich -shared -fPIC -o libmpi_words.so mpi_words.c
 *   mpiexec.mpich -n 16 -genv LD_PRELOAD ./libmpi_words.so ./abi_solve getrf 1024 1 64 4 4 1
 */
#include <mpi.h>
#include <stdio.h>

static long long sent_ = 0, recv_ = 0, msent_ = 0, mrecv_ = 0;

static long long bytes(long long count, MPI_Datatype t) {
    int size = 0;
    if (count <= 0 || PMPI_Type_size(t, &size) != MPI_SUCCESS) return 0;
    return (long long)count * size;
}
static int self(MPI_Comm comm, int peer) {
    int me = -1;
    PMPI_Comm_rank(comm, &me);
    return peer == me || peer == MPI_PROC_NULL;
}
static void to(MPI_Comm comm, int peer, long long count, MPI_Datatype t) {
    const long long b = bytes(count, t);
    if (b > 0 && !self(comm, peer)) sent_ += b, ++msent_;
}
static void from(MPI_Comm comm, int peer, long long count, MPI_Datatype t) {
    const long long b = bytes(count, t);
    if (b > 0 && !self(comm, peer)) recv_ += b, ++mrecv_;
}
static int size_of(MPI_Comm comm) {
    int s = 1;
    PMPI_Comm_size(comm, &s);
    return s;
}
static void bcast(MPI_Comm comm, int root, long long count, MPI_Datatype t) {
    const long long b = bytes(count, t);
    if (b == 0 || size_of(comm) < 2) return;
    int me;
    PMPI_Comm_rank(comm, &me);
    if (me == root) sent_ += b, ++msent_;
    else recv_ += b, ++mrecv_;
}
static void reduce(MPI_Comm comm, int root, long long count, MPI_Datatype t) {
    const long long b = bytes(count, t);
    if (b == 0 || size_of(comm) < 2) return;
    int me;
    PMPI_Comm_rank(comm, &me);
    if (me == root) recv_ += b, ++mrecv_;
    else sent_ += b, ++msent_;
}
static void allreduce(MPI_Comm comm, long long count, MPI_Datatype t) {
    const long long b = bytes(count, t);
    if (b == 0 || size_of(comm) < 2) return;
    sent_ += b, recv_ += b, ++msent_, ++mrecv_;
}

int MPI_Send(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {
    to(comm, dest, count, t);
    return PMPI_Send(buf, count, t, dest, tag, comm);
}
int MPI_Ssend(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {
    to(comm, dest, count, t);
    return PMPI_Ssend(buf, count, t, dest, tag, comm);
}
int MPI_Rsend(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {
    to(comm, dest, count, t);
    return PMPI_Rsend(buf, count, t, dest, tag, comm);
}
int MPI_Bsend(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {
    to(comm, dest, count, t);
    return PMPI_Bsend(buf, count, t, dest, tag, comm);
}
int MPI_Isend(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request* r) {
    to(comm, dest, count, t);
    return PMPI_Isend(buf, count, t, dest, tag, comm, r);
}
int MPI_Issend(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request* r) {
    to(comm, dest, count, t);
    return PMPI_Issend(buf, count, t, dest, tag, comm, r);
}
int MPI_Irsend(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request* r) {
    to(comm, dest, count, t);
    return PMPI_Irsend(buf, count, t, dest, tag, comm, r);
}
int MPI_Recv(void* buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Status* st) {
    from(comm, src, count, t);
    return PMPI_Recv(buf, count, t, src, tag, comm, st);
}
int MPI_Irecv(void* buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Request* r) {
    from(comm, src, count, t);
    return PMPI_Irecv(buf, count, t, src, tag, comm, r);
}
int MPI_Sendrecv(const void* sb, int sc, MPI_Datatype st, int dest, int stag, void* rb, int rc, MPI_Datatype rt,
                 int src, int rtag, MPI_Comm comm, MPI_Status* status) {
    to(comm, dest, sc, st);
    from(comm, src, rc, rt);
    return PMPI_Sendrecv(sb, sc, st, dest, stag, rb, rc, rt, src, rtag, comm, status);
}
int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype t, int dest, int stag, int src, int rtag, MPI_Comm comm,
                         MPI_Status* status) {
    to(comm, dest, count, t);
    from(comm, src, count, t);
    return PMPI_Sendrecv_replace(buf, count, t, dest, stag, src, rtag, comm, status);
}
int MPI_Bcast(void* buf, int count, MPI_Datatype t, int root, MPI_Comm comm) {
    bcast(comm, root, count, t);
    return PMPI_Bcast(buf, count, t, root, comm);
}
int MPI_Ibcast(void* buf, int count, MPI_Datatype t, int root, MPI_Comm comm, MPI_Request* r) {
    bcast(comm, root, count, t);
    return PMPI_Ibcast(buf, count, t, root, comm, r);
}
int MPI_Reduce(const void* sb, void* rb, int count, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm) {
    reduce(comm, root, count, t);
    return PMPI_Reduce(sb, rb, count, t, op, root, comm);
}
int MPI_Ireduce(const void* sb, void* rb, int count, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm,
                MPI_Request* r) {
    reduce(comm, root, count, t);
    return PMPI_Ireduce(sb, rb, count, t, op, root, comm, r);
}
int MPI_Allreduce(const void* sb, void* rb, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
    allreduce(comm, count, t);
    return PMPI_Allreduce(sb, rb, count, t, op, comm);
}
int MPI_Iallreduce(const void* sb, void* rb, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm, MPI_Request* r) {
    allreduce(comm, count, t);
    return PMPI_Iallreduce(sb, rb, count, t, op, comm, r);
}

#if MPI_VERSION >= 4
/* cala calls the large-count variants where the MPI library has them (lib/comm/comm.cpp). */
int MPI_Isend_c(const void* buf, MPI_Count count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request* r) {
    to(comm, dest, count, t);
    return PMPI_Isend_c(buf, count, t, dest, tag, comm, r);
}
int MPI_Irecv_c(void* buf, MPI_Count count, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Request* r) {
    from(comm, src, count, t);
    return PMPI_Irecv_c(buf, count, t, src, tag, comm, r);
}
int MPI_Ibcast_c(void* buf, MPI_Count count, MPI_Datatype t, int root, MPI_Comm comm, MPI_Request* r) {
    bcast(comm, root, count, t);
    return PMPI_Ibcast_c(buf, count, t, root, comm, r);
}
int MPI_Ireduce_c(const void* sb, void* rb, MPI_Count count, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm,
                  MPI_Request* r) {
    reduce(comm, root, count, t);
    return PMPI_Ireduce_c(sb, rb, count, t, op, root, comm, r);
}
int MPI_Iallreduce_c(const void* sb, void* rb, MPI_Count count, MPI_Datatype t, MPI_Op op, MPI_Comm comm,
                     MPI_Request* r) {
    allreduce(comm, count, t);
    return PMPI_Iallreduce_c(sb, rb, count, t, op, comm, r);
}
#endif

int MPI_Finalize(void) {
    int me = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &me);
    fprintf(stderr, "mpi_words rank=%d bytes_sent=%lld bytes_recv=%lld msgs_sent=%lld msgs_recv=%lld\n", me, sent_,
            recv_, msent_, mrecv_);
    fflush(stderr);
    return PMPI_Finalize();
}

/* A call the shim declines (below CALA_SCALAPACK_THRESHOLD) costs nothing (issue 33, item 5):
 * on a 2 x 2 grid of 4 processes, linked with the shim before -lscalapack-mpich, each routine the
 * shim exports is called once through ScaLAPACK's own symbol and once through the shim, on the
 * same inputs, and
 *   - the MPI calls made during the two calls are the same, function by function: the shim adds
 *     none (this program defines every MPI function libcala and the shim import and counts its
 *     calls, whoever makes them; decline.py checks that the list covers `nm -D` of both);
 *   - the process starts no thread (its /proc/self/task entries; run with OMP_NUM_THREADS=2 and
 *     BLIS_NUM_THREADS=1, so that cala would start OpenMP threads if it computed, ScaLAPACK's
 *     BLIS never);
 *   - the outputs are bitwise the same (ScaLAPACK computed the shim's call).
 * Then one p?gemm above the threshold goes through cala, to show the counters see the shim: it
 * makes at least one MPI_Allreduce more than ScaLAPACK's (the agreement), and agrees with it to
 * rounding. Exit status 0 when all hold; "--list" prints the wrapped functions and exits.
 * (run as: mpiexec.mpich -n 4 decline, with the default threshold; decline.py does)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void Cblacs_get(int ictxt, int what, int* val);
void Cblacs_gridinit(int* ictxt, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int ictxt, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_exit(int not_done);

/* ---- every MPI function libcala and the shim call, counted ---- */
#define WRAPPED(X)                                                                                                   \
    X(MPI_Allgather, (const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, MPI_Comm c),       \
      (s, sn, st, r, rn, rt, c))                                                                                   \
    X(MPI_Allreduce, (const void* s, void* r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c), (s, r, n, t, o, c))     \
    X(MPI_Barrier, (MPI_Comm c), (c))                                                                                \
    X(MPI_Bcast, (void* b, int n, MPI_Datatype t, int root, MPI_Comm c), (b, n, t, root, c))                         \
    X(MPI_Comm_compare, (MPI_Comm a, MPI_Comm b, int* r), (a, b, r))                                                 \
    X(MPI_Comm_create, (MPI_Comm c, MPI_Group g, MPI_Comm* n), (c, g, n))                                            \
    X(MPI_Comm_create_keyval,                                                                                        \
      (MPI_Comm_copy_attr_function * cp, MPI_Comm_delete_attr_function * del, int* k, void* e), (cp, del, k, e))    \
    X(MPI_Comm_dup, (MPI_Comm c, MPI_Comm * n), (c, n))                                                              \
    X(MPI_Comm_free, (MPI_Comm * c), (c))                                                                            \
    X(MPI_Comm_get_attr, (MPI_Comm c, int k, void* v, int* f), (c, k, v, f))                                         \
    X(MPI_Comm_group, (MPI_Comm c, MPI_Group * g), (c, g))                                                           \
    X(MPI_Comm_rank, (MPI_Comm c, int* r), (c, r))                                                                   \
    X(MPI_Comm_set_attr, (MPI_Comm c, int k, void* v), (c, k, v))                                                    \
    X(MPI_Comm_size, (MPI_Comm c, int* s), (c, s))                                                                   \
    X(MPI_Comm_split, (MPI_Comm c, int color, int key, MPI_Comm* n), (c, color, key, n))                             \
    X(MPI_Comm_split_type, (MPI_Comm c, int t, int key, MPI_Info i, MPI_Comm* n), (c, t, key, i, n))                \
    X(MPI_Gather, (const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, int root, MPI_Comm c),  \
      (s, sn, st, r, rn, rt, root, c))                                                                               \
    X(MPI_Gatherv,                                                                                                   \
      (const void* s, int sn, MPI_Datatype st, void* r, const int rn[], const int d[], MPI_Datatype rt, int root,    \
       MPI_Comm c),                                                                                                  \
      (s, sn, st, r, rn, d, rt, root, c))                                                                            \
    X(MPI_Group_free, (MPI_Group * g), (g))                                                                          \
    X(MPI_Group_incl, (MPI_Group g, int n, const int r[], MPI_Group* ng), (g, n, r, ng))                             \
    X(MPI_Iallreduce_c, (const void* s, void* r, MPI_Count n, MPI_Datatype t, MPI_Op o, MPI_Comm c, MPI_Request* q), \
      (s, r, n, t, o, c, q))                                                                                         \
    X(MPI_Ibarrier, (MPI_Comm c, MPI_Request * q), (c, q))                                                           \
    X(MPI_Ibcast_c, (void* b, MPI_Count n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request* q),                    \
      (b, n, t, root, c, q))                                                                                         \
    X(MPI_Irecv_c, (void* b, MPI_Count n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Request* q),             \
      (b, n, t, src, tag, c, q))                                                                                     \
    X(MPI_Ireduce_c,                                                                                                 \
      (const void* s, void* r, MPI_Count n, MPI_Datatype t, MPI_Op o, int root, MPI_Comm c, MPI_Request* q),         \
      (s, r, n, t, o, root, c, q))                                                                                   \
    X(MPI_Isend_c, (const void* b, MPI_Count n, MPI_Datatype t, int dst, int tag, MPI_Comm c, MPI_Request* q),       \
      (b, n, t, dst, tag, c, q))                                                                                     \
    X(MPI_Test, (MPI_Request * q, int* f, MPI_Status* st), (q, f, st))                                               \
    X(MPI_Wait, (MPI_Request * q, MPI_Status * st), (q, st))                                                         \
    X(MPI_Initialized, (int* f), (f))                                                                                \
    X(MPI_Finalized, (int* f), (f))                                                                                  \
    X(MPI_Query_thread, (int* p), (p))                                                                               \
    X(MPI_Error_string, (int e, char* s, int* n), (e, s, n))

#define INDEX(name, params, args) I_##name,
enum { WRAPPED(INDEX) I_MPI_Wtime, NWRAPPED };
#define NAME(name, params, args) #name,
static const char* const wrapped_names[NWRAPPED] = {WRAPPED(NAME) "MPI_Wtime"};
static long counts[NWRAPPED];
#define DEFINE(name, params, args) \
    int name params {              \
        ++counts[I_##name];        \
        return P##name args;       \
    }
WRAPPED(DEFINE)
double MPI_Wtime(void) {
    ++counts[I_MPI_Wtime];
    return PMPI_Wtime();
}
/* Not counted (before the first and after the last measurement): MPI_Init_thread, MPI_Finalize. */

/* ---- the grid, the matrices ---- */
static int me = 0, failures = 0, ctxt = -1, myrow = 0, mycol = 0;
enum { P = 2, Q = 2, NB = 4 };

typedef struct {
    int n, lld, nloc;
    int desc[9];
    double* a;
} Mat;

static int numroc(int n, int nb, int iproc, int nprocs) {
    const int blocks = n / nb, extra = blocks % nprocs;
    int r = blocks / nprocs * nb;
    if (iproc < extra) r += nb;
    else if (iproc == extra) r += n % nb;
    return r;
}

/* An n x n matrix in NB blocks on the grid: entry (i, j) a fixed function of i and j, n + 2 on
 * the diagonal (symmetric, positive definite, well-conditioned triangles). */
static Mat mat(int n, int salt) {
    Mat m;
    m.n = n;
    const int mloc = numroc(n, NB, myrow, P);
    m.nloc = numroc(n, NB, mycol, Q);
    m.lld = mloc > 1 ? mloc : 1;
    const int d[9] = {1, ctxt, n, n, NB, NB, 0, 0, m.lld};
    memcpy(m.desc, d, sizeof d);
    m.a = malloc(sizeof(double) * (size_t)m.lld * (size_t)(m.nloc > 0 ? m.nloc : 1));
    for (int jl = 0; jl < m.nloc; ++jl)
        for (int il = 0; il < mloc; ++il) {
            const int i = (il / NB * P + myrow) * NB + il % NB, j = (jl / NB * Q + mycol) * NB + jl % NB;
            const int lo = i < j ? i : j, hi = i < j ? j : i;
            m.a[il + (size_t)jl * m.lld] = i == j ? n + 2.0 : ((lo * 7 + hi * 13 + salt) % 17) / 17.0 - 0.4;
        }
    return m;
}
static size_t bytes(const Mat* m) { return sizeof(double) * (size_t)m->lld * (size_t)(m->nloc > 0 ? m->nloc : 1); }

static int tasks(void) { /* the process's threads */
    DIR* d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent* e; d != NULL && (e = readdir(d)) != NULL;) n += e->d_name[0] != '.';
    if (d) closedir(d);
    return n;
}

/* ---- the routines, called through a symbol of either library ---- */
static void* scalapack_lib = NULL;
static void* real_fn(const char* name) { return dlsym(scalapack_lib, name); }
/* The program's own references (linked with the shim first: the shim's definitions); only their
 * addresses are taken, call() casts them to the routine's type. */
#define ROUTINES(X) X(pdgemm_) X(pdtrsm_) X(pdtrmm_) X(pdsymm_) X(pdsyrk_) X(pdsyr2k_) X(pdgeadd_) X(pdtran_) \
    X(pdpotrf_) X(pdpotrs_) X(pdposv_)
#define DECLARE(name) void name(void);
ROUTINES(DECLARE)
static void* shim_fn(const char* name) {
#define MATCH(r) if (!strcmp(name, #r)) return (void*)r;
    ROUTINES(MATCH)
    return NULL;
}

/* One call of routine `name` on fresh copies of the inputs (n x n, A B C), through `fn`. */
static void call(const char* name, void* fn, int n, Mat* a, Mat* b, Mat* c) {
    const int one = 1;
    const double alpha = 0.75, beta = 0.5;
    int info = 0;
    typedef void (*Gemm)(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                         const int*, const int*, const int*, const double*, const int*, const int*, const int*,
                         const double*, double*, const int*, const int*, const int*);
    typedef void (*Trxm)(const char*, const char*, const char*, const char*, const int*, const int*, const double*,
                         const double*, const int*, const int*, const int*, double*, const int*, const int*,
                         const int*);
    typedef void (*Symm)(const char*, const char*, const int*, const int*, const double*, const double*, const int*,
                         const int*, const int*, const double*, const int*, const int*, const int*, const double*,
                         double*, const int*, const int*, const int*);
    typedef void (*Syrk)(const char*, const char*, const int*, const int*, const double*, const double*, const int*,
                         const int*, const int*, const double*, double*, const int*, const int*, const int*);
    typedef void (*Geadd)(const char*, const int*, const int*, const double*, const double*, const int*, const int*,
                          const int*, const double*, double*, const int*, const int*, const int*);
    typedef void (*Tran)(const int*, const int*, const double*, const double*, const int*, const int*, const int*,
                         const double*, double*, const int*, const int*, const int*);
    typedef void (*Potrf)(const char*, const int*, double*, const int*, const int*, const int*, int*);
    typedef void (*Potrs)(const char*, const int*, const int*, const double*, const int*, const int*, const int*,
                          double*, const int*, const int*, const int*, int*);
    if (!strcmp(name, "pdgemm_"))
        ((Gemm)fn)("N", "T", &n, &n, &n, &alpha, a->a, &one, &one, a->desc, b->a, &one, &one, b->desc, &beta, c->a,
                   &one, &one, c->desc);
    else if (!strcmp(name, "pdtrsm_") || !strcmp(name, "pdtrmm_"))
        ((Trxm)fn)("L", "L", "N", "N", &n, &n, &alpha, a->a, &one, &one, a->desc, b->a, &one, &one, b->desc);
    else if (!strcmp(name, "pdsymm_"))
        ((Symm)fn)("L", "L", &n, &n, &alpha, a->a, &one, &one, a->desc, b->a, &one, &one, b->desc, &beta, c->a, &one,
                   &one, c->desc);
    else if (!strcmp(name, "pdsyrk_"))
        ((Syrk)fn)("L", "N", &n, &n, &alpha, a->a, &one, &one, a->desc, &beta, c->a, &one, &one, c->desc);
    else if (!strcmp(name, "pdsyr2k_"))  /* p?syr2k has p?symm's list: UPLO TRANS N K ... A ... B ... C */
        ((Symm)fn)("L", "N", &n, &n, &alpha, a->a, &one, &one, a->desc, b->a, &one, &one, b->desc, &beta, c->a, &one,
                   &one, c->desc);
    else if (!strcmp(name, "pdgeadd_"))
        ((Geadd)fn)("T", &n, &n, &alpha, a->a, &one, &one, a->desc, &beta, c->a, &one, &one, c->desc);
    else if (!strcmp(name, "pdtran_"))
        ((Tran)fn)(&n, &n, &alpha, a->a, &one, &one, a->desc, &beta, c->a, &one, &one, c->desc);
    else if (!strcmp(name, "pdpotrf_"))
        ((Potrf)fn)("L", &n, a->a, &one, &one, a->desc, &info);
    else if (!strcmp(name, "pdpotrs_") || !strcmp(name, "pdposv_"))
        ((Potrs)fn)("L", &n, &n, a->a, &one, &one, a->desc, b->a, &one, &one, b->desc, &info);
    if (info != 0) {
        printf("process %d: %s returned INFO = %d\n", me, name, info);
        ++failures;
    }
}

/* `name` on n x n inputs through ScaLAPACK (twice: the first warms ScaLAPACK up) and through the
 * shim; the MPI calls of the last two, the threads, the outputs. `declined`: the shim must add
 * nothing; else cala computes: one MPI_Allreduce more at least, outputs equal to rounding. */
static void compare(const char* name, int n, int declined) {
    void *real = real_fn(name), *shim = shim_fn(name);
    Dl_info where;
    if (real == NULL || shim == NULL || real == shim || !dladdr(shim, &where) ||
        strstr(where.dli_fname, "cala_scalapack") == NULL) {
        printf("process %d: %s: no ScaLAPACK symbol, or the program's symbol is not the shim's\n", me, name);
        ++failures;
        return;
    }
    Mat in[3] = {mat(n, 1), mat(n, 5), mat(n, 11)}, out[2][3];
    long before[NWRAPPED], runs[2][NWRAPPED];
    for (int pass = 0; pass < 3; ++pass) {
        const int k = pass == 2 ? 1 : 0; /* passes 0, 1: ScaLAPACK; 2: the shim */
        for (int s = 0; s < 3; ++s) {
            if (pass != 1) out[k][s] = mat(n, 0);
            memcpy(out[k][s].a, in[s].a, bytes(&in[s]));
        }
        memcpy(before, counts, sizeof counts);
        const int threads = tasks();
        call(name, pass == 2 ? shim : real, n, &out[k][0], &out[k][1], &out[k][2]);
        for (int i = 0; i < NWRAPPED; ++i) runs[k][i] = counts[i] - before[i];
        if (pass == 2 && declined && tasks() != threads) {
            printf("process %d: %s n=%d: %d threads before the shim's call, %d after\n", me, name, n, threads, tasks());
            ++failures;
        }
    }
    for (int i = 0; i < NWRAPPED; ++i) {
        const int extra = declined ? runs[1][i] != runs[0][i] : i == I_MPI_Allreduce && runs[1][i] < runs[0][i] + 1;
        if (extra) {
            printf("process %d: %s n=%d: %s called %ld times by the shim's call, %ld by ScaLAPACK's\n", me, name, n,
                   wrapped_names[i], runs[1][i], runs[0][i]);
            ++failures;
        }
    }
    double diff = 0, scale = 0;
    for (int s = 0; s < 3; ++s)
        for (size_t e = 0; e < bytes(&in[s]) / sizeof(double); ++e) {
            diff = fmax(diff, fabs(out[0][s].a[e] - out[1][s].a[e]));
            scale = fmax(scale, fabs(out[0][s].a[e]));
        }
    if (declined ? diff != 0 : diff > 64 * n * 2.2e-16 * scale) {
        printf("process %d: %s n=%d: outputs differ by %g (scale %g)\n", me, name, n, diff, scale);
        ++failures;
    }
    if (me == 0) {
        long total[2] = {0, 0};
        for (int i = 0; i < NWRAPPED; ++i) total[0] += runs[0][i], total[1] += runs[1][i];
        printf("%s n=%d %s: process 0 made %ld MPI calls in the shim's call, %ld in ScaLAPACK's (MPI_Allreduce %ld, "
               "%ld)\n",
               name, n, declined ? "declined" : "through cala", total[1], total[0], runs[1][I_MPI_Allreduce],
               runs[0][I_MPI_Allreduce]);
        fflush(stdout);
    }
    for (int s = 0; s < 3; ++s) free(in[s].a), free(out[0][s].a), free(out[1][s].a);
}

int main(int argc, char** argv) {
    if (argc > 1 && !strcmp(argv[1], "--list")) {
        for (int i = 0; i < NWRAPPED; ++i) printf("%s\n", wrapped_names[i]);
        return 0;
    }
    MPI_Init(&argc, &argv);
    int np = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np != P * Q) {
        if (me == 0) printf("decline: run on %d processes, not %d\n", P * Q, np);
        MPI_Finalize();
        return 1;
    }
    scalapack_lib = dlopen("libscalapack-mpich.so.2.2", RTLD_LAZY | RTLD_NOLOAD);
    if (scalapack_lib == NULL) scalapack_lib = dlopen("libscalapack-mpich.so", RTLD_LAZY | RTLD_NOLOAD);
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, "Row", P, Q);
    int p, q;
    Cblacs_gridinfo(ctxt, &p, &q, &myrow, &mycol);
    const char* routines[] = {"pdgemm_", "pdtrsm_", "pdtrmm_", "pdsymm_", "pdsyrk_", "pdsyr2k_", "pdgeadd_", "pdtran_",
#ifdef CALA_SHIM_CHOLESKY
                              "pdpotrf_", "pdpotrs_", "pdposv_",
#endif
    };
    const int threads = tasks();
    for (size_t r = 0; r < sizeof routines / sizeof routines[0]; ++r) compare(routines[r], 24, 1);
    if (tasks() != threads) {
        printf("process %d: %d threads before the declined calls, %d after\n", me, threads, tasks());
        ++failures;
    }
    compare("pdgemm_", 136, 0); /* 136^3 >= 128^3: cala computes */
    if (me == 0) printf("threads: %d before the declined calls, %d after them and one call cala computed\n", threads,
                        tasks());
    int all = failures;
    MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) printf("decline: %s (%d failures)\n", all == 0 ? "all checks passed" : "FAILED", all);
    Cblacs_exit(1);
    MPI_Finalize();
    return all == 0 ? 0 : 1;
}

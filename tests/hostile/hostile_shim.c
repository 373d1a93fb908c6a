/* Hostile inputs to the ScaLAPACK shim (issue 16, item 4): a table of bad calls of p?gemm_,
 * p?potrf_ and p?potrs_ in s, d, c, z (Fortran ABI), each checked on every process for
 *   - the code ScaLAPACK gives: INFO for p?potrf/p?potrs, PXERBLA's parameter number for
 *     p?gemm (this program defines pxerbla_ and PB_Cabort, so the report reaches it instead of
 *     printing or aborting);
 *   - the same code on every process of the grid (ranks that disagree included);
 *   - the caller's arrays, padding included, bitwise unchanged;
 *   - no hang: each row runs under alarm(); a row still running after CALA_HOSTILE_TIMEOUT_S
 *     seconds prints its name and ends the process.
 * Built twice: linked with the shim before -lscalapack-mpich (the test), and with ScaLAPACK
 * alone (the reference: the table's codes are ScaLAPACK's own). Exit status 0 when all hold.
 * (run as: mpiexec.mpich -n N hostile_shim, N in {2, 3, 4}, CALA_SCALAPACK_THRESHOLD=0: cala computes
 * the legal calls; unset: the shim hands every call with sizes >= 0 to ScaLAPACK before any check
 * of its own (issue 33), so only the rows ScaLAPACK survives run, as with --reference)
 */
#include <complex.h>
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void Cblacs_pinfo(int* mypnum, int* nprocs);
void Cblacs_get(int ictxt, int what, int* val);
void Cblacs_gridinit(int* ictxt, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int ictxt, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_exit(int not_done);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrc, const int* nprocs);

/* Every routine through one signature per kind; the array pointers are void*. */
typedef void (*GemmFn)(const char*, const char*, const int*, const int*, const int*, const void*, const void*,
                       const int*, const int*, const int*, const void*, const int*, const int*, const int*,
                       const void*, void*, const int*, const int*, const int*);
typedef void (*PotrfFn)(const char*, const int*, void*, const int*, const int*, const int*, int*);
typedef void (*PotrsFn)(const char*, const int*, const int*, const void*, const int*, const int*, const int*, void*,
                        const int*, const int*, const int*, int*);
#define DECLARE(t)                                                                                         \
    void p##t##gemm_(const char*, const char*, const int*, const int*, const int*, const void*, const void*, \
                     const int*, const int*, const int*, const void*, const int*, const int*, const int*,  \
                     const void*, void*, const int*, const int*, const int*);                               \
    void p##t##potrf_(const char*, const int*, void*, const int*, const int*, const int*, int*);            \
    void p##t##potrs_(const char*, const int*, const int*, const void*, const int*, const int*, const int*, \
                      void*, const int*, const int*, const int*, int*);
DECLARE(s)
DECLARE(d)
DECLARE(c)
DECLARE(z)

static const struct {
    char t;
    size_t size;
    GemmFn gemm;
    PotrfFn potrf;
    PotrsFn potrs;
} types[] = {{'s', sizeof(float), (GemmFn)psgemm_, (PotrfFn)pspotrf_, (PotrsFn)pspotrs_},
             {'d', sizeof(double), (GemmFn)pdgemm_, (PotrfFn)pdpotrf_, (PotrsFn)pdpotrs_},
             {'c', sizeof(float complex), (GemmFn)pcgemm_, (PotrfFn)pcpotrf_, (PotrsFn)pcpotrs_},
             {'z', sizeof(double complex), (GemmFn)pzgemm_, (PotrfFn)pzpotrf_, (PotrsFn)pzpotrs_}};

/* PXERBLA's reports reach this program (the shim and ScaLAPACK look pxerbla_ up dynamically). */
static int reported = 0, reports = 0;
void pxerbla_(const int* ictxt, const char* srname, const int* info, size_t len) {
    (void)ictxt, (void)srname, (void)len;
    if (reports++ == 0) reported = *info;
}

/* PBLAS's error handler (libscalapack's aborts the program; a PBLAS tester's records INFO): the
 * shim calls it after PXERBLA, ScaLAPACK alone calls it instead. */
void PB_Cabort(int ictxt, const char* routine, int info) {
    (void)ictxt, (void)routine;
    if (reports++ == 0) reported = -info;
}

/* The watchdog. */
static char row_name[160];
static void on_alarm(int sig) {
    (void)sig;
    static const char head[] = "hostile_shim watchdog: still running, a hang: ";
    write(2, head, sizeof head - 1);
    write(2, row_name, strlen(row_name));
    write(2, "\n", 1);
    _exit(124);
}

/* The arguments of one call, as integers: characters as their codes, descriptors of 9 entries. */
enum {
    UPLO, TRA, TRB, M, N, K, NRHS, IA, JA, IB, JB, IC, JC, DA, DB = DA + 9, DC = DB + 9, NULLA = DC + 9, NULLB, NULLC,
    ALPHA, NFIELDS
};
enum { ALL, LAST }; /* which processes a row's change applies to */
#define CTXT2 (-1000) /* stands for the second grid's context */

typedef struct {
    const char* name;
    char routine; /* 'g' p?gemm, 'f' p?potrf, 's' p?potrs */
    int field, value, who;
    int expect; /* p?potrf/p?potrs: INFO; p?gemm: PXERBLA's parameter number (0: none) */
    int shim_only; /* 1: ScaLAPACK itself crashes, hangs or says nothing here (skipped by --reference
                      and below the threshold, where ScaLAPACK takes every call) */
} Row;

static const int n0 = 8, nb0 = 2;

/* Rows for a p x q grid. Codes: ScaLAPACK's (DESC entries 1..9 as in the 9-entry descriptor,
 * position·100 + entry) and PBLAS's (its 11-entry descriptor: IMB 5, MB 7, RSRC 9, LLD 11). */
static const Row rows[] = {
    {"p?potrf UPLO = 'X'", 'f', UPLO, 'X', ALL, -1, 0},
    {"p?potrf N < 0", 'f', N, -1, ALL, -2, 0},
    {"p?potrf IA = 0", 'f', IA, 0, ALL, -4, 0},
    {"p?potrf JA = 0", 'f', JA, 0, ALL, -5, 0},
    {"p?potrf IA = 2: sub(A) past the rows", 'f', IA, 2, ALL, -2, 0},
    {"p?potrf DTYPE = 7", 'f', DA + 0, 7, ALL, -601, 0},
    {"p?potrf CTXT not a grid", 'f', DA + 1, -1, ALL, -602, 0},
    {"p?potrf M < 0", 'f', DA + 2, -1, ALL, -603, 0},
    {"p?potrf M < N (sub(A) past the rows)", 'f', DA + 2, 4, ALL, -2, 0},
    {"p?potrf MB = 0", 'f', DA + 4, 0, ALL, -605, 0},
    {"p?potrf NB < 0", 'f', DA + 5, -2, ALL, -606, 0},
    {"p?potrf RSRC past the grid", 'f', DA + 6, 99, ALL, -607, 0},
    {"p?potrf CSRC < 0", 'f', DA + 7, -1, ALL, -608, 0},
    {"p?potrf LLD = 0", 'f', DA + 8, 0, ALL, -609, 0},
    {"p?potrf LLD negative", 'f', DA + 8, -8, ALL, -609, 0},
    {"p?potrf LLD < local rows on one process", 'f', DA + 8, 1, LAST, -609, 0},
    {"p?potrf MB != NB", 'f', DA + 4, 4, ALL, -606, 0},
    {"p?potrf N differs on one process", 'f', N, 6, LAST, -2, 0},
    {"p?potrf UPLO differs on one process", 'f', UPLO, 'U', LAST, -1, 0},
    {"p?potrf NB differs on one process", 'f', DA + 5, 4, LAST, -606, 0},
    {"p?potrf A is NULL", 'f', NULLA, 1, ALL, -3, 1},
    {"p?potrf not positive definite at 6", 'f', -1, 6, ALL, 6, 0},
    {"p?potrf NaN on the diagonal at 3 (ScaLAPACK: INFO = 0, NaN spreads)", 'f', -2, 3, ALL, 3, 1},
    {"p?potrs UPLO = 'Q'", 's', UPLO, 'Q', ALL, -1, 0},
    {"p?potrs N < 0", 's', N, -3, ALL, -2, 0},
    {"p?potrs NRHS < 0", 's', NRHS, -1, ALL, -3, 0},
    {"p?potrs DESCA DTYPE = 3", 's', DA + 0, 3, ALL, -701, 0},
    {"p?potrs DESCB of another grid (ScaLAPACK: PSTRSM aborts)", 's', DB + 1, CTXT2, ALL, -1102, 1},
    {"p?potrs DESCB LLD = 0", 's', DB + 8, 0, ALL, -1109, 0},
    {"p?potrs IB = 0", 's', IB, 0, ALL, -9, 0},
    {"p?potrs DESCB MB != DESCA NB", 's', DB + 4, 4, ALL, -1106, 0},
    {"p?potrs NRHS differs on one process", 's', NRHS, 1, LAST, -3, 0},
    {"p?potrs B is NULL", 's', NULLB, 1, ALL, -8, 1},
    {"p?gemm TRANSA = 'X'", 'g', TRA, 'X', ALL, 1, 0},
    {"p?gemm TRANSB = 'Y'", 'g', TRB, 'Y', ALL, 2, 0},
    {"p?gemm M < 0", 'g', M, -1, ALL, 3, 0},
    {"p?gemm N < 0", 'g', N, -1, ALL, 4, 0},
    {"p?gemm K < 0", 'g', K, -2, ALL, 5, 0},
    {"p?gemm IA = 0", 'g', IA, 0, ALL, 8, 0},
    {"p?gemm DESCA DTYPE = 9", 'g', DA + 0, 9, ALL, 1001, 0},
    {"p?gemm DESCA MB = 0", 'g', DA + 4, 0, ALL, 1005, 0},
    {"p?gemm DESCA RSRC past the grid", 'g', DA + 6, 99, ALL, 1009, 0},
    {"p?gemm DESCB of another grid", 'g', DB + 1, CTXT2, ALL, 1402, 0},
    {"p?gemm DESCC LLD = 0", 'g', DC + 8, 0, ALL, 1911, 0},
    {"p?gemm DESCC LLD < local rows on one process", 'g', DC + 8, 1, LAST, 1911, 1},
    {"p?gemm M differs on one process", 'g', M, 6, LAST, 3, 1},
    {"p?gemm TRANSA differs on one process", 'g', TRA, 'T', LAST, 1, 1},
    {"p?gemm C is NULL", 'g', NULLC, 1, ALL, 16, 1},
    {"p?gemm ALPHA differs on one process (PBLAS does not check; the shim does)", 'g', ALPHA, 2, LAST, 6, 1},
    {"p?gemm ALPHA = 0 on one process (another route there)", 'g', ALPHA, 3, LAST, 6, 1},
    {"p?gemm a legal call: no report", 'g', IC, 1, ALL, 0, 0},
};

static int me = 0, np = 1, failures = 0;

static int all_equal(int v) { /* v is the same on every process */
    int mx = v, mn = v;
    MPI_Allreduce(MPI_IN_PLACE, &mx, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &mn, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return mx == mn;
}
static int everywhere(int ok) {
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return ok;
}

/* Local storage of an n0 x cols matrix in nb0 blocks with 2 rows of padding and 4 elements of
 * guard on each side, filled with a byte pattern; `mat` points past the front guard. */
typedef struct {
    unsigned char *store, *copy, *mat;
    size_t bytes;
    int lld, mloc, nloc;
} Local;

static Local local(int ctxt, int rows, int cols, size_t size) {
    int p, q, r, c, zero = 0;
    Cblacs_gridinfo(ctxt, &p, &q, &r, &c);
    Local l;
    l.mloc = numroc_(&rows, &nb0, &r, &zero, &p);
    l.nloc = numroc_(&cols, &nb0, &c, &zero, &q);
    l.lld = (l.mloc > 1 ? l.mloc : 1) + 2;
    l.bytes = ((size_t)l.lld * (size_t)(l.nloc > 0 ? l.nloc : 1) + 8) * size;
    l.store = malloc(l.bytes), l.copy = malloc(l.bytes);
    for (size_t i = 0; i < l.bytes; ++i) l.store[i] = (unsigned char)(i * 37 + 11);
    l.mat = l.store + 4 * size;
    return l;
}

/* Writes a Hermitian positive definite matrix (diagonal n0 + 1, off-diagonal 1/(i+j+2)) into a's
 * local array; diagonal entry kbad (0-based, global) := bad when kbad >= 0. */
static void spd(Local* a, char t, size_t size, int ctxt, int kbad, double bad) {
    int p, q, r, c;
    Cblacs_gridinfo(ctxt, &p, &q, &r, &c);
    for (int j = 0; j < n0; ++j)
        for (int i = 0; i < n0; ++i) {
            if ((i / nb0) % p != r || (j / nb0) % q != c) continue;
            const int li = (i / nb0 / p) * nb0 + i % nb0, lj = (j / nb0 / q) * nb0 + j % nb0;
            const double v = i == j ? (i == kbad ? bad : n0 + 1.0) : 1.0 / (i + j + 2);
            unsigned char* e = a->mat + ((size_t)li + (size_t)lj * a->lld) * size;
            if (t == 's') *(float*)e = (float)v;
            else if (t == 'd') *(double*)e = v;
            else if (t == 'c') *(float complex*)e = (float complex)v;
            else *(double complex*)e = v;
        }
}

static void run_row(const Row* w, int ti, int ctxt, int ctxt2, int p) {
    const size_t size = types[ti].size;
    int v[NFIELDS] = {0};
    Local x[3] = {local(ctxt, n0, n0, size), local(ctxt, n0, n0, size), local(ctxt, n0, n0, size)};
    v[UPLO] = 'L', v[TRA] = 'N', v[TRB] = 'N', v[M] = v[N] = v[K] = n0, v[NRHS] = 3;
    v[IA] = v[JA] = v[IB] = v[JB] = v[IC] = v[JC] = 1;
    for (int s = 0; s < 3; ++s) {
        const int d[9] = {1, ctxt, n0, n0, nb0, nb0, 0, 0, x[s].lld};
        memcpy(v + DA + 9 * s, d, sizeof d);
    }
    if (w->routine != 'g') spd(&x[0], types[ti].t, size, ctxt, w->field == -1 || w->field == -2 ? w->value - 1 : -1,
                               w->field == -1 ? -1.0 : NAN);
    if (w->field >= 0 && (w->who == ALL || me == np - 1)) v[w->field] = w->value == CTXT2 ? ctxt2 : w->value;
    if (w->field == DA + 6 && w->value == 99) v[DA + 6] = p; /* RSRC = p: one past the last row */
    for (int s = 0; s < 3; ++s) memcpy(x[s].copy, x[s].store, x[s].bytes);
    const double complex one = 1, alpha = v[ALPHA] == 3 ? 0.0 : v[ALPHA] ? 2.0 : 1.0;
    const float complex onef = 1, alphaf = (float complex)alpha;
    const void* pone = size == sizeof(float) || size == sizeof(float complex) ? (const void*)&onef : (const void*)&one;
    const void* palpha = pone == (const void*)&onef ? (const void*)&alphaf : (const void*)&alpha;
    void* pa = v[NULLA] ? NULL : x[0].mat;
    void* pb = v[NULLB] ? NULL : x[1].mat;
    void* pc = v[NULLC] ? NULL : x[2].mat;
    const char uplo = (char)v[UPLO], ta = (char)v[TRA], tb = (char)v[TRB];
    snprintf(row_name, sizeof row_name, "%s (type %c)", w->name, types[ti].t);
    reported = 0, reports = 0;
    int info = 0;
    alarm(60);
    if (w->routine == 'f') types[ti].potrf(&uplo, &v[N], pa, &v[IA], &v[JA], v + DA, &info);
    else if (w->routine == 's')
        types[ti].potrs(&uplo, &v[N], &v[NRHS], pa, &v[IA], &v[JA], v + DA, pb, &v[IB], &v[JB], v + DB, &info);
    else
        types[ti].gemm(&ta, &tb, &v[M], &v[N], &v[K], palpha, pa, &v[IA], &v[JA], v + DA, pb, &v[IB], &v[JB], v + DB,
                       pone, pc, &v[IC], &v[JC], v + DC);
    alarm(0);
    const int got = w->routine == 'g' ? reported : info;
    int untouched = 1;
    if (w->expect < 0 || (w->routine == 'g' && w->expect > 0))
        for (int s = 0; s < 3; ++s) untouched = untouched && memcmp(x[s].store, x[s].copy, x[s].bytes) == 0;
    const int ok = everywhere(got == w->expect) && all_equal(got) && everywhere(untouched);
    if (me == 0) printf("%-4s %s (type %c): expected %d\n", ok ? "ok" : "FAIL", w->name, types[ti].t, w->expect);
    if (!ok) {
        printf("  process %d: got %d (%d reports), arrays %s\n", me, got, reports, untouched ? "untouched" : "WRITTEN");
        ++failures;
    }
    fflush(stdout);
    for (int s = 0; s < 3; ++s) free(x[s].store), free(x[s].copy);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    signal(SIGALRM, on_alarm);
    int p = 1, ctxt, ctxt2;
    while ((p + 1) * (p + 1) <= np && np % (p + 1) == 0) ++p;
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, "Row", p, np / p);
    Cblacs_get(-1, 0, &ctxt2);
    Cblacs_gridinit(&ctxt2, "Col", np / p, p);
    /* --reference: ScaLAPACK alone (skip the shim-only rows); a routine letter: only its rows */
    const int reference = argc > 1 && strcmp(argv[1], "--reference") == 0;
    const char* only = argc > 1 + reference ? argv[1 + reference] : NULL;
    /* Below CALA_SCALAPACK_THRESHOLD the shim hands the calls to ScaLAPACK unchecked (no
     * collective before ScaLAPACK): the rows only the shim survives need the threshold at 0. */
    const char* th = getenv("CALA_SCALAPACK_THRESHOLD");
    const int small = reference || th == NULL || strcmp(th, "0") != 0;
    int count = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i)
        for (int ti = 0; ti < 4; ++ti)
            if ((only == NULL || strchr(only, rows[i].routine)) && !(small && rows[i].shim_only))
                run_row(&rows[i], ti, ctxt, ctxt2, p), ++count;
    if (me == 0) printf("hostile_shim: %d rows x 4 types = %d calls on a %dx%d grid (%s), %d failed\n", count / 4, count,
                        p, np / p, reference ? "ScaLAPACK alone" : small ? "ScaLAPACK below the threshold" : "cala", failures);
    const int all_ok = everywhere(failures == 0);
    Cblacs_exit(1);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}

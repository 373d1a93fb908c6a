/* A plain ScaLAPACK program: C := A·B with PDGEMM on a p x q BLACS grid. It knows nothing of cala.
 *
 * Built once against ScaLAPACK only, it runs with ScaLAPACK's PDGEMM or, with cala's shim
 * preloaded, with cala's, and prints the same checksum either way:
 *
 *   mpicc.mpich scalapack_dropin.c -o scalapack_dropin -lscalapack-mpich
 *   mpiexec.mpich -n 2 ./scalapack_dropin 4096 256 1 2
 *   mpiexec.mpich -n 2 -genv LD_PRELOAD libcala_scalapack.so ./scalapack_dropin 4096 256 1 2
 *
 * usage: scalapack_dropin [n|MxNxK [nb [p [q [order [runs]]]]]]
 *   C (m x n) := A (m x k)·B (k x n), m = n = k unless given as MxNxK (e.g. 6512x6512x512), in
 *   nb x nb blocks on a p x q grid (p·q <= processes; the others wait),
 *   order R (row-major grid, the default) or C (column-major), runs timed calls (default 3).
 * Prints, from process (0, 0): the best time over the runs (the slowest process's), GFLOP/s, and
 * a checksum of C (a weighted sum and a sum of squares, reduced over the grid).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* BLACS and ScaLAPACK have no C headers: declare what is used. */
void Cblacs_pinfo(int* mypnum, int* nprocs);
void Cblacs_get(int ictxt, int what, int* val);
void Cblacs_gridinit(int* ictxt, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int ictxt, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_barrier(int ictxt, const char* scope);
void Cblacs_gridexit(int ictxt);
void Cblacs_exit(int not_done);
void Cdgsum2d(int ictxt, const char* scope, const char* top, int m, int n, double* a, int lda, int rdest, int cdest);
void Cdgamx2d(int ictxt, const char* scope, const char* top, int m, int n, double* a, int lda, int* ra, int* ca,
              int ldia, int rdest, int cdest);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
int indxl2g_(const int* indxloc, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* irsrc,
               const int* icsrc, const int* ictxt, const int* lld, int* info);
void pdgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
             const double* a, const int* ia, const int* ja, const int* desca, const double* b, const int* ib,
             const int* jb, const int* descb, const double* beta, double* c, const int* ic, const int* jc,
             const int* descc);

/* Entry (i, j) (0-based, global) of a test matrix: a hash mapped to [-0.5, 0.5). */
static double entry(unsigned seed, long i, long j) {
    unsigned long h = (unsigned long)seed * 0x9E3779B97F4A7C15ul ^ (unsigned long)i * 0xBF58476D1CE4E5B9ul ^
                      (unsigned long)j * 0x94D049BB133111EBul;
    h ^= h >> 31;
    h *= 0xD6E8FEB86659FD93ul;
    h ^= h >> 32;
    return (double)(h >> 11) / 9007199254740992.0 - 0.5;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The local part of a rows x cols matrix in nb x nb blocks, entries entry(seed, i, j) (NaN for seed 0),
 * and its descriptor. */
static double* local_matrix(unsigned seed, int rows, int cols, int nb, int myrow, int mycol, int nprow, int npcol,
                            int ctxt, int* desc) {
    const int zero = 0;
    const int mloc = numroc_(&rows, &nb, &myrow, &zero, &nprow), nloc = numroc_(&cols, &nb, &mycol, &zero, &npcol);
    const int lld = mloc > 1 ? mloc : 1;
    int info;
    descinit_(desc, &rows, &cols, &nb, &nb, &zero, &zero, &ctxt, &lld, &info);
    double* x = malloc(sizeof(double) * (size_t)lld * (size_t)(nloc > 0 ? nloc : 1));
    for (int jl = 0; jl < nloc; ++jl) {
        const int jf = jl + 1, j = indxl2g_(&jf, &nb, &mycol, &zero, &npcol) - 1;
        for (int il = 0; il < mloc; ++il) {
            const int i_f = il + 1, i = indxl2g_(&i_f, &nb, &myrow, &zero, &nprow) - 1;
            x[il + (size_t)jl * lld] = seed == 0 ? NAN : entry(seed, i, j);
        }
    }
    return x;
}

int main(int argc, char** argv) {
    int m = 1024, n = 1024, k = 1024;
    if (argc > 1 && sscanf(argv[1], "%dx%dx%d", &m, &n, &k) != 3) m = n = k = atoi(argv[1]);
    const int nb = argc > 2 ? atoi(argv[2]) : 128;
    const int p = argc > 3 ? atoi(argv[3]) : 1, q = argc > 4 ? atoi(argv[4]) : 2;
    const char* order = argc > 5 && (argv[5][0] == 'C' || argv[5][0] == 'c') ? "Col" : "Row";
    const int runs = argc > 6 ? atoi(argv[6]) : 3;
    int me, nprocs, ctxt, nprow, npcol, myrow, mycol;

    Cblacs_pinfo(&me, &nprocs);
    if (m < 1 || n < 1 || k < 1 || nb < 1 || p < 1 || q < 1 || runs < 1 || p * q > nprocs) {
        if (me == 0) fprintf(stderr, "usage: %s [n|MxNxK [nb [p [q [R|C [runs]]]]]] with p*q <= %d\n", argv[0], nprocs);
        Cblacs_exit(0);
        return 1;
    }
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, order, p, q);
    Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
    if (myrow < 0 || mycol < 0) { /* not in the grid */
        Cblacs_exit(0);
        return 0;
    }

    const int zero = 0, one = 1;
    int desc_a[9], desc_b[9], desc_c[9];
    double* a = local_matrix(1, m, k, nb, myrow, mycol, nprow, npcol, ctxt, desc_a);
    double* b = local_matrix(2, k, n, nb, myrow, mycol, nprow, npcol, ctxt, desc_b);
    double* c = local_matrix(0, m, n, nb, myrow, mycol, nprow, npcol, ctxt, desc_c); /* NaN: beta = 0 never reads C */

    const double alpha = 1.0, beta = 0.0;
    double best = 1e300;
    for (int r = 0; r < runs; ++r) {
        Cblacs_barrier(ctxt, "All");
        const double t0 = now();
        pdgemm_("N", "N", &m, &n, &k, &alpha, a, &one, &one, desc_a, b, &one, &one, desc_b, &beta, c, &one, &one, desc_c);
        Cblacs_barrier(ctxt, "All");
        double t = now() - t0;
        Cdgamx2d(ctxt, "All", " ", 1, 1, &t, 1, NULL, NULL, -1, -1, -1);
        if (t < best) best = t;
    }

    double sums[2] = {0.0, 0.0}; /* sum of w(i,j)·c(i,j), sum of c(i,j)² */
    const int mloc = numroc_(&m, &nb, &myrow, &zero, &nprow), nloc = numroc_(&n, &nb, &mycol, &zero, &npcol);
    const int lld = desc_c[8];
    for (int jl = 0; jl < nloc; ++jl) {
        const int jf = jl + 1, j = indxl2g_(&jf, &nb, &mycol, &zero, &npcol) - 1;
        for (int il = 0; il < mloc; ++il) {
            const int i_f = il + 1, i = indxl2g_(&i_f, &nb, &myrow, &zero, &nprow) - 1;
            const double v = c[il + (size_t)jl * lld];
            sums[0] += entry(3, i, j) * v;
            sums[1] += v * v;
        }
    }
    Cdgsum2d(ctxt, "All", " ", 2, 1, sums, 2, 0, 0);
    if (myrow == 0 && mycol == 0)
        printf("pdgemm m=%d n=%d k=%d nb=%d grid=%dx%d order=%s runs=%d best_s=%.6f gflops=%.2f checksum=%.15e "
               "norm2=%.15e\n",
               m, n, k, nb, nprow, npcol, order, runs, best, 2.0 * m * (double)n * k / best * 1e-9, sums[0], sums[1]);

    free(a);
    free(b);
    free(c);
    Cblacs_gridexit(ctxt);
    Cblacs_exit(0);
    return 0;
}

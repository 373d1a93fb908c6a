/* pdtrsm_, pdposv_, pdsyrk_, pdsymm_, pdgetrf_, pdpotrf_, pdgeqrf_ or pdgels_ through the ScaLAPACK ABI, timed: a plain ScaLAPACK
 * program (it knows nothing of cala) for compare.py, which runs it with the shim preloaded and
 * CALA_SHIM=off (ScaLAPACK's own routine, same process setup) and on (cala's).
 *
 * usage: abi_solve trsm|posv|syrk|symm|getrf|potrf|geqrf|gels n nrhs nb p q runs
 *   trsm: B := inv(L)·B, L n x n lower triangular (non-unit), B n x nrhs;
 *   posv: A·X = B, A n x n Hermitian positive definite (lower), B n x nrhs;
 *   syrk: C := X·Xᵀ + C on C's lower triangle, X n x nrhs, C n x n (its upper triangle must stay);
 *   symm: B := S·X + B, S n x n symmetric with its lower triangle stored (NaN above: never read),
 *         X and B n x nrhs;
 *   getrf: A = P·L·U, A n x n general (ScaLAPACK's pdgetrf_, which calls pdtrsm_ and pdgemm_:
 *         with the shim preloaded, those go through cala; nrhs is not used);
 *   potrf: A = L·Lᵀ, A n x n symmetric positive definite, its lower triangle stored (NaN above:
 *         never read; nrhs is not used);
 *   geqrf: A = Q·R, A n x n general (WORK sized by pdgeqrf_'s own query, untimed; nrhs is not used);
 *   gels: min ‖A·X − B‖ (TRANS = N), A n x n general, B n x nrhs: ScaLAPACK's own pdgels_ (the shim
 *         does not serve it), whose pdgeqrf_, pdormqr_ and pdtrsm_ calls go through cala with the
 *         shim preloaded (WORK sized by pdgels_'s own query, untimed).
 * Operands are restored (untimed) before every run. Prints, from process (0, 0), the best time
 * over the runs (the slowest process's), GFLOP/s and a checksum of the result (B, or all of C).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
void pdtrsm_(const char*, const char*, const char*, const char*, const int*, const int*, const double*,
             const double*, const int*, const int*, const int*, double*, const int*, const int*, const int*);
void pdposv_(const char*, const int*, const int*, double*, const int*, const int*, const int*, double*, const int*,
             const int*, const int*, int*);
void pdsyrk_(const char*, const char*, const int*, const int*, const double*, const double*, const int*, const int*,
             const int*, const double*, double*, const int*, const int*, const int*);
void pdsymm_(const char*, const char*, const int*, const int*, const double*, const double*, const int*, const int*,
             const int*, const double*, const int*, const int*, const int*, const double*, double*, const int*,
             const int*, const int*);

void pdgetrf_(const int*, const int*, double*, const int*, const int*, const int*, int*, int*);
void pdpotrf_(const char*, const int*, double*, const int*, const int*, const int*, int*);
void pdgeqrf_(const int*, const int*, double*, const int*, const int*, const int*, double*, double*, const int*, int*);
void pdgels_(const char*, const int*, const int*, const int*, double*, const int*, const int*, const int*, double*,
             const int*, const int*, const int*, double*, const int*, int*);

enum Routine { TRSM, POSV, SYRK, SYMM, GETRF, POTRF, GEQRF, GELS };

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

int main(int argc, char** argv) {
    int me, nprocs, ctxt, nprow, npcol, myrow, mycol;
    Cblacs_pinfo(&me, &nprocs);
    const char* names[] = {"trsm", "posv", "syrk", "symm", "getrf", "potrf", "geqrf", "gels"};
    int routine = -1;
    for (int r = 0; r < 8 && argc > 1; ++r)
        if (strcmp(argv[1], names[r]) == 0) routine = r;
    const int posv = routine == POSV;
    const int n = argc > 2 ? atoi(argv[2]) : 1024, nrhs = argc > 3 ? atoi(argv[3]) : 1024;
    const int nb = argc > 4 ? atoi(argv[4]) : 256, p = argc > 5 ? atoi(argv[5]) : 1, q = argc > 6 ? atoi(argv[6]) : 2;
    const int runs = argc > 7 ? atoi(argv[7]) : 3;
    if (routine < 0 || n < 1 || nrhs < 1 || nb < 1 || p * q > nprocs || runs < 1) {
        if (me == 0) fprintf(stderr, "usage: %s trsm|posv|syrk|symm|getrf|potrf|geqrf|gels n nrhs nb p q runs (p*q <= %d)\n", argv[0], nprocs);
        Cblacs_exit(0);
        return 1;
    }
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, "Row", p, q);
    Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
    if (myrow < 0 || mycol < 0) {
        Cblacs_exit(0);
        return 0;
    }
    const int zero = 0, one = 1;
    const int mloc = numroc_(&n, &nb, &myrow, &zero, &nprow), nloc = numroc_(&n, &nb, &mycol, &zero, &npcol);
    const int rloc = numroc_(&nrhs, &nb, &mycol, &zero, &npcol);
    const int lld = mloc > 1 ? mloc : 1;
    int desca[9], descb[9], info;
    descinit_(desca, &n, &n, &nb, &nb, &zero, &zero, &ctxt, &lld, &info);
    descinit_(descb, &n, &nrhs, &nb, &nb, &zero, &zero, &ctxt, &lld, &info);
    const size_t asz = (size_t)lld * (size_t)(nloc > 0 ? nloc : 1), bsz = (size_t)lld * (size_t)(rloc > 0 ? rloc : 1);
    double *a0 = malloc(sizeof(double) * asz), *a = malloc(sizeof(double) * asz);
    double *b0 = malloc(sizeof(double) * bsz), *b = malloc(sizeof(double) * bsz);
    double* x = malloc(sizeof(double) * bsz); /* symm's X */
    int* ipiv = malloc(sizeof(int) * (size_t)(mloc + nb));
    for (int jl = 0; jl < nloc; ++jl) {
        const int jf = jl + 1, j = indxl2g_(&jf, &nb, &mycol, &zero, &npcol) - 1;
        for (int il = 0; il < mloc; ++il) {
            const int i_f = il + 1, i = indxl2g_(&i_f, &nb, &myrow, &zero, &nprow) - 1;
            /* lower triangle; diagonal n: well conditioned, and positive definite for posv; syrk's C
               is full (its upper triangle must come back untouched) */
            a0[il + (size_t)jl * lld] = i == j ? (double)n
                                        : i > j || routine == SYRK || routine == GETRF || routine == GEQRF || routine == GELS ? entry(1, i, j)
                                        : posv ? entry(1, j, i) : NAN;
        }
    }
    for (int jl = 0; jl < rloc; ++jl) {
        const int jf = jl + 1, j = indxl2g_(&jf, &nb, &mycol, &zero, &npcol) - 1;
        for (int il = 0; il < mloc; ++il) {
            const int i_f = il + 1, i = indxl2g_(&i_f, &nb, &myrow, &zero, &nprow) - 1;
            b0[il + (size_t)jl * lld] = entry(2, i, j);
            x[il + (size_t)jl * lld] = entry(4, i, j);
        }
    }
    double* tau = malloc(sizeof(double) * (size_t)(nloc + nb));
    double* work = malloc(sizeof(double));
    int lwork = 1;
    if (routine == GEQRF) { /* pdgeqrf_'s workspace query, untimed */
        const int query = -1;
        pdgeqrf_(&n, &n, a0, &one, &one, desca, tau, work, &query, &info);
        lwork = (int)work[0];
        free(work);
        work = malloc(sizeof(double) * (size_t)(lwork > 1 ? lwork : 1));
    }
    if (routine == GELS) { /* pdgels_'s workspace query, untimed */
        const int query = -1;
        pdgels_("N", &n, &n, &nrhs, a0, &one, &one, desca, b0, &one, &one, descb, work, &query, &info);
        lwork = (int)work[0];
        free(work);
        work = malloc(sizeof(double) * (size_t)(lwork > 1 ? lwork : 1));
    }
    const double alpha = 1.0, beta = 1.0;
    double best = 1e300;
    for (int r = 0; r < runs; ++r) {
        memcpy(a, a0, sizeof(double) * asz);
        memcpy(b, b0, sizeof(double) * bsz);
        Cblacs_barrier(ctxt, "All");
        const double t0 = now();
        if (posv) pdposv_("L", &n, &nrhs, a, &one, &one, desca, b, &one, &one, descb, &info);
        else if (routine == TRSM) pdtrsm_("L", "L", "N", "N", &n, &nrhs, &alpha, a, &one, &one, desca, b, &one, &one, descb);
        else if (routine == GETRF) pdgetrf_(&n, &n, a, &one, &one, desca, ipiv, &info);
        else if (routine == POTRF) pdpotrf_("L", &n, a, &one, &one, desca, &info);
        else if (routine == GEQRF) pdgeqrf_(&n, &n, a, &one, &one, desca, tau, work, &lwork, &info);
        else if (routine == GELS) pdgels_("N", &n, &n, &nrhs, a, &one, &one, desca, b, &one, &one, descb, work, &lwork, &info);
        else if (routine == SYRK) pdsyrk_("L", "N", &n, &nrhs, &alpha, b, &one, &one, descb, &beta, a, &one, &one, desca);
        else pdsymm_("L", "L", &n, &nrhs, &alpha, a, &one, &one, desca, x, &one, &one, descb, &beta, b, &one, &one, descb);
        Cblacs_barrier(ctxt, "All");
        double t = now() - t0;
        Cdgamx2d(ctxt, "All", " ", 1, 1, &t, 1, NULL, NULL, -1, -1, -1);
        if (t < best) best = t;
    }
    double sums[2] = {0.0, 0.0};
    const int on_a = routine == SYRK || routine == GETRF || routine == POTRF || routine == GEQRF;
    const double* res = on_a ? a : b; /* the result: C, the LU or QR factors, or B */
    for (int jl = 0; jl < (on_a ? nloc : rloc); ++jl) {
        const int jf = jl + 1, j = indxl2g_(&jf, &nb, &mycol, &zero, &npcol) - 1;
        for (int il = 0; il < mloc; ++il) {
            const int i_f = il + 1, i = indxl2g_(&i_f, &nb, &myrow, &zero, &nprow) - 1;
            if (routine == POTRF && i < j) continue; /* the factor: the lower triangle */
            const double v = res[il + (size_t)jl * lld];
            sums[0] += entry(3, i, j) * v;
            sums[1] += v * v;
        }
    }
    Cdgsum2d(ctxt, "All", " ", 2, 1, sums, 2, 0, 0);
    /* syrk: n(n+1)·k, LAPACK's count; symm: 2n²·nrhs; gels: the QR, then Qᴴ·B (2n²·nrhs) and R's solve (n²·nrhs) */
    const double flops = routine == GETRF  ? 2.0 / 3.0 * n * (double)n * n
                         : routine == GEQRF ? 4.0 / 3.0 * n * (double)n * n
                         : routine == GELS ? 4.0 / 3.0 * n * (double)n * n + 3.0 * n * (double)n * nrhs
                         : routine == POTRF ? n * (double)n * n / 3.0
                         : routine == SYRK ? n * (n + 1.0) * nrhs
                         : routine == SYMM ? 2.0 * n * (double)n * nrhs
                                           : (posv ? n * (double)n * n / 3.0 : 0.0) + (posv ? 2.0 : 1.0) * n * (double)n * nrhs;
    if (myrow == 0 && mycol == 0)
        printf("pd%s n=%d nrhs=%d nb=%d grid=%dx%d runs=%d info=%d best_s=%.6f gflops=%.2f checksum=%.15e "
               "norm2=%.15e\n", names[routine], n, nrhs, nb, nprow, npcol, runs, posv || routine >= GETRF ? info : 0, best,
               flops / best * 1e-9, sums[0], sums[1]);
    free(a0);
    free(a);
    free(b0);
    free(b);
    free(x);
    free(ipiv);
    free(tau);
    free(work);
    Cblacs_gridexit(ctxt);
    Cblacs_exit(0);
    return 0;
}

/* beta = 0 with NaN in C through the shim's symmetric PBLAS routines (p?symm_, p?syrk_, p?syr2k_,
 * p?herk_, p?her2k_): C must not be read. Each call runs twice on the same A and B, once with
 * every local entry of C set to NaN, once with every entry 0. Inside the part of sub(C) the
 * routine writes (all of it for p?symm, the UPLO triangle for the rank-k ones), the two results
 * must be bitwise equal and finite; everywhere else C must be as it was (NaN, 0). Linked before
 * -lscalapack-mpich like shim_checks; sym_nan.py runs it on 4 processes with
 * CALA_SCALAPACK_THRESHOLD=0 and checks that cala took every call. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void Cblacs_get(int ctxt, int what, int* val);
void Cblacs_gridinit(int* ctxt, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int ctxt);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* rsrc,
               const int* csrc, const int* ctxt, const int* lld, int* info);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrc, const int* nprocs);
void pdsymm_(const char*, const char*, const int*, const int*, const double*, const double*, const int*,
             const int*, const int*, const double*, const int*, const int*, const int*, const double*,
             double*, const int*, const int*, const int*);
void pdsyrk_(const char*, const char*, const int*, const int*, const double*, const double*, const int*,
             const int*, const int*, const double*, double*, const int*, const int*, const int*);
void pdsyr2k_(const char*, const char*, const int*, const int*, const double*, const double*, const int*,
              const int*, const int*, const double*, const int*, const int*, const int*, const double*,
              double*, const int*, const int*, const int*);
void pzherk_(const char*, const char*, const int*, const int*, const double*, const double*, const int*,
             const int*, const int*, const double*, double*, const int*, const int*, const int*);
void pzher2k_(const char*, const char*, const int*, const int*, const double*, const double*, const int*,
              const int*, const int*, const double*, const int*, const int*, const int*, const double*,
              double*, const int*, const int*, const int*);

enum { G = 44, NB = 4, P = 2, Q = 2 }; /* every matrix G x G in NB x NB blocks on a 2 x 2 grid */
static const int n = 29, k = 17, ix = 5; /* sub-matrices start at (5, 5): on a block boundary */
static int myrow, mycol, mloc, nloc, failures;

static int global(int l, int p) { return (l / NB * P + p) * NB + l % NB; } /* P == Q */

static void fill(double* x, int w, double v0, int seed) { /* w doubles per element */
    for (int j = 0; j < nloc; ++j)
        for (int i = 0; i < mloc; ++i)
            for (int c = 0; c < w; ++c)
                x[(i + j * mloc) * w + c] =
                    seed ? sin(seed * 0.37 + global(i, myrow) * 1.3 + global(j, mycol) * 0.7 + c) : v0;
}

/* written(i, j): does the routine write entry (i, j) (1-based, global) of C? */
static void check(const char* what, const double* c_nan, const double* c_zero, int w, char part) {
    int bad = 0;
    for (int jl = 0; jl < nloc; ++jl)
        for (int il = 0; il < mloc; ++il) {
            const int i = global(il, myrow) + 1 - (ix - 1), j = global(jl, mycol) + 1 - (ix - 1);
            const int cols = part == 'A' ? k : n;
            int in = i >= 1 && i <= n && j >= 1 && j <= cols;
            if (part == 'L') in = in && i >= j;
            if (part == 'U') in = in && i <= j;
            for (int c = 0; c < w; ++c) {
                const double a = c_nan[(il + jl * mloc) * w + c], b = c_zero[(il + jl * mloc) * w + c];
                if (in ? (!isfinite(a) || memcmp(&a, &b, sizeof a) != 0) : (!isnan(a) || b != 0.0)) ++bad;
            }
        }
    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (all) ++failures;
    if (myrow == 0 && mycol == 0) printf("sym_nan: %-28s %s (%d wrong entries)\n", what, all ? "FAILED" : "ok", all);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int ctxt, info, p, q, zero = 0, g = G, nb = NB;
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, "Row", P, Q);
    Cblacs_gridinfo(ctxt, &p, &q, &myrow, &mycol);
    if (p != P) MPI_Abort(MPI_COMM_WORLD, 2); /* needs 4 processes */
    mloc = numroc_(&g, &nb, &myrow, &zero, &p);
    nloc = numroc_(&g, &nb, &mycol, &zero, &q);
    int desc[9], lld = mloc > 1 ? mloc : 1;
    descinit_(desc, &g, &g, &nb, &nb, &zero, &zero, &ctxt, &lld, &info);
    const size_t len = (size_t)mloc * nloc * 2;
    double *a = malloc(len * sizeof *a), *b = malloc(len * sizeof *b);
    double *c1 = malloc(len * sizeof *a), *c0 = malloc(len * sizeof *a);
    const double alpha[2] = {1.5, -0.5}, beta[2] = {0.0, 0.0};
    for (int w = 1; w <= 2; ++w) { /* 1: double, 2: double complex */
        fill(a, w, 0, 1);
        fill(b, w, 0, 2);
        double* c = c1;
#define RUN(call, name, part)                                                                      \
    do {                                                                                           \
        fill(c1, w, NAN, 0);                                                                       \
        fill(c0, w, 0.0, 0);                                                                       \
        for (int r = 0; r < 2; ++r) {                                                              \
            c = r ? c0 : c1;                                                                       \
            call;                                                                                  \
        }                                                                                          \
        check(name, c1, c0, w, part);                                                              \
    } while (0)
        if (w == 1) {
            RUN(pdsymm_("L", "U", &n, &k, alpha, a, &ix, &ix, desc, b, &ix, &ix, desc, beta, c, &ix, &ix, desc),
                "pdsymm_(L,U)", 'A');
            RUN(pdsymm_("R", "L", &n, &k, alpha, a, &ix, &ix, desc, b, &ix, &ix, desc, beta, c, &ix, &ix, desc),
                "pdsymm_(R,L)", 'A');
            RUN(pdsyrk_("L", "N", &n, &k, alpha, a, &ix, &ix, desc, beta, c, &ix, &ix, desc), "pdsyrk_(L,N)", 'L');
            RUN(pdsyrk_("U", "T", &n, &k, alpha, a, &ix, &ix, desc, beta, c, &ix, &ix, desc), "pdsyrk_(U,T)", 'U');
            RUN(pdsyr2k_("U", "N", &n, &k, alpha, a, &ix, &ix, desc, b, &ix, &ix, desc, beta, c, &ix, &ix, desc),
                "pdsyr2k_(U,N)", 'U');
        } else {
            RUN(pzherk_("U", "C", &n, &k, alpha, a, &ix, &ix, desc, beta, c, &ix, &ix, desc), "pzherk_(U,C)", 'U');
            RUN(pzher2k_("L", "N", &n, &k, alpha, a, &ix, &ix, desc, b, &ix, &ix, desc, beta, c, &ix, &ix, desc),
                "pzher2k_(L,N)", 'L');
        }
    }
    if (myrow == 0 && mycol == 0) printf(failures ? "sym_nan: FAILED\n" : "sym_nan: all checks passed\n");
    free(a), free(b), free(c1), free(c0);
    Cblacs_gridexit(ctxt);
    MPI_Finalize();
    return failures != 0;
}

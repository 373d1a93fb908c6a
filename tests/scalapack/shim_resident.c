/* p?gemm_ through the shim with CALA_DEVICES (the resident route, lib/scalapack/resident_route.hpp)
 * against ScaLAPACK's own p?gemm_ (dlsym in libscalapack-mpich) on the same input. Linked with the
 * shim before -lscalapack-mpich; shim_resident.py runs it with CALA_DEVICES=host and
 * CALA_SHIM_DEVICE=always (every call resident on a HostDevice) and =never (the CPU path), and
 * checks the log lines and that both runs print the same sums.
 *
 * usage: shim_resident PxQ[,PxQ...]   (grids on the first p·q processes; the others wait)
 * For every grid: pdgemm_ and pzgemm_, every TRANSA x TRANSB in N, T, C, sizes the block size 8
 * does not divide, submatrices at IA, JA != 1 (inside a block), beta = 0 with NaN in sub(C) (every
 * other case) and beta != 0; and C := A·Aᵀ with B the same array as A. Checks on every process: inside sub(C) |C - C_scalapack| <= 8 (k + 2)
 * eps (|alpha| k + |beta|) |.|max-scaled, finite; outside sub(C) bitwise as it was. Then one
 * illegal call (TRANSA = 'X'): C untouched. Then p?potrf_ (pdpotrf_, pzpotrf_), both UPLO, n = 29
 * in blocks of 8 at IA = JA = 9 (the second block): a Hermitian positive definite sub(A) (the
 * factored triangle against ScaLAPACK's p?potrf_ on the same input, |L - L_scalapack|max <= 30 n eps
 * |L_scalapack|max), and one not positive definite at minor 14 (d) or 20 (z): INFO on every
 * process equal to ScaLAPACK's and to that minor; in both, every entry of the local array outside
 * the factored triangle of sub(A) bitwise as it was. p?posv_ the same way (the positive definite
 * sub(A), NRHS = 3 at IB = 9, JB = 1): the solution against ScaLAPACK's p?potrf_ + p?potrs_ (30 n eps
 * |X_scalapack|max), B outside sub(B) bitwise as it was. (ScaLAPACK's routines call the PBLAS by
 * their Fortran names: its p?trsm_, p?syrk_ inside are the shim's.) Then p?trsm_ (pdtrsm_ every SIDE x
 * UPLO x TRANSA x DIAG, pztrsm_ every SIDE x UPLO x TRANSA), sub(B) 37 x 29 at IB, JB, sub(A) inside a
 * block: the solution against ScaLAPACK's own p?trsm_ (30 k eps |X_scalapack|max), A and B outside
 * sub(B) bitwise as they were. Then p?syrk_ / p?herk_ (pdsyrk_, pzherk_, pzsyrk_, both UPLO and TRANS,
 * beta = 0 with NaN in sub(C) every other) against ScaLAPACK's own,
 * C outside sub(C)'s triangle and A bitwise as they were. Prints "case ... sum=" per case
 * (shim_resident.py compares the two runs) and "shim_resident: all checks passed". */
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void Cblacs_get(int ctxt, int what, int* val);
void Cblacs_gridinit(int* ctxt, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int ctxt);
void Cblacs_exit(int not_done);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* rsrc,
               const int* csrc, const int* ctxt, const int* lld, int* info);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrc, const int* nprocs);
int indxl2g_(const int* indxloc, const int* nb, const int* iproc, const int* isrc, const int* nprocs);
typedef void Pgemm(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                   const int*, const int*, const int*, const double*, const int*, const int*, const int*,
                   const double*, double*, const int*, const int*, const int*);
Pgemm pdgemm_, pzgemm_;
typedef void Ppotrf(const char*, const int*, double*, const int*, const int*, const int*, int*);
typedef void PpotrfFortran(const char*, const int*, double*, const int*, const int*, const int*, int*, size_t);
Ppotrf pdpotrf_, pzpotrf_;
typedef void Pposv(const char*, const int*, const int*, double*, const int*, const int*, const int*, double*,
                   const int*, const int*, const int*, int*);
typedef void PposvFortran(const char*, const int*, const int*, double*, const int*, const int*, const int*, double*,
                          const int*, const int*, const int*, int*, size_t);
Pposv pdposv_, pzposv_;

enum { NB = 8 };
static const int M = 37, N = 29, K = 23;                /* op(A) M x K, op(B) K x N */
static const int IA = 3, JA = 5, IB = 2, JB = 1, IC = 4, JC = 6; /* submatrix origins */
static int myrow, mycol, p, q, failures, me;
static MPI_Comm gcomm; /* the processes of the current grid */

/* One distributed matrix: global gm x gn, w doubles per element, local array and descriptor. */
typedef struct {
    int gm, gn, mloc, nloc, desc[9];
    double* x;
} Mat;

static Mat make(int ctxt, int gm, int gn, int w) {
    Mat a;
    int zero = 0, nb = NB, info;
    a.gm = gm, a.gn = gn;
    a.mloc = numroc_(&gm, &nb, &myrow, &zero, &p);
    a.nloc = numroc_(&gn, &nb, &mycol, &zero, &q);
    int lld = a.mloc > 1 ? a.mloc : 1;
    descinit_(a.desc, &gm, &gn, &nb, &nb, &zero, &zero, &ctxt, &lld, &info);
    a.x = malloc(((size_t)lld * (a.nloc > 0 ? a.nloc : 1) * w + 1) * sizeof(double));
    return a;
}
static int gi(int il) { int l = il + 1, nb = NB, z = 0; return indxl2g_(&l, &nb, &myrow, &z, &p); } /* 1-based */
static int gj(int jl) { int l = jl + 1, nb = NB, z = 0; return indxl2g_(&l, &nb, &mycol, &z, &q); }
static double* at(const Mat* a, int il, int jl, int w) { return a->x + ((size_t)il + (size_t)jl * (a->desc[8])) * w; }
static void fill(Mat* a, int w, int seed) {
    for (int jl = 0; jl < a->nloc; ++jl)
        for (int il = 0; il < a->mloc; ++il)
            for (int c = 0; c < w; ++c) at(a, il, jl, w)[c] = sin(seed * 0.37 + gi(il) * 1.3 + gj(jl) * 0.7 + c);
}
static int inside(int i, int j, int i0, int j0, int rows, int cols) {
    return i >= i0 && i < i0 + rows && j >= j0 && j < j0 + cols;
}

static void run_case(int ctxt, int w, char ta, char tb, int beta0, Pgemm* real, const char* grid) {
    Pgemm* shim = w == 1 ? pdgemm_ : pzgemm_;
    const int nota = ta == 'N', notb = tb == 'N';
    const int ar = nota ? M : K, ac = nota ? K : M, br = notb ? K : N, bc = notb ? N : K;
    Mat a = make(ctxt, ar + IA + 2, ac + JA, w), b = make(ctxt, br + IB, bc + JB + 3, w);
    Mat c = make(ctxt, M + IC + 1, N + JC, w), r = make(ctxt, M + IC + 1, N + JC, w);
    fill(&a, w, 1), fill(&b, w, 2), fill(&c, w, 3), fill(&r, w, 3);
    const double alpha[2] = {1.25, -0.5}, beta[2] = {beta0 ? 0.0 : 0.75, beta0 ? 0.0 : 0.25};
    if (beta0) /* sub(C): NaN for the shim, 0 for ScaLAPACK */
        for (int jl = 0; jl < c.nloc; ++jl)
            for (int il = 0; il < c.mloc; ++il)
                if (inside(gi(il), gj(jl), IC, JC, M, N))
                    for (int k = 0; k < w; ++k) at(&c, il, jl, w)[k] = NAN, at(&r, il, jl, w)[k] = 0.0;
    double* before = malloc(((size_t)c.desc[8] * (c.nloc > 0 ? c.nloc : 1) * w + 1) * sizeof(double));
    memcpy(before, c.x, (size_t)c.desc[8] * c.nloc * w * sizeof(double));
    const char sa[2] = {ta, 0}, sb[2] = {tb, 0};

    shim(sa, sb, &M, &N, &K, alpha, a.x, &IA, &JA, a.desc, b.x, &IB, &JB, b.desc, beta, c.x, &IC, &JC, c.desc);
    real(sa, sb, &M, &N, &K, alpha, a.x, &IA, &JA, a.desc, b.x, &IB, &JB, b.desc, beta, r.x, &IC, &JC, r.desc);

    const double tol = 8.0 * (K + 2) * DBL_EPSILON * (2.0 * K * hypot(alpha[0], alpha[1]) + 2.0 * hypot(beta[0], beta[1]));
    double err = 0, sum = 0;
    int bad = 0;
    for (int jl = 0; jl < c.nloc; ++jl)
        for (int il = 0; il < c.mloc; ++il) {
            const int i = gi(il), j = gj(jl);
            for (int k = 0; k < w; ++k) {
                const double v = at(&c, il, jl, w)[k], ref = at(&r, il, jl, w)[k];
                if (inside(i, j, IC, JC, M, N)) {
                    if (!isfinite(v)) ++bad;
                    else err = fmax(err, fabs(v - ref));
                    sum += v * (1.0 + 0.001 * (i + 2 * j + k));
                } else if (memcmp(&v, &before[&at(&c, il, jl, w)[k] - c.x], sizeof v) != 0) {
                    ++bad;
                }
            }
        }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, gcomm);
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, gcomm);
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, gcomm);
    const int ok = bad == 0 && err <= tol;
    if (!ok) ++failures;
    if (me == 0)
        printf("case %s %s(%c,%c) beta%s err=%.3e tol=%.3e sum=%.17g sumtol=%.3e %s\n", grid, w == 1 ? "pdgemm" : "pzgemm",
               ta, tb, beta0 ? "=0,C=NaN" : "!=0", err, tol, sum, tol * M * N * w * 2.0, ok ? "ok" : "FAILED");
    free(before), free(a.x), free(b.x), free(c.x), free(r.x);
}

/* C := alpha·A·Aᵀ + beta·C with B the same array as A (same descriptor and origin): the resident
 * route copies it once. C is M x M at (IC, JC). */
static void same_array_case(int ctxt, const char* grid) {
    Mat a = make(ctxt, M + IA, K + JA, 1), c = make(ctxt, M + IC, M + JC, 1), r = make(ctxt, M + IC, M + JC, 1);
    fill(&a, 1, 4), fill(&c, 1, 5), fill(&r, 1, 5);
    const double alpha = 0.5, beta = -1.5;
    pdgemm_("N", "T", &M, &M, &K, &alpha, a.x, &IA, &JA, a.desc, a.x, &IA, &JA, a.desc, &beta, c.x, &IC, &JC, c.desc);
    Pgemm* real = (Pgemm*)dlsym(dlopen("libscalapack-mpich.so.2.2", RTLD_LAZY | RTLD_NOLOAD), "pdgemm_");
    real("N", "T", &M, &M, &K, &alpha, a.x, &IA, &JA, a.desc, a.x, &IA, &JA, a.desc, &beta, r.x, &IC, &JC, r.desc);
    const double tol = 8.0 * (K + 2) * DBL_EPSILON * (2.0 * K * alpha + 2.0 * fabs(beta));
    double err = 0, sum = 0;
    for (int jl = 0; jl < c.nloc; ++jl)
        for (int il = 0; il < c.mloc; ++il) {
            const double v = *at(&c, il, jl, 1);
            err = fmax(err, isfinite(v) ? fabs(v - *at(&r, il, jl, 1)) : INFINITY);
            if (inside(gi(il), gj(jl), IC, JC, M, M)) sum += v * (1.0 + 0.001 * (gi(il) + 2 * gj(jl)));
        }
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, gcomm);
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, gcomm);
    if (!(err <= tol)) ++failures;
    if (me == 0)
        printf("case %s pdgemm(N,T) B=A err=%.3e tol=%.3e sum=%.17g sumtol=%.3e %s\n", grid, err, tol, sum,
               tol * M * M * 2.0, err <= tol ? "ok" : "FAILED");
    free(a.x), free(c.x), free(r.x);
}

/* TRANSA = 'X': info = -1 through PXERBLA, C untouched. */
static void illegal_call(int ctxt) {
    Mat a = make(ctxt, M, K, 1), b = make(ctxt, K, N, 1), c = make(ctxt, M, N, 1);
    fill(&a, 1, 1), fill(&b, 1, 2), fill(&c, 1, 3);
    const size_t len = (size_t)c.desc[8] * c.nloc;
    double* before = malloc((len + 1) * sizeof(double));
    memcpy(before, c.x, len * sizeof(double));
    const double one = 1.0;
    const int i1 = 1;
    pdgemm_("X", "N", &M, &N, &K, &one, a.x, &i1, &i1, a.desc, b.x, &i1, &i1, b.desc, &one, c.x, &i1, &i1, c.desc);
    int bad = memcmp(before, c.x, len * sizeof(double)) != 0;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, gcomm);
    if (bad) ++failures;
    if (me == 0) printf("illegal TRANSA: C %s\n", bad ? "CHANGED (FAILED)" : "untouched");
    free(before), free(a.x), free(b.x), free(c.x);
}

/* p?potrf_ on sub(A) = A(IP:IP+NP-1, IP:IP+NP-1), w doubles per element: through the shim and
 * through ScaLAPACK's own on copies of the same input. fail > 0: minor `fail` not positive definite. */
enum { NP = 29, IP = 9 };
enum { NRHS = 3 };
static void potrf_case(int ctxt, int w, char uplo, int fail, int posv, const char* grid) {
    void* lib = dlopen("libscalapack-mpich.so.2.2", RTLD_LAZY | RTLD_NOLOAD);
    if (lib == NULL) lib = dlopen("libscalapack-mpich.so", RTLD_LAZY | RTLD_NOLOAD);
    const char* name = posv ? (w == 1 ? "pdposv" : "pzposv") : (w == 1 ? "pdpotrf" : "pzpotrf");
    /* ScaLAPACK's p?posv_ would call p?potrf_ by its Fortran name, which is the shim's here: the
     * reference is ScaLAPACK's own p?potrf_, then (p?posv_) its own p?potrs_ */
    PpotrfFortran* real = (PpotrfFortran*)dlsym(lib, w == 1 ? "pdpotrf_" : "pzpotrf_");
    PposvFortran* real_potrs = (PposvFortran*)dlsym(lib, w == 1 ? "pdpotrs_" : "pzpotrs_");
    Mat b = make(ctxt, IP - 1 + NP + 3, NRHS + 1, w), rb = make(ctxt, IP - 1 + NP + 3, NRHS + 1, w);
    fill(&b, w, 7);
    const size_t lenb = (size_t)b.desc[8] * b.nloc * w;
    memcpy(rb.x, b.x, lenb * sizeof(double));
    double* before_b = malloc((lenb + 1) * sizeof(double));
    memcpy(before_b, b.x, lenb * sizeof(double));
    Mat a = make(ctxt, IP - 1 + NP + 3, IP - 1 + NP + 2, w), r = make(ctxt, IP - 1 + NP + 3, IP - 1 + NP + 2, w);
    fill(&a, w, 6);
    for (int jl = 0; jl < a.nloc; ++jl) /* sub(A) Hermitian, diagonally dominant; minor `fail` not */
        for (int il = 0; il < a.mloc; ++il) {
            const int si = gi(il) - IP, sj = gj(jl) - IP;
            if (si < 0 || si >= NP || sj < 0 || sj >= NP) continue;
            const int lo = si < sj ? si : sj, hi = si < sj ? sj : si;
            double* v = at(&a, il, jl, w);
            v[0] = si == sj ? (si + 1 == fail ? -1.0 : 2.0 * NP + 1.0) : sin(0.37 + 1.3 * lo + 0.7 * hi);
            if (w == 2) v[1] = si == sj ? 0.0 : (si > sj ? 0.5 : -0.5) * cos(0.9 * lo + 0.4 * hi);
        }
    const size_t len = (size_t)a.desc[8] * a.nloc * w;
    memcpy(r.x, a.x, len * sizeof(double));
    double* before = malloc((len + 1) * sizeof(double));
    memcpy(before, a.x, len * sizeof(double));
    const char su[2] = {uplo, 0};
    const int n = NP, ia = IP;
    int info = -99, info_ref = -99;

    const int nrhs = NRHS, jb = 1;
    if (posv) {
        (w == 1 ? pdposv_ : pzposv_)(su, &n, &nrhs, a.x, &ia, &ia, a.desc, b.x, &ia, &jb, b.desc, &info);
    } else {
        (w == 1 ? pdpotrf_ : pzpotrf_)(su, &n, a.x, &ia, &ia, a.desc, &info);
    }
    real(su, &n, r.x, &ia, &ia, r.desc, &info_ref, 1);
    if (posv && info_ref == 0) real_potrs(su, &n, &nrhs, r.x, &ia, &ia, r.desc, rb.x, &ia, &jb, rb.desc, &info_ref, 1);

    double err = 0, ref_max = 0, sum = 0;
    int bad = info != info_ref || info != (fail > 0 ? fail : 0);
    for (int jl = 0; jl < a.nloc; ++jl)
        for (int il = 0; il < a.mloc; ++il) {
            const int si = gi(il) - IP, sj = gj(jl) - IP;
            const int tri = si >= 0 && si < NP && sj >= 0 && sj < NP && (uplo == 'L' ? si >= sj : si <= sj);
            for (int k = 0; k < w; ++k) {
                const double v = at(&a, il, jl, w)[k], ref = at(&r, il, jl, w)[k];
                if (!tri) {
                    bad += memcmp(&v, &before[&at(&a, il, jl, w)[k] - a.x], sizeof v) != 0;
                } else if (fail == 0) {
                    err = isfinite(v) ? fmax(err, fabs(v - ref)) : INFINITY;
                    ref_max = fmax(ref_max, fabs(ref));
                    sum += v * (1.0 + 0.001 * (si + 2 * sj + k));
                }
            }
        }
    double xerr = 0, xref_max = 0; /* p?posv_: the solution in sub(B); B elsewhere untouched */
    for (int jl = 0; jl < b.nloc && posv; ++jl)
        for (int il = 0; il < b.mloc; ++il) {
            const int si = gi(il) - IP, sj = gj(jl) - jb;
            for (int k = 0; k < w; ++k) {
                const double v = at(&b, il, jl, w)[k], ref = at(&rb, il, jl, w)[k];
                if (si < 0 || si >= NP || sj < 0 || sj >= NRHS) {
                    bad += memcmp(&v, &before_b[&at(&b, il, jl, w)[k] - b.x], sizeof v) != 0;
                } else {
                    xerr = isfinite(v) ? fmax(xerr, fabs(v - ref)) : INFINITY;
                    xref_max = fmax(xref_max, fabs(ref));
                    sum += v * (1.0 + 0.001 * (si + 3 * sj + k));
                }
            }
        }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, gcomm);
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, gcomm);
    MPI_Allreduce(MPI_IN_PLACE, &ref_max, 1, MPI_DOUBLE, MPI_MAX, gcomm);
    MPI_Allreduce(MPI_IN_PLACE, &xerr, 1, MPI_DOUBLE, MPI_MAX, gcomm);
    MPI_Allreduce(MPI_IN_PLACE, &xref_max, 1, MPI_DOUBLE, MPI_MAX, gcomm);
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, gcomm);
    const double xtol = 30.0 * NP * DBL_EPSILON * xref_max;
    if (!(xerr <= xtol)) ++bad;
    const double tol = 30.0 * NP * DBL_EPSILON * ref_max;
    const int ok = bad == 0 && err <= tol;
    if (!ok) ++failures;
    if (me == 0)
        printf("case %s %s(%c) %s info=%d scalapack_info=%d err=%.3e tol=%.3e xerr=%.3e xtol=%.3e sum=%.17g "
               "sumtol=%.3e %s\n", grid, name, uplo, fail ? "not-pd" : "pd", info, info_ref, err, tol, xerr, xtol,
               sum, (tol + xtol) * NP * (NP + NRHS) * w, ok ? "ok" : "FAILED");
    free(before), free(a.x), free(r.x), free(before_b), free(b.x), free(rb.x);
}

/* p?trsm_ on sub(B) = B(IB:IB+M-1, JB:JB+N-1), sub(A) = A(IA:IA+k-1, JA:JA+k-1) with k = M (left) or
 * N (right), w doubles per element: through the shim and through ScaLAPACK's own on copies of the
 * same input. The triangle diagonally dominant (well conditioned); B outside sub(B) and all of A
 * bitwise as they were. */
typedef void Ptrsm(const char*, const char*, const char*, const char*, const int*, const int*, const double*,
                   const double*, const int*, const int*, const int*, double*, const int*, const int*, const int*);
Ptrsm pdtrsm_, pztrsm_;
static void trsm_case(int ctxt, int w, char side, char uplo, char trans, char diag, const char* grid) {
    void* lib = dlopen("libscalapack-mpich.so.2.2", RTLD_LAZY | RTLD_NOLOAD);
    if (lib == NULL) lib = dlopen("libscalapack-mpich.so", RTLD_LAZY | RTLD_NOLOAD);
    Ptrsm* real = (Ptrsm*)dlsym(lib, w == 1 ? "pdtrsm_" : "pztrsm_");
    const int k = side == 'L' ? M : N;
    Mat a = make(ctxt, k + IA + 1, k + JA, w), b = make(ctxt, M + IB + 2, N + JB + 1, w);
    Mat r = make(ctxt, M + IB + 2, N + JB + 1, w);
    fill(&a, w, 8), fill(&b, w, 9);
    for (int jl = 0; jl < a.nloc; ++jl) /* a dominant diagonal in sub(A) */
        for (int il = 0; il < a.mloc; ++il)
            if (gi(il) - IA == gj(jl) - JA && gi(il) >= IA && gi(il) < IA + k) at(&a, il, jl, w)[0] = 2.0 * k + 1.0;
    const size_t lena = (size_t)a.desc[8] * a.nloc * w, lenb = (size_t)b.desc[8] * b.nloc * w;
    memcpy(r.x, b.x, lenb * sizeof(double));
    double* before_a = malloc((lena + 1) * sizeof(double));
    double* before_b = malloc((lenb + 1) * sizeof(double));
    memcpy(before_a, a.x, lena * sizeof(double));
    memcpy(before_b, b.x, lenb * sizeof(double));
    const double alpha[2] = {1.25, -0.5};
    const char ss[2] = {side, 0}, su[2] = {uplo, 0}, st[2] = {trans, 0}, sd[2] = {diag, 0};

    (w == 1 ? pdtrsm_ : pztrsm_)(ss, su, st, sd, &M, &N, alpha, a.x, &IA, &JA, a.desc, b.x, &IB, &JB, b.desc);
    real(ss, su, st, sd, &M, &N, alpha, a.x, &IA, &JA, a.desc, r.x, &IB, &JB, r.desc);

    double err = 0, ref_max = 0, sum = 0;
    int bad = memcmp(before_a, a.x, lena * sizeof(double)) != 0;
    for (int jl = 0; jl < b.nloc; ++jl)
        for (int il = 0; il < b.mloc; ++il) {
            const int i = gi(il), j = gj(jl);
            for (int c = 0; c < w; ++c) {
                const double v = at(&b, il, jl, w)[c], ref = at(&r, il, jl, w)[c];
                if (!inside(i, j, IB, JB, M, N)) {
                    bad += memcmp(&v, &before_b[&at(&b, il, jl, w)[c] - b.x], sizeof v) != 0;
                } else {
                    err = isfinite(v) ? fmax(err, fabs(v - ref)) : INFINITY;
                    ref_max = fmax(ref_max, fabs(ref));
                    sum += v * (1.0 + 0.001 * (i + 2 * j + c));
                }
            }
        }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, gcomm);
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, gcomm);
    MPI_Allreduce(MPI_IN_PLACE, &ref_max, 1, MPI_DOUBLE, MPI_MAX, gcomm);
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, gcomm);
    const double tol = 30.0 * k * DBL_EPSILON * ref_max;
    const int ok = bad == 0 && err <= tol;
    if (!ok) ++failures;
    if (me == 0)
        printf("case %s %s(%c,%c,%c,%c) err=%.3e tol=%.3e sum=%.17g sumtol=%.3e %s\n", grid, w == 1 ? "pdtrsm" : "pztrsm",
               side, uplo, trans, diag, err, tol, sum, tol * M * N * w * 2.0, ok ? "ok" : "FAILED");
    free(before_a), free(before_b), free(a.x), free(b.x), free(r.x);
}

/* p?syrk_ (pdsyrk_) and p?herk_ (pzherk_) on sub(C) = C(IS:IS+NS-1, IS:IS+NS-1) (square tiles from
 * the second block), op(sub(A)) NS x KS at (IA, JA): through the shim and through ScaLAPACK's own
 * on copies of the same input. beta0: beta = 0 with NaN in sub(C) for the shim (0 for ScaLAPACK).
 * The triangle against ScaLAPACK's (8 (KS + 2) eps (|alpha| KS |A|max² + |beta| |C|max)), every
 * entry of C outside sub(C)'s triangle and all of A bitwise as they were. pzsyrk_ too (Aᵀ with
 * complex alpha and beta: Device::syrk). */
enum { NS = 27, KS = 19, IS = 9 };
typedef void Prankk(const char*, const char*, const int*, const int*, const double*, const double*, const int*,
                    const int*, const int*, const double*, double*, const int*, const int*, const int*);
Prankk pdsyrk_, pzherk_, pzsyrk_;
static void rank_k_case(int ctxt, int w, int herm, char uplo, char trans, int beta0, const char* grid) {
    void* lib = dlopen("libscalapack-mpich.so.2.2", RTLD_LAZY | RTLD_NOLOAD);
    if (lib == NULL) lib = dlopen("libscalapack-mpich.so", RTLD_LAZY | RTLD_NOLOAD);
    const char* name = w == 1 ? "pdsyrk" : herm ? "pzherk" : "pzsyrk";
    Prankk* shim = w == 1 ? pdsyrk_ : herm ? pzherk_ : pzsyrk_;
    Prankk* real = (Prankk*)dlsym(lib, w == 1 ? "pdsyrk_" : herm ? "pzherk_" : "pzsyrk_");
    const int notran = trans == 'N', ar = notran ? NS : KS, ac = notran ? KS : NS;
    Mat a = make(ctxt, ar + IA + 1, ac + JA, w), c = make(ctxt, IS - 1 + NS + 2, IS - 1 + NS + 1, w);
    Mat r = make(ctxt, IS - 1 + NS + 2, IS - 1 + NS + 1, w);
    fill(&a, w, 10), fill(&c, w, 11), fill(&r, w, 11);
    if (beta0)
        for (int jl = 0; jl < c.nloc; ++jl)
            for (int il = 0; il < c.mloc; ++il)
                if (inside(gi(il), gj(jl), IS, IS, NS, NS))
                    for (int k = 0; k < w; ++k) at(&c, il, jl, w)[k] = NAN, at(&r, il, jl, w)[k] = 0.0;
    const size_t lena = (size_t)a.desc[8] * a.nloc * w, lenc = (size_t)c.desc[8] * c.nloc * w;
    double* before_a = malloc((lena + 1) * sizeof(double));
    double* before_c = malloc((lenc + 1) * sizeof(double));
    memcpy(before_a, a.x, lena * sizeof(double));
    memcpy(before_c, c.x, lenc * sizeof(double));
    const double alpha[2] = {0.75, herm ? 0.0 : 0.5}, beta[2] = {beta0 ? 0.0 : -1.25, beta0 || herm ? 0.0 : 0.25};
    const char su[2] = {uplo, 0}, st[2] = {trans, 0};
    const int n = NS, kk = KS, is = IS;

    shim(su, st, &n, &kk, alpha, a.x, &IA, &JA, a.desc, beta, c.x, &is, &is, c.desc);
    real(su, st, &n, &kk, alpha, a.x, &IA, &JA, a.desc, beta, r.x, &is, &is, r.desc);

    double err = 0, sum = 0;
    int bad = memcmp(before_a, a.x, lena * sizeof(double)) != 0;
    for (int jl = 0; jl < c.nloc; ++jl)
        for (int il = 0; il < c.mloc; ++il) {
            const int si = gi(il) - IS, sj = gj(jl) - IS;
            const int tri = si >= 0 && si < NS && sj >= 0 && sj < NS && (uplo == 'L' ? si >= sj : si <= sj);
            for (int k = 0; k < w; ++k) {
                const double v = at(&c, il, jl, w)[k], ref = at(&r, il, jl, w)[k];
                if (!tri) {
                    bad += memcmp(&v, &before_c[&at(&c, il, jl, w)[k] - c.x], sizeof v) != 0;
                } else {
                    err = isfinite(v) ? fmax(err, fabs(v - ref)) : INFINITY;
                    sum += v * (1.0 + 0.001 * (si + 2 * sj + k));
                }
            }
        }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, gcomm);
    MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, gcomm);
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, gcomm);
    const double tol = 8.0 * (KS + 2) * DBL_EPSILON * (2.0 * KS * hypot(alpha[0], alpha[1]) + 2.0 * hypot(beta[0], beta[1]));
    const int ok = bad == 0 && err <= tol;
    if (!ok) ++failures;
    if (me == 0)
        printf("case %s %s(%c,%c) beta%s err=%.3e tol=%.3e sum=%.17g sumtol=%.3e %s\n", grid, name, uplo, trans,
               beta0 ? "=0,C=NaN" : "!=0", err, tol, sum, tol * NS * NS * w, ok ? "ok" : "FAILED");
    free(before_a), free(before_c), free(a.x), free(c.x), free(r.x);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    void* lib = dlopen("libscalapack-mpich.so.2.2", RTLD_LAZY | RTLD_NOLOAD);
    if (lib == NULL) lib = dlopen("libscalapack-mpich.so", RTLD_LAZY | RTLD_NOLOAD);
    Pgemm* real_d = lib ? (Pgemm*)dlsym(lib, "pdgemm_") : NULL;
    Pgemm* real_z = lib ? (Pgemm*)dlsym(lib, "pzgemm_") : NULL;
    if (real_d == NULL || real_z == NULL || real_d == pdgemm_) {
        if (me == 0) printf("shim_resident: ScaLAPACK's own pdgemm_ not found\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char grids[256];
    snprintf(grids, sizeof grids, "%s", argc > 1 ? argv[1] : "1x1");
    for (char* g = strtok(grids, ","); g != NULL; g = strtok(NULL, ",")) {
        int gp = 0, gq = 0, ctxt;
        if (sscanf(g, "%dx%d", &gp, &gq) != 2 || gp * gq > np) MPI_Abort(MPI_COMM_WORLD, 3);
        Cblacs_get(-1, 0, &ctxt);
        Cblacs_gridinit(&ctxt, "Row", gp, gq);
        myrow = -1;
        if (me < gp * gq) Cblacs_gridinfo(ctxt, &p, &q, &myrow, &mycol);
        MPI_Comm_split(MPI_COMM_WORLD, myrow >= 0, me, &gcomm);
        if (myrow >= 0) {
            const char ops[3] = {'N', 'T', 'C'};
            int n = 0;
            for (int w = 1; w <= 2; ++w)
                for (int x = 0; x < 3; ++x)
                    for (int y = 0; y < 3; ++y, ++n) run_case(ctxt, w, ops[x], ops[y], n % 2 == 0, w == 1 ? real_d : real_z, g);
            same_array_case(ctxt, g);
            illegal_call(ctxt);
            for (int w = 1; w <= 2; ++w)
                for (int u = 0; u < 2; ++u) {
                    potrf_case(ctxt, w, u ? 'U' : 'L', 0, 0, g);
                    potrf_case(ctxt, w, u ? 'U' : 'L', w == 1 ? 14 : 20, 0, g);
                    potrf_case(ctxt, w, u ? 'U' : 'L', 0, 1, g);
                }
            /* p?trsm_: pdtrsm_ every SIDE x UPLO x TRANSA x DIAG, pztrsm_ every SIDE x UPLO x TRANSA */
            for (int w = 1; w <= 2; ++w)
                for (int sd = 0; sd < 2; ++sd)
                    for (int u = 0; u < 2; ++u)
                        for (int x = 0; x < 3; ++x)
                            for (int d = 0; d < (w == 1 ? 2 : 1); ++d)
                                trsm_case(ctxt, w, sd ? 'R' : 'L', u ? 'U' : 'L', ops[x], d ? 'U' : 'N', g);
            /* p?syrk_ / p?herk_: pdsyrk_, pzherk_ and pzsyrk_ each UPLO x TRANS (N, T / C), beta = 0
             * every other */
            for (int kind = 0; kind < 3; ++kind)
                for (int u = 0; u < 2; ++u)
                    for (int x = 0; x < 2; ++x)
                        rank_k_case(ctxt, kind == 0 ? 1 : 2, kind == 1, u ? 'U' : 'L', x ? (kind == 1 ? 'C' : 'T') : 'N',
                                    (u + x + kind) % 2, g);
            Cblacs_gridexit(ctxt);
        }
        MPI_Comm_free(&gcomm);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) printf(failures ? "shim_resident: FAILED\n" : "shim_resident: all checks passed\n");
    Cblacs_exit(1);
    MPI_Finalize();
    return failures != 0;
}

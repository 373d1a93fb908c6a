/* Checks of the shim that ScaLAPACK's tester does not make, on 4 processes, linked before
 * -lscalapack-mpich (the shim's second mode; run with CALA_SCALAPACK_THRESHOLD=0 CALA_VERBOSE=1):
 *   - grids made "Row", "Col", with Cblacs_gridmap from a map that is neither row- nor
 *     column-major in the processes' numbers, and a 1 x 3 sub-grid (process 3 idle);
 *     s, d, c, z in every spelling; beta = 0 with NaN in C;
 *     a first block wider than the block size (DTYPE 2, the shim hands it to ScaLAPACK);
 *     entries of C outside sub(C) untouched;
 *   - illegal arguments (bad TRANSA, IA out of range, B from another context, an LLD too small
 *     on one process only): PXERBLA's report, C untouched, the program goes on.
 * Each process checks its own entries of C against a sequential sum; exit status 0 when all hold.
 * shim_checks.py checks the PXERBLA lines and the CALA_VERBOSE lines.
 */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void Cblacs_pinfo(int* mypnum, int* nprocs);
void Cblacs_get(int ictxt, int what, int* val);
void Cblacs_gridinit(int* ictxt, const char* order, int nprow, int npcol);
void Cblacs_gridmap(int* ictxt, int* usermap, int ldumap, int nprow, int npcol);
void Cblacs_gridinfo(int ictxt, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int ictxt);
void Cblacs_exit(int not_done);
void Cigsum2d(int ictxt, const char* scope, const char* top, int m, int n, int* a, int lda, int rdest, int cdest);

#define PGEMM_ARGS(T)                                                                                           \
    const char *, const char *, const int *, const int *, const int *, const T *, const T *, const int *,       \
        const int *, const int *, const T *, const int *, const int *, const int *, const T *, T *, const int *, \
        const int *, const int *
void psgemm_(PGEMM_ARGS(float));
void PSGEMM(PGEMM_ARGS(float));
void pdgemm_(PGEMM_ARGS(double));
void pdgemm(PGEMM_ARGS(double));
void PDGEMM(PGEMM_ARGS(double));
void pcgemm(PGEMM_ARGS(float complex));
void pzgemm_(PGEMM_ARGS(double complex));

#ifdef CALA_SHIM_CHOLESKY
typedef void (*PotrfFn)(const char*, const int*, void*, const int*, const int*, const int*, int*);
typedef void (*PotrsFn)(const char*, const int*, const int*, const void*, const int*, const int*, const int*, void*,
                        const int*, const int*, const int*, int*);
#define POTRF_ARGS(T) const char*, const int*, T*, const int*, const int*, const int*, int*
#define POTRS_ARGS(T) \
    const char*, const int*, const int*, const T*, const int*, const int*, const int*, T*, const int*, const int*, \
        const int*, int*
void pspotrf(POTRF_ARGS(float));
void PSPOTRS(POTRS_ARGS(float));
void pdpotrf_(POTRF_ARGS(double));
void pdpotrs_(POTRS_ARGS(double));
void PDPOTRF(POTRF_ARGS(double));
void pcpotrf_(POTRF_ARGS(float complex));
void pcpotrs_(POTRS_ARGS(float complex));
void PZPOTRF(POTRF_ARGS(double complex));
void pzpotrs(POTRS_ARGS(double complex));
/* p?posv has p?potrs's argument list */
void pdposv_(POTRS_ARGS(double));
void PSPOSV(POTRS_ARGS(float));
void pcposv(POTRS_ARGS(float complex));
void pzposv_(POTRS_ARGS(double complex));
#endif

/* p?tran_, p?tranu_, p?tranc_ (PBLAS): C := beta·C + alpha·op(A) */
#define TRAN_ARGS(T) \
    const int*, const int*, const T*, const T*, const int*, const int*, const int*, const T*, T*, const int*, \
        const int*, const int*
void pdtran_(TRAN_ARGS(double));
void pztranc_(TRAN_ARGS(double complex));
void PCTRANU(TRAN_ARGS(float complex));

static int failures = 0;
static int me = 0;

/* Owner and local index of global index g (0-based) in a dimension: first block ib, then nb,
 * block 0 on src, over np processes. */
static void locate(int g, int ib, int nb, int src, int np, int* proc, int* local) {
    int b = g < ib ? 0 : 1 + (g - ib) / nb, off = g < ib ? g : (g - ib) % nb;
    *proc = (src + b) % np;
    const int d = b % np; /* the process's blocks before b: those with b's residue mod np */
    int count = 0;
    for (int bb = d; bb < b; bb += np) count += bb == 0 ? ib : nb;
    *local = count + off;
}

static double val(int seed, int i, int j) { return (double)((seed * 7919 + i * 131 + j * 71) % 97) / 97.0 - 0.5; }

/* A distributed m x n matrix with first blocks imb x inb, blocks mb x nb, sources rsrc, csrc,
 * local arrays with `gap` extra rows: every entry set to val(seed, i, j) (or NaN when seed < 0). */
typedef struct {
    int desc[11];
    int m, n, imb, inb, mb, nb, rsrc, csrc, lld, mloc, nloc;
    double complex* z; /* storage for every type: element size <= 16 */
} Mat;

static int count_local(int n, int ib, int nb, int src, int np, int me_) {
    int c = 0;
    for (int g = 0; g < n; ++g) {
        int p, l;
        locate(g, ib, nb, src, np, &p, &l);
        c += p == me_;
    }
    return c;
}

static Mat make(int ctxt, int dtype, int m, int n, int imb, int inb, int mb, int nb, int rsrc, int csrc, int gap) {
    int p, q, r, c;
    Cblacs_gridinfo(ctxt, &p, &q, &r, &c);
    Mat a = {{0}, m, n, imb, inb, mb, nb, rsrc, csrc, 0, 0, 0, NULL};
    a.mloc = count_local(m, imb, mb, rsrc, p, r);
    a.nloc = count_local(n, inb, nb, csrc, q, c);
    a.lld = (a.mloc > 1 ? a.mloc : 1) + gap;
    if (dtype == 1) {
        int d[9] = {1, ctxt, m, n, mb, nb, rsrc, csrc, a.lld};
        memcpy(a.desc, d, sizeof d);
    } else {
        int d[11] = {2, ctxt, m, n, imb, inb, mb, nb, rsrc, csrc, a.lld};
        memcpy(a.desc, d, sizeof d);
    }
    a.z = calloc((size_t)a.lld * (size_t)(a.nloc > 0 ? a.nloc : 1), sizeof(double complex));
    return a;
}

/* Element (i, j) of a as type code t ('s', 'd', 'c', 'z'): a pointer into its local array, or
 * NULL when another process holds it. */
static void* at(const Mat* a, char t, int ctxt, int i, int j) {
    int p, q, r, c, pr, pc, li, lj;
    Cblacs_gridinfo(ctxt, &p, &q, &r, &c);
    locate(i, a->imb, a->mb, a->rsrc, p, &pr, &li);
    locate(j, a->inb, a->nb, a->csrc, q, &pc, &lj);
    if (pr != r || pc != c) return NULL;
    const size_t k = (size_t)li + (size_t)lj * (size_t)a->lld;
    switch (t) {
        case 's': return (float*)a->z + k;
        case 'd': return (double*)a->z + k;
        case 'c': return (float complex*)a->z + k;
        default: return a->z + k;
    }
}

static double complex get(const Mat* a, char t, int ctxt, int i, int j) {
    void* e = at(a, t, ctxt, i, j);
    switch (t) {
        case 's': return *(float*)e;
        case 'd': return *(double*)e;
        case 'c': return *(float complex*)e;
        default: return *(double complex*)e;
    }
}

static void put(const Mat* a, char t, int ctxt, int i, int j, double complex v) {
    void* e = at(a, t, ctxt, i, j);
    if (e == NULL) return;
    switch (t) {
        case 's': *(float*)e = (float)creal(v); break;
        case 'd': *(double*)e = creal(v); break;
        case 'c': *(float complex*)e = (float complex)v; break;
        default: *(double complex*)e = v;
    }
}

static double complex gen(char t, int seed, int i, int j) {
    if (seed < 0) return NAN;
    return t == 'c' || t == 'z' ? val(seed, i, j) + I * val(seed + 5, i, j) : val(seed, i, j);
}

static void fill(const Mat* a, char t, int ctxt, int seed) {
    for (int j = 0; j < a->n; ++j)
        for (int i = 0; i < a->m; ++i) put(a, t, ctxt, i, j, gen(t, seed, i, j));
}

/* C(ic.., jc..) := alpha·op(A)·op(B) + beta·C through the spelling `fn`, then every local entry
 * of C checked: inside sub(C) against a sequential sum, outside untouched. */
typedef void (*Caller)(const char*, const char*, int, int, int, double complex, Mat*, int, int, Mat*, int, int,
                       double complex, Mat*, int, int);

#define DEFINE_CALLER(name, fn, T, conv)                                                                         \
    static void name(const char* ta, const char* tb, int m, int n, int k, double complex alpha, Mat* a, int ia,  \
                     int ja, Mat* b, int ib, int jb, double complex beta, Mat* c, int ic, int jc) {              \
        T al = conv(alpha), be = conv(beta);                                                                      \
        fn(ta, tb, &m, &n, &k, &al, (T*)a->z, &ia, &ja, a->desc, (T*)b->z, &ib, &jb, b->desc, &be, (T*)c->z, &ic, \
           &jc, c->desc);                                                                                         \
    }
#define AS_REAL_F(x) ((float)creal(x))
#define AS_REAL_D(x) (creal(x))
#define AS_CPLX_F(x) ((float complex)(x))
#define AS_CPLX_D(x) (x)
DEFINE_CALLER(call_s, PSGEMM, float, AS_REAL_F)
DEFINE_CALLER(call_s_, psgemm_, float, AS_REAL_F)
DEFINE_CALLER(call_d_, pdgemm_, double, AS_REAL_D)
DEFINE_CALLER(call_d, pdgemm, double, AS_REAL_D)
DEFINE_CALLER(call_D, PDGEMM, double, AS_REAL_D)
DEFINE_CALLER(call_c, pcgemm, float complex, AS_CPLX_F)
DEFINE_CALLER(call_z_, pzgemm_, double complex, AS_CPLX_D)

/* One product: A is (ta == N ? m x k : k x m) at (ia, ja), etc. (1-based offsets). */
static void product(const char* what, int ctxt, char t, Caller call, char ta, char tb, int m, int n, int k,
                    double complex alpha, double complex beta, int dtype, int blk[3][4], int src[3][2], int off[3][2]) {
    int dims[3][2] = {{ta == 'N' ? m : k, ta == 'N' ? k : m}, {tb == 'N' ? k : n, tb == 'N' ? n : k}, {m, n}};
    Mat x[3];
    for (int s = 0; s < 3; ++s)
        x[s] = make(ctxt, dtype, dims[s][0] + off[s][0] + 2, dims[s][1] + off[s][1] + 1, blk[s][0], blk[s][1],
                    blk[s][2], blk[s][3], src[s][0], src[s][1], 3);
    fill(&x[0], t, ctxt, 1);
    fill(&x[1], t, ctxt, 2);
    fill(&x[2], t, ctxt, 3);
    const int beta0 = beta == 0;
    if (beta0) /* NaN inside sub(C): must not leak */
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) put(&x[2], t, ctxt, off[2][0] + i, off[2][1] + j, NAN);
    const char tas[2] = {ta, 0}, tbs[2] = {tb, 0};
    call(tas, tbs, m, n, k, alpha, &x[0], off[0][0] + 1, off[0][1] + 1, &x[1], off[1][0] + 1, off[1][1] + 1, beta,
         &x[2], off[2][0] + 1, off[2][1] + 1);
    const double tol = (t == 's' || t == 'c' ? 1e-4 : 1e-12) * (k + 1);
    int bad = 0;
    for (int j = 0; j < x[2].n; ++j)
        for (int i = 0; i < x[2].m; ++i) {
            if (at(&x[2], t, ctxt, i, j) == NULL) continue;
            const int si = i - off[2][0], sj = j - off[2][1];
            double complex want = gen(t, 3, i, j);
            if (si >= 0 && si < m && sj >= 0 && sj < n) {
                double complex s = 0;
                for (int l = 0; l < k; ++l) {
                    const double complex av = ta == 'N' ? gen(t, 1, off[0][0] + si, off[0][1] + l)
                                                        : gen(t, 1, off[0][0] + l, off[0][1] + si);
                    const double complex bv = tb == 'N' ? gen(t, 2, off[1][0] + l, off[1][1] + sj)
                                                        : gen(t, 2, off[1][0] + sj, off[1][1] + l);
                    s += (ta == 'C' ? conj(av) : av) * (tb == 'C' ? conj(bv) : bv);
                }
                want = alpha * s + (beta0 ? 0 : beta * want);
            }
            const double complex got = get(&x[2], t, ctxt, i, j);
            if (!(cabs(got - want) <= tol)) ++bad;
        }
    Cigsum2d(ctxt, "All", " ", 1, 1, &bad, 1, -1, -1);
    int p, q, r, c;
    Cblacs_gridinfo(ctxt, &p, &q, &r, &c);
    if (r == 0 && c == 0) printf("check %-44s %s\n", what, bad == 0 ? "ok" : "WRONG");
    if (bad) ++failures;
    for (int s = 0; s < 3; ++s) free(x[s].z);
}

/* An illegal call: C must be untouched and the program go on. */
static void illegal(const char* what, int ctxt, Mat* a, Mat* b, Mat* c, const char* ta, int ia, int jb_ctxt) {
    const int m = 4, n = 4, k = 4, one = 1;
    const double alpha = 1, beta = 0;
    fill(c, 'd', ctxt, 3);
    int saved = b->desc[1];
    if (jb_ctxt >= 0) b->desc[1] = jb_ctxt;
    pdgemm_(ta, "N", &m, &n, &k, &alpha, (double*)a->z, &ia, &one, a->desc, (double*)b->z, &one, &one, b->desc, &beta,
            (double*)c->z, &one, &one, c->desc);
    b->desc[1] = saved;
    int bad = 0;
    for (int j = 0; j < c->n; ++j)
        for (int i = 0; i < c->m; ++i)
            if (at(c, 'd', ctxt, i, j) && get(c, 'd', ctxt, i, j) != gen('d', 3, i, j)) ++bad;
    Cigsum2d(ctxt, "All", " ", 1, 1, &bad, 1, -1, -1);
    if (me == 0) printf("check %-44s %s\n", what, bad == 0 ? "ok (C untouched, program goes on)" : "WRONG");
    if (bad) ++failures;
}

#ifdef CALA_SHIM_CHOLESKY
/* A Hermitian, diagonally dominant (so positive definite) n x n matrix; entry (kbad, kbad) is -1
 * when kbad >= 0 (then the leading minor of order kbad + 1 is not positive definite). */
static double complex herm(char t, int n, int kbad, int i, int j) {
    if (i == j) return i == kbad ? -1.0 : n + 2.0;
    return i < j ? gen(t, 1, i, j) : conj(gen(t, 1, j, i));
}

/* v as the array of type t stores it. */
static double complex stored(char t, double complex v) {
    return t == 's' ? (float)creal(v) : t == 'c' ? (double complex)(float complex)v : t == 'd' ? creal(v) : v;
}

/* Every process's verdict summed over the grid; process (0, 0) prints it. */
static void verdict(int ctxt, const char* what, int bad, const char* ok) {
    int p, q, r, c;
    Cigsum2d(ctxt, "All", " ", 1, 1, &bad, 1, -1, -1);
    Cblacs_gridinfo(ctxt, &p, &q, &r, &c);
    if (r == 0 && c == 0) printf("check %-44s %s\n", what, bad == 0 ? ok : "WRONG");
    if (bad) ++failures;
}

/* sub(A) = A(ia.., ja..) n x n in nb x nb blocks (sources rsrc, csrc), sub(B) = B(ib.., jb..)
 * n x nrhs: factor with `trf`, solve with `trs` (when given), or both with `posv` (when given),
 * check the factor's info (kbad + 1, or 0) on every process, the solution against x_true (and B
 * untouched when the factorization failed), and that potrf left every entry outside its
 * triangle of sub(A) untouched. */
static void cholesky_or_posv(const char* what, int ctxt, char t, PotrfFn trf, PotrsFn trs, PotrsFn posv, char uplo,
                             int n, int nrhs, int nb, int rsrc, int csrc, int off, int kbad) {
    Mat a = make(ctxt, 1, n + off + 3, n + off + 2, nb, nb, nb, nb, rsrc, csrc, 2);
    Mat b = make(ctxt, 1, n + off + 1, nrhs + 2, nb, 3, nb, 3, rsrc, (csrc + 1) % 2, 1);
    for (int j = 0; j < a.n; ++j)
        for (int i = 0; i < a.m; ++i) {
            const int si = i - off, sj = j - off;
            put(&a, t, ctxt, i, j, si >= 0 && si < n && sj >= 0 && sj < n ? herm(t, n, kbad, si, sj) : gen(t, 4, i, j));
        }
    /* B = sub(A) · X_true in columns 1.., rows off.. */
    for (int j = 0; j < b.n; ++j)
        for (int i = 0; i < b.m; ++i) {
            const int si = i - off, sj = j - 1;
            double complex v = gen(t, 5, i, j);
            if (si >= 0 && si < n && sj >= 0 && sj < nrhs) {
                v = 0;
                for (int l = 0; l < n; ++l) v += herm(t, n, -1, si, l) * gen(t, 2, l, sj);
            }
            put(&b, t, ctxt, i, j, v);
        }
    const int ia = off + 1, ja = off + 1, ib = off + 1, jb = 2;
    int info = -999;
    if (posv != NULL) posv(&uplo, &n, &nrhs, a.z, &ia, &ja, a.desc, b.z, &ib, &jb, b.desc, &info);
    else trf(&uplo, &n, a.z, &ia, &ja, a.desc, &info);
    int bad = info != (kbad >= 0 ? kbad + 1 : 0);
    for (int j = 0; j < a.n; ++j)
        for (int i = 0; i < a.m; ++i) {
            if (at(&a, t, ctxt, i, j) == NULL) continue;
            const int si = i - off, sj = j - off;
            const int inside = si >= 0 && si < n && sj >= 0 && sj < n;
            const int mine = inside && (uplo == 'L' ? si >= sj : si <= sj);
            if (!mine && get(&a, t, ctxt, i, j) != stored(t, inside ? herm(t, n, kbad, si, sj) : gen(t, 4, i, j))) ++bad;
        }
    if ((trs != NULL || posv != NULL) && (info == 0 || posv != NULL)) {
        if (posv == NULL) {
            trs(&uplo, &n, &nrhs, a.z, &ia, &ja, a.desc, b.z, &ib, &jb, b.desc, &info);
            bad += info != 0;
        }
        const int solved = info == 0;
        const double tol = t == 's' || t == 'c' ? 1e-3 : 1e-10;
        for (int j = 0; j < b.n; ++j)
            for (int i = 0; i < b.m; ++i) {
                if (at(&b, t, ctxt, i, j) == NULL) continue;
                const int si = i - off, sj = j - 1;
                const int inside = si >= 0 && si < n && sj >= 0 && sj < nrhs;
                double complex want = stored(t, inside ? gen(t, 2, si, sj) : gen(t, 5, i, j));
                if (inside && !solved) { /* p?posv that could not factor: B untouched */
                    want = 0;
                    for (int l = 0; l < n; ++l) want += herm(t, n, -1, si, l) * gen(t, 2, l, sj);
                    want = stored(t, want);
                }
                if (!(cabs(get(&b, t, ctxt, i, j) - want) <= (inside && solved ? tol : 0))) ++bad;
            }
    }
    verdict(ctxt, what, bad, kbad >= 0 ? "ok (the same info on every process)" : "ok");
    free(a.z);
    free(b.z);
}

static void cholesky(const char* what, int ctxt, char t, PotrfFn trf, PotrsFn trs, char uplo, int n, int nrhs,
                     int nb, int rsrc, int csrc, int off, int kbad) {
    cholesky_or_posv(what, ctxt, t, trf, trs, NULL, uplo, n, nrhs, nb, rsrc, csrc, off, kbad);
}

static void posv(const char* what, int ctxt, char t, PotrsFn fn, char uplo, int n, int nrhs, int nb, int rsrc,
                 int csrc, int off, int kbad) {
    cholesky_or_posv(what, ctxt, t, NULL, NULL, fn, uplo, n, nrhs, nb, rsrc, csrc, off, kbad);
}

/* Illegal p?potrf / p?potrs arguments: info < 0 everywhere (ScaLAPACK's code), A and B untouched. */
static void illegal_cholesky(int ctxt) {
    const int n = 8, nrhs = 2, one = 1, three = 3;
    Mat a = make(ctxt, 1, 12, 12, 4, 4, 4, 4, 0, 0, 0), b = make(ctxt, 1, 12, 4, 4, 2, 4, 2, 0, 0, 0);
    Mat a35 = make(ctxt, 1, 12, 12, 3, 5, 3, 5, 0, 0, 0), b3 = make(ctxt, 1, 12, 4, 3, 2, 3, 2, 0, 0, 0);
    Mat a1 = make(ctxt, 1, 12, 12, 4, 4, 4, 4, 0, 0, 0);
    if (me == 0) a1.desc[8] = 2; /* LLD 2 < 8 local rows, on process 0 only */
    struct {
        const char* what;
        Mat *a, *b;
        const char* uplo;
        const int *ia, *ib;
        int want;
    } cases[] = {
        {"p?potrf: illegal UPLO (info -1)", &a, NULL, "X", &one, NULL, -1},
        {"p?potrf: IA = 3 inside a block (info -4)", &a, NULL, "L", &three, NULL, -4},
        {"p?potrf: MB != NB (info -606)", &a35, NULL, "U", &one, NULL, -606},
        {"p?potrf: LLD too small on one process (-609)", &a1, NULL, "L", &one, NULL, -609},
        {"p?potrs: IB = 3 inside a block (info -9)", &a, &b, "L", &one, &three, -9},
        {"p?potrs: B's MB != A's NB (info -1106)", &a, &b3, "U", &one, &one, -1106},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        fill(cases[k].a, 'd', ctxt, 1);
        if (cases[k].b) fill(cases[k].b, 'd', ctxt, 2);
        int info = 0;
        if (cases[k].b == NULL)
            pdpotrf_(cases[k].uplo, &n, (double*)cases[k].a->z, cases[k].ia, &one, cases[k].a->desc, &info);
        else
            pdpotrs_(cases[k].uplo, &n, &nrhs, (double*)cases[k].a->z, cases[k].ia, &one, cases[k].a->desc,
                     (double*)cases[k].b->z, cases[k].ib, &one, cases[k].b->desc, &info);
        int bad = info != cases[k].want;
        for (int j = 0; j < cases[k].a->n; ++j)
            for (int i = 0; i < cases[k].a->m; ++i)
                if (at(cases[k].a, 'd', ctxt, i, j) && get(cases[k].a, 'd', ctxt, i, j) != gen('d', 1, i, j)) ++bad;
        if (cases[k].b)
            for (int j = 0; j < cases[k].b->n; ++j)
                for (int i = 0; i < cases[k].b->m; ++i)
                    if (at(cases[k].b, 'd', ctxt, i, j) && get(cases[k].b, 'd', ctxt, i, j) != gen('d', 2, i, j))
                        ++bad;
        verdict(ctxt, cases[k].what, bad, "ok (info everywhere, A and B untouched)");
    }
    free(a.z);
    free(b.z);
    free(a35.z);
    free(b3.z);
    free(a1.z);
}

static void cholesky_checks(int row, int colc, int mapc, int sub) {
    cholesky("potrf/potrs 2x2, d (pdpotrf_), L, offsets", row, 'd', (PotrfFn)pdpotrf_, (PotrsFn)pdpotrs_, 'L', 37, 5,
             4, 1, 0, 4, -1);
    cholesky("potrf/potrs column-major, d (PDPOTRF), U", colc, 'd', (PotrfFn)PDPOTRF, (PotrsFn)pdpotrs_, 'U', 29, 3,
             5, 0, 1, 0, -1);
    cholesky("potrf/potrs gridmap, z (PZPOTRF, pzpotrs), L", mapc, 'z', (PotrfFn)PZPOTRF, (PotrsFn)pzpotrs, 'L', 26,
             4, 3, 1, 1, 3, -1);
    cholesky("potrf/potrs 2x2, c (pcpotrf_), U, offsets", row, 'c', (PotrfFn)pcpotrf_, (PotrsFn)pcpotrs_, 'U', 23, 2,
             4, 0, 0, 8, -1);
    cholesky("potrf/potrs 2x2, s (pspotrf, PSPOTRS), L", row, 's', (PotrfFn)pspotrf, (PotrsFn)PSPOTRS, 'L', 21, 3, 4,
             1, 1, 0, -1);
    int p, q, r, c;
    Cblacs_gridinfo(sub, &p, &q, &r, &c);
    if (r >= 0)
        cholesky("potrf/potrs sub-grid 1x3, d, U", sub, 'd', (PotrfFn)pdpotrf_, (PotrsFn)pdpotrs_, 'U', 31, 2, 4, 0,
                 2, 4, -1);
    cholesky("potrf not SPD at 14 of 33: info = 14, d, L", row, 'd', (PotrfFn)pdpotrf_, NULL, 'L', 33, 1, 4, 0, 0, 4,
             13);
    cholesky("potrf not SPD at 9 of 20: info = 9, z, U", row, 'z', (PotrfFn)PZPOTRF, NULL, 'U', 20, 1, 3, 1, 0, 0, 8);
    posv("posv 2x2, d (pdposv_), L, offsets", row, 'd', (PotrsFn)pdposv_, 'L', 37, 5, 4, 1, 0, 4, -1);
    posv("posv column-major, s (PSPOSV), U", colc, 's', (PotrsFn)PSPOSV, 'U', 29, 3, 5, 0, 1, 0, -1);
    posv("posv gridmap, c (pcposv), L", mapc, 'c', (PotrsFn)pcposv, 'L', 26, 4, 3, 1, 1, 3, -1);
    posv("posv 2x2, z (pzposv_), U, offsets", row, 'z', (PotrsFn)pzposv_, 'U', 23, 2, 4, 0, 0, 8, -1);
    posv("posv not SPD at 11 of 30: info = 11, d, U", row, 'd', (PotrsFn)pdposv_, 'U', 30, 2, 4, 0, 1, 4, 10);
    illegal_cholesky(row);
}
#endif

/* C(ic.., jc..) := beta·C + alpha·op(A(ia.., ja..)) (m x n; op = T, or C when conj) through
 * p?tran_/p?tranu_/p?tranc_: every local entry of C against a sequential sum inside sub(C),
 * untouched outside; beta = 0 with NaN in C. */
static void tran(const char* what, int ctxt, char t, int conjugate, int m, int n, double complex alpha,
                 double complex beta) {
    Mat a = make(ctxt, 1, n + 3, m + 2, 3, 2, 3, 2, 1 % 2, 0, 1), c = make(ctxt, 1, m + 2, n + 4, 4, 5, 4, 5, 0, 1, 0);
    fill(&a, t, ctxt, 1);
    const int ia = 3, ja = 2, ic = 2, jc = 4, nan_c = beta == 0;
    for (int j = 0; j < c.n; ++j)
        for (int i = 0; i < c.m; ++i) {
            const int inside = i >= ic - 1 && i < ic - 1 + m && j >= jc - 1 && j < jc - 1 + n;
            put(&c, t, ctxt, i, j, gen(t, inside && nan_c ? -1 : 2, i, j));
        }
    if (t == 'd') {
        double al = creal(alpha), be = creal(beta);
        pdtran_(&m, &n, &al, (double*)a.z, &ia, &ja, a.desc, &be, (double*)c.z, &ic, &jc, c.desc);
    } else if (t == 'z') {
        pztranc_(&m, &n, &alpha, a.z, &ia, &ja, a.desc, &beta, c.z, &ic, &jc, c.desc);
    } else {
        float complex al = (float complex)alpha, be = (float complex)beta;
        PCTRANU(&m, &n, &al, (float complex*)a.z, &ia, &ja, a.desc, &be, (float complex*)c.z, &ic, &jc, c.desc);
    }
    const double tol = t == 'c' ? 1e-5 : 1e-12;
    int bad = 0;
    for (int j = 0; j < c.n; ++j)
        for (int i = 0; i < c.m; ++i) {
            if (at(&c, t, ctxt, i, j) == NULL) continue;
            const int si = i - (ic - 1), sj = j - (jc - 1);
            const int inside = si >= 0 && si < m && sj >= 0 && sj < n;
            double complex want = t == 'c' ? (double complex)(float complex)gen(t, 2, i, j) : gen(t, 2, i, j);
            if (inside) {
                double complex av = gen(t, 1, ia - 1 + sj, ja - 1 + si);
                if (conjugate) av = conj(av);
                want = alpha * av + (nan_c ? 0 : beta * gen(t, 2, i, j));
            }
            if (!(cabs(get(&c, t, ctxt, i, j) - want) <= (inside ? tol : 0))) ++bad;
        }
    Cigsum2d(ctxt, "All", " ", 1, 1, &bad, 1, -1, -1);
    if (me == 0) printf("check %-44s %s\n", what, bad == 0 ? "ok" : "WRONG");
    if (bad) ++failures;
    free(a.z);
    free(c.z);
}

int main(void) {
    int nprocs, row, colc, mapc, sub, r, c, p, q;
    Cblacs_pinfo(&me, &nprocs);
    if (nprocs != 4) {
        if (me == 0) fprintf(stderr, "shim_checks: run on 4 processes\n");
        Cblacs_exit(0);
        return 1;
    }
    Cblacs_get(-1, 0, &row);
    Cblacs_gridinit(&row, "Row", 2, 2);
    Cblacs_get(-1, 0, &colc);
    Cblacs_gridinit(&colc, "Col", 2, 2);
    int map[4] = {2, 3, 0, 1}; /* column-major usermap: (0,0)=2 (1,0)=3 (0,1)=0 (1,1)=1: neither order */
    Cblacs_get(-1, 0, &mapc);
    Cblacs_gridmap(&mapc, map, 2, 2, 2);
    Cblacs_get(-1, 0, &sub);
    Cblacs_gridinit(&sub, "Row", 1, 3);

    int blk[3][4] = {{4, 5, 4, 5}, {3, 3, 3, 3}, {5, 2, 5, 2}}, src0[3][2] = {{1, 0}, {0, 1}, {1, 1}};
    int off[3][2] = {{2, 3}, {1, 0}, {3, 4}}, none[3][2] = {{0, 0}, {0, 0}, {0, 0}};
    product("row-major 2x2, d, N N, beta = 0 (NaN in C)", row, 'd', call_d_, 'N', 'N', 37, 29, 33, 1.5, 0, 1, blk,
            src0, off);
    product("row-major 2x2, d (pdgemm), T T, beta = 2", row, 'd', call_d, 'T', 'T', 21, 30, 17, -1, 2, 1, blk, src0,
            off);
    product("column-major 2x2, d (PDGEMM), T N", colc, 'd', call_D, 'T', 'N', 25, 31, 40, 2, 0.5, 1, blk, src0, off);
    product("gridmap (a shuffled map), d, N T", mapc, 'd', call_d_, 'N', 'T', 30, 22, 26, 1, 1, 1, blk, src0, off);
    product("column-major 2x2, s (PSGEMM), N N", colc, 's', call_s, 'N', 'N', 19, 23, 29, 1, 0, 1, blk, src0, none);
    product("row-major 2x2, s (psgemm_), C T", row, 's', call_s_, 'C', 'T', 9, 14, 11, 2, 1, 1, blk, src0, off);
    product("row-major 2x2, c (pcgemm), C N, beta = 0", row, 'c', call_c, 'C', 'N', 17, 12, 15, 1 - 2 * I, 0, 1, blk,
            src0, off);
    product("gridmap (a shuffled map), z (pzgemm_), C C", mapc, 'z', call_z_, 'C', 'C', 13, 16, 21, 0.5 + I, 2 - I,
            1, blk, src0, off);
    /* DTYPE 2: first blocks 9 rows / 7 columns, blocks 2 x 3; sub(A) starts inside A's first
     * block with 8 of its rows left: no cala layout, ScaLAPACK computes it. */
    int wide[3][4] = {{9, 7, 2, 3}, {9, 7, 2, 3}, {9, 7, 2, 3}}, off1[3][2] = {{1, 0}, {0, 0}, {0, 0}};
    product("row-major 2x2, d, first block > block size", row, 'd', call_d_, 'N', 'N', 20, 18, 16, 1, 1, 2, wide, src0,
            off1);
    Cblacs_gridinfo(sub, &p, &q, &r, &c);
    if (r >= 0) /* process 3 is not in the 1 x 3 grid */
        product("sub-grid 1x3 of 4 processes, d, N N", sub, 'd', call_d_, 'N', 'N', 26, 35, 24, 1, 0, 1, blk, none,
                off);

    /* Illegal calls on the row-major grid: m = n = k = 4, A, B, C 8 x 8 in 2 x 2 blocks. */
    Mat a = make(row, 1, 8, 8, 2, 2, 2, 2, 0, 0, 0), b = make(row, 1, 8, 8, 2, 2, 2, 2, 0, 0, 0);
    Mat cm = make(row, 1, 8, 8, 2, 2, 2, 2, 0, 0, 0);
    fill(&a, 'd', row, 1);
    fill(&b, 'd', row, 2);
    illegal("illegal TRANSA (info -1)", row, &a, &b, &cm, "X", 1, -1);
    illegal("IA out of range (info -8)", row, &a, &b, &cm, "N", 6, -1);
    illegal("B in another context (info -1402)", row, &a, &b, &cm, "N", 1, colc);
    Mat c1 = make(row, 1, 8, 8, 2, 2, 2, 2, 0, 0, 0);
    if (me == 0) c1.desc[8] = 3; /* LLD 3 < 4 local rows, on process 0 only */
    illegal("LLD of C too small on one process (info -1911)", row, &a, &b, &c1, "N", 1, -1);

    tran("p?tran 2x2, d (pdtran_), beta = 0 (NaN in C)", row, 'd', 0, 17, 11, 1.5, 0);
    tran("p?tranc gridmap, z (pztranc_), beta = 2 - i", mapc, 'z', 1, 9, 14, 0.5 + I, 2 - I);
    tran("p?tranu column-major, c (PCTRANU)", colc, 'c', 0, 12, 12, -1, 0.5);

#ifdef CALA_SHIM_CHOLESKY
    cholesky_checks(row, colc, mapc, sub);
#endif

    int all = failures;
    Cigsum2d(row, "All", " ", 1, 1, &all, 1, -1, -1);
    if (me == 0) printf("shim_checks: %s\n", all == 0 ? "all checks passed" : "FAILED");
    fflush(stdout);  // before MPI_Finalize, which can hang over TCP (shim_checks.py)
    Cblacs_exit(0);
    return all == 0 ? 0 : 1;
}

/* p?getrf_, p?getrs_, p?gesv_, p?geqrf_ and p?ormqr_/p?unmqr_ through the ABI (linked with
 * libcala_scalapack before -lscalapack-mpich, 4 processes): results, ScaLAPACK's formats and
 * ScaLAPACK's answers to bad input, each against libscalapack's own routine (found with
 * dlopen/dlsym) on the same input.
 *
 *   solves       every type and spelling, both TRANS, sub(A) at a later block with RSRC/CSRC != 0
 *                and LLD gaps, sub(B) in another column: X against X_true; every entry outside
 *                sub(A), sub(B) untouched
 *   IPIV format  a matrix both pivotings leave unpivoted: cala's IPIV equal to ScaLAPACK's entry
 *                for entry over all LOCr(M_A) + MB_A (the entries p?getf2 writes for other
 *                process rows' panels included), the factors equal to rounding
 *   across       cala's factors solved by ScaLAPACK's p?getrs, ScaLAPACK's by cala's p?getrs
 *   singular     a zero column: INFO = ScaLAPACK's (the column's index) on every process; p?gesv
 *                leaves B untouched
 *   NaN          INFO = ScaLAPACK's
 *   illegal      IA inside a block, MB != NB, LLD too small on one process, TRANS, IB, B's MB, B
 *                in another context (p?getrs and p?gesv): ScaLAPACK's INFO on every process
 *                (PXERBLA's line: factor_checks.py), A, IPIV and B untouched
 *   QR           p?geqrf's workspace query equal to ScaLAPACK's; sub(A) at a later block: A (R and
 *                V) and TAU equal to ScaLAPACK's to rounding, every other entry untouched; p?ormqr
 *                (SIDE = L and R, both TRANS) equal to ScaLAPACK's; zero columns (tau = 0, at a
 *                panel's first column and inside one; 2x2 and 3x1): A and TAU as ScaLAPACK's; LWORK too small (p?geqrf -9,
 *                p?ormqr -16): INFO on every process, A, TAU and C untouched
 */
#include <complex.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void Cblacs_pinfo(int* mypnum, int* nprocs);
void Cblacs_get(int ictxt, int what, int* val);
void Cblacs_gridinit(int* ictxt, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int ictxt, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_exit(int not_done);
void Cigsum2d(int ictxt, const char* scope, const char* top, int m, int n, int* a, int lda, int rdest, int cdest);

typedef void (*GetrfFn)(const int*, const int*, void*, const int*, const int*, const int*, int*, int*);
typedef void (*GetrsFn)(const char*, const int*, const int*, const void*, const int*, const int*, const int*,
                        const int*, void*, const int*, const int*, const int*, int*);
typedef void (*GesvFn)(const int*, const int*, void*, const int*, const int*, const int*, int*, void*, const int*,
                       const int*, const int*, int*);
#define GETRF_ARGS const int*, const int*, void*, const int*, const int*, const int*, int*, int*
#define GETRS_ARGS                                                                                             \
    const char*, const int*, const int*, const void*, const int*, const int*, const int*, const int*, void*, \
        const int*, const int*, const int*, int*
#define GEQRF_ARGS const int*, const int*, void*, const int*, const int*, const int*, void*, void*, const int*, int*
#define ORMQR_ARGS                                                                                          \
    const char*, const char*, const int*, const int*, const int*, const void*, const int*, const int*, const int*, \
        const void*, void*, const int*, const int*, const int*, void*, const int*, int*
typedef void (*GeqrfFn)(GEQRF_ARGS);
typedef void (*OrmqrFn)(ORMQR_ARGS);
void pdgeqrf_(GEQRF_ARGS);
void pzgeqrf_(GEQRF_ARGS);
void pdormqr_(ORMQR_ARGS);
void pzunmqr_(ORMQR_ARGS);
#define GESV_ARGS \
    const int*, const int*, void*, const int*, const int*, const int*, int*, void*, const int*, const int*, const int*, int*
void pdgetrf_(GETRF_ARGS);
void PDGETRF(GETRF_ARGS);
void psgetrf_(GETRF_ARGS);
void pcgetrf(GETRF_ARGS);
void pzgetrf_(GETRF_ARGS);
void pdgetrs_(GETRS_ARGS);
void pdgetrs(GETRS_ARGS);
void PSGETRS(GETRS_ARGS);
void pcgetrs_(GETRS_ARGS);
void PZGETRS(GETRS_ARGS);
void pdgesv_(GESV_ARGS);
void PCGESV(GESV_ARGS);
void pzgesv(GESV_ARGS);

static int me = 0, failures = 0;

/* libscalapack's own routine `name` (the shim stands before it in this program). */
static void* real(const char* name) {
    static void* lib = NULL;
    if (lib == NULL) lib = dlopen("libscalapack-mpich.so.2.2", RTLD_LAZY | RTLD_NOLOAD);
    void* f = lib ? dlsym(lib, name) : NULL;
    if (f == NULL) {
        fprintf(stderr, "factor_checks: no %s in libscalapack-mpich\n", name);
        exit(2);
    }
    return f;
}

/* A pseudo-random entry in [-0.5, 0.5). */
static double rnd(unsigned seed, long i, long j) {
    unsigned long h = (unsigned long)seed * 0x9E3779B97F4A7C15ul ^ (unsigned long)i * 0xBF58476D1CE4E5B9ul ^
                      (unsigned long)j * 0x94D049BB133111EBul;
    h ^= h >> 31;
    h *= 0xD6E8FEB86659FD93ul;
    h ^= h >> 32;
    return (double)(h >> 11) / 9007199254740992.0 - 0.5;
}
static double complex gen(char t, unsigned seed, long i, long j) {
    return t == 'c' || t == 'z' ? rnd(seed, i, j) + I * rnd(seed + 7, i, j) : rnd(seed, i, j);
}
static size_t esize(char t) { return t == 's' ? 4 : t == 'd' || t == 'c' ? 8 : 16; }

/* A distributed m x n matrix in mb x nb blocks from (rsrc, csrc), local arrays with `gap` extra rows. */
typedef struct {
    int desc[9], m, n, mb, nb, rsrc, csrc, lld, mloc, nloc, ctxt;
    char t;
    void* v;
} Mat;

static int numroc(int n, int nb, int proc, int src, int np) {
    int c = 0;
    for (int g = 0; g < n; ++g) c += (src + g / nb) % np == proc;
    return c;
}
static Mat make(int ctxt, char t, int m, int n, int mb, int nb, int rsrc, int csrc, int gap) {
    int p, q, r, c;
    Cblacs_gridinfo(ctxt, &p, &q, &r, &c);
    Mat a = {{0}, m, n, mb, nb, rsrc, csrc, 0, 0, 0, ctxt, t, NULL};
    a.mloc = numroc(m, mb, r, rsrc, p);
    a.nloc = numroc(n, nb, c, csrc, q);
    a.lld = (a.mloc > 1 ? a.mloc : 1) + gap;
    int d[9] = {1, ctxt, m, n, mb, nb, rsrc, csrc, a.lld};
    memcpy(a.desc, d, sizeof d);
    a.v = calloc((size_t)a.lld * (size_t)(a.nloc > 0 ? a.nloc : 1), 16);
    return a;
}
static size_t bytes(const Mat* a) { return (size_t)a->lld * (size_t)(a->nloc > 0 ? a->nloc : 1) * esize(a->t); }
static Mat copy(const Mat* a) {
    Mat b = *a;
    b.v = malloc(bytes(a) > 0 ? bytes(a) : 1);
    memcpy(b.v, a->v, bytes(a));
    return b;
}
/* Element (i, j) (0-based): a pointer into the local array, or NULL elsewhere. */
static void* at(const Mat* a, int i, int j) {
    int p, q, r, c;
    Cblacs_gridinfo(a->ctxt, &p, &q, &r, &c);
    if ((a->rsrc + i / a->mb) % p != r || (a->csrc + j / a->nb) % q != c) return NULL;
    const size_t li = (size_t)(i / (a->mb * p)) * a->mb + i % a->mb, lj = (size_t)(j / (a->nb * q)) * a->nb + j % a->nb;
    return (char*)a->v + (li + lj * a->lld) * esize(a->t);
}
static double complex get(const Mat* a, int i, int j) {
    void* e = at(a, i, j);
    switch (a->t) {
        case 's': return *(float*)e;
        case 'd': return *(double*)e;
        case 'c': return *(float complex*)e;
        default: return *(double complex*)e;
    }
}
static void put(const Mat* a, int i, int j, double complex v) {
    void* e = at(a, i, j);
    if (e == NULL) return;
    switch (a->t) {
        case 's': *(float*)e = (float)creal(v); break;
        case 'd': *(double*)e = creal(v); break;
        case 'c': *(float complex*)e = (float complex)v; break;
        default: *(double complex*)e = v;
    }
}

static void verdict(int ctxt, const char* what, int bad) {
    int p, q, r, c;
    Cigsum2d(ctxt, "All", " ", 1, 1, &bad, 1, -1, -1);
    Cblacs_gridinfo(ctxt, &p, &q, &r, &c);
    if (r == 0 && c == 0) printf("check %-60s %s\n", what, bad == 0 ? "ok" : "WRONG");
    if (bad) ++failures;
}

/* sub(A) n x n at (off, off) of an (n+off+2) x (n+off+1) matrix; diag: added to its diagonal
 * (0: a random matrix, pivoting happens); zero_col >= 0: that column of sub(A) is zero; nan: one
 * entry NaN. */
static Mat matrix_a(int ctxt, char t, int n, int nb, int rsrc, int csrc, int off, double diag, int zero_col, int nan) {
    Mat a = make(ctxt, t, n + off + 2, n + off + 1, nb, nb, rsrc, csrc, 2);
    for (int j = 0; j < a.n; ++j)
        for (int i = 0; i < a.m; ++i) {
            const int si = i - off, sj = j - off, in = si >= 0 && si < n && sj >= 0 && sj < n;
            double complex v = gen(t, 1, i, j) + (in && si == sj ? diag : 0);
            if (in && sj == zero_col) v = 0;
            if (in && nan && si == n / 2 && sj == n / 3) v = NAN;
            put(&a, i, j, v);
        }
    return a;
}

/* B (n+off+1) x (nrhs+2) in nb x 3 blocks, sub(B) at (off, 1): op(sub(A))·X_true there, X_true = gen(2),
 * sub(A) as matrix_a makes it with `diag`. */
static Mat matrix_b(const Mat* a, char trans, int n, int nrhs, int off, double diag) {
    Mat b = make(a->ctxt, a->t, n + off + 1, nrhs + 2, a->mb, 3, a->rsrc, (a->csrc + 1) % 2, 1);
    for (int j = 0; j < b.n; ++j)
        for (int i = 0; i < b.m; ++i) {
            if (at(&b, i, j) == NULL) continue;
            const int si = i - off, sj = j - 1;
            if (si < 0 || si >= n || sj < 0 || sj >= nrhs) {
                put(&b, i, j, gen(a->t, 5, i, j));
                continue;
            }
            double complex s = 0;
            for (int k = 0; k < n; ++k) { /* every process evaluates sub(A) itself */
                const long r = trans == 'N' ? si : k, c = trans == 'N' ? k : si;
                double complex v = gen(a->t, 1, off + r, off + c) + (r == c ? diag : 0);
                s += (trans == 'C' ? conj(v) : v) * gen(a->t, 2, k, sj);
            }
            put(&b, i, j, s);
        }
    return b;
}

/* Max |X - X_true| over sub(B), and whether every entry outside it is as before (`b0`). */
static int check_solution(const Mat* b, const Mat* b0, int n, int nrhs, int off) {
    const double tol = b->t == 's' || b->t == 'c' ? 2e-3 : 1e-9;
    int bad = 0;
    for (int j = 0; j < b->n; ++j)
        for (int i = 0; i < b->m; ++i) {
            if (at(b, i, j) == NULL) continue;
            const int si = i - off, sj = j - 1, in = si >= 0 && si < n && sj >= 0 && sj < nrhs;
            if (in) bad |= !(cabs(get(b, i, j) - gen(b->t, 2, si, sj)) < tol);
            else bad |= get(b, i, j) != get(b0, i, j);
        }
    return bad;
}
/* Entries of A outside sub(A) as before. */
static int outside_untouched(const Mat* a, const Mat* a0, int n, int off) {
    int bad = 0;
    for (int j = 0; j < a->n; ++j)
        for (int i = 0; i < a->m; ++i) {
            if (at(a, i, j) == NULL) continue;
            const int in = i >= off && i < off + n && j >= off && j < off + n;
            if (!in) bad |= memcmp(at(a, i, j), at(a0, i, j), esize(a->t)) != 0;
        }
    return bad;
}
static int* new_ipiv(const Mat* a) {
    const int len = a->mloc + a->mb;
    int* ipiv = malloc(sizeof(int) * (size_t)len);
    for (int i = 0; i < len; ++i) ipiv[i] = -7;
    return ipiv;
}

/* Factor with `trf` (or p?gesv with `sv`), solve with `trs`, check X and the untouched entries. */
static void solve(const char* what, int ctxt, char t, GetrfFn trf, GetrsFn trs, GesvFn sv, char trans, int n,
                  int nrhs, int nb, int rsrc, int csrc, int off) {
    int p, q, r, c, info = -99, info2 = -99;
    Cblacs_gridinfo(ctxt, &p, &q, &r, &c);
    if (r < 0) return;
    Mat a = matrix_a(ctxt, t, n, nb, rsrc, csrc, off, 0.0, -1, 0), a0 = copy(&a); /* random: pivoting */
    Mat b = matrix_b(&a, trans, n, nrhs, off, 0.0), b0 = copy(&b);
    int* ipiv = new_ipiv(&a);
    const int ia = off + 1, ib = off + 1, jb = 2;
    const char tr[2] = {trans, 0};
    if (sv != NULL) {
        sv(&n, &nrhs, a.v, &ia, &ia, a.desc, ipiv, b.v, &ib, &jb, b.desc, &info);
        info2 = 0;
    } else {
        trf(&n, &n, a.v, &ia, &ia, a.desc, ipiv, &info);
        trs(tr, &n, &nrhs, a.v, &ia, &ia, a.desc, ipiv, b.v, &ib, &jb, b.desc, &info2);
    }
    verdict(ctxt, what, info != 0 || info2 != 0 || check_solution(&b, &b0, n, nrhs, off) ||
                            outside_untouched(&a, &a0, n, off));
    free(a.v), free(a0.v), free(b.v), free(b0.v), free(ipiv);
}

/* The IPIV format: a diagonally dominant sub(A) (no interchange under either pivoting), factored by
 * the shim and by libscalapack: IPIV equal entry for entry, factors equal to rounding. */
static void ipiv_format(const char* what, int ctxt, int n, int nb, int rsrc, int off) {
    Mat a = matrix_a(ctxt, 'd', n, nb, rsrc, rsrc, off, 4.0 * n, -1, 0), a2 = copy(&a);
    int *ipiv = new_ipiv(&a), *ipiv2 = new_ipiv(&a), info = -1, info2 = -1, bad = 0;
    const int ia = off + 1;
    pdgetrf_(&n, &n, a.v, &ia, &ia, a.desc, ipiv, &info);
    ((GetrfFn)real("pdgetrf_"))(&n, &n, a2.v, &ia, &ia, a2.desc, ipiv2, &info2);
    for (int i = 0; i < a.mloc + a.mb; ++i) bad |= ipiv[i] != ipiv2[i];
    for (size_t k = 0; k < bytes(&a) / 8; ++k) {
        const double x = ((double*)a.v)[k], y = ((double*)a2.v)[k];
        bad |= !(fabs(x - y) <= 1e-12 * (fabs(y) > 1 ? fabs(y) : 1));
    }
    verdict(ctxt, what, bad || info != 0 || info2 != 0);
    free(a.v), free(a2.v), free(ipiv), free(ipiv2);
}

/* One side's factors, the other side's solve (a random sub(A): pivoting happens). */
static void across(const char* what, int ctxt, GetrfFn trf, GetrsFn trs, int n, int nrhs, int nb, int off) {
    Mat a = matrix_a(ctxt, 'd', n, nb, 1, 0, off, 0.0, -1, 0);
    Mat b = matrix_b(&a, 'N', n, nrhs, off, 0.0), b0 = copy(&b);
    int* ipiv = new_ipiv(&a);
    int info = -1, info2 = -1;
    const int ia = off + 1, jb = 2;
    trf(&n, &n, a.v, &ia, &ia, a.desc, ipiv, &info);
    trs("N", &n, &nrhs, a.v, &ia, &ia, a.desc, ipiv, b.v, &ia, &jb, b.desc, &info2);
    verdict(ctxt, what, info != 0 || info2 != 0 || check_solution(&b, &b0, n, nrhs, off));
    free(a.v), free(b.v), free(b0.v), free(ipiv);
}

/* A singular or NaN sub(A): the shim's INFO equal to ScaLAPACK's (and to `expect` when >= 0) on
 * every process; p?gesv's B untouched when INFO > 0. */
static void numerical(const char* what, int ctxt, int n, int nb, int zero_col, int nan, int expect) {
    Mat a = matrix_a(ctxt, 'd', n, nb, 0, 1, nb, 0.0, zero_col, nan), a2 = copy(&a), a3 = copy(&a);
    Mat b = matrix_b(&a, 'N', n, 2, nb, 0.0), b0 = copy(&b);
    int *ipiv = new_ipiv(&a), *ipiv2 = new_ipiv(&a), info = -1, info2 = -1, info3 = -1, two = 2;
    const int ia = nb + 1, jb = 2;
    pdgetrf_(&n, &n, a.v, &ia, &ia, a.desc, ipiv, &info);
    ((GetrfFn)real("pdgetrf_"))(&n, &n, a2.v, &ia, &ia, a2.desc, ipiv2, &info2);
    pdgesv_(&n, &two, a3.v, &ia, &ia, a3.desc, ipiv, b.v, &ia, &jb, b.desc, &info3);
    const int bad = info != info2 || info3 != info || (expect >= 0 && info != expect) ||
                    (info > 0 && memcmp(b.v, b0.v, bytes(&b)) != 0);
    if (bad) fprintf(stderr, "[%d] %s: info %d (gesv %d), ScaLAPACK's %d\n", me, what, info, info3, info2);
    verdict(ctxt, what, bad);
    free(a.v), free(a2.v), free(a3.v), free(b.v), free(b0.v), free(ipiv), free(ipiv2);
}

/* An illegal call: `info` as expected on every process, A, IPIV and B untouched. kind: 'f' p?getrf,
 * 's' p?getrs, 'v' p?gesv; the descriptors as given. */
static void illegal(const char* what, int ctxt, char kind, Mat* a, int ia, Mat* b, int ib, const char* trans,
                    int expect) {
    Mat a0 = copy(a), b0 = copy(b);
    int *ipiv = new_ipiv(a), n = 8, nrhs = 2, info = 0, jb = 1;
    for (int i = 0; i < a->mloc; ++i) ipiv[i] = i + 1; /* a valid pivot sequence: no interchange */
    int* ipiv0 = malloc(sizeof(int) * (size_t)(a->mloc + a->mb));
    memcpy(ipiv0, ipiv, sizeof(int) * (size_t)(a->mloc + a->mb));
    if (kind == 'f') pdgetrf_(&n, &n, a->v, &ia, &ia, a->desc, ipiv, &info);
    else if (kind == 's') pdgetrs_(trans, &n, &nrhs, a->v, &ia, &ia, a->desc, ipiv, b->v, &ib, &jb, b->desc, &info);
    else pdgesv_(&n, &nrhs, a->v, &ia, &ia, a->desc, ipiv, b->v, &ib, &jb, b->desc, &info);
    const int bad = info != expect || memcmp(a->v, a0.v, bytes(a)) != 0 || memcmp(b->v, b0.v, bytes(b)) != 0 ||
                    memcmp(ipiv, ipiv0, sizeof(int) * (size_t)(a->mloc + a->mb)) != 0;
    if (bad) fprintf(stderr, "[%d] %s: info %d, expected %d\n", me, what, info, expect);
    verdict(ctxt, what, bad);
    free(a0.v), free(b0.v), free(ipiv), free(ipiv0);
}

/* Element-wise |x - y| <= tol·max(1, |y|) over two local arrays of type t. */
static int differ(char t, const void* x, const void* y, size_t count, double tol) {
    int bad = 0;
    for (size_t k = 0; k < count; ++k) {
        double complex a, b;
        if (t == 'd') a = ((const double*)x)[k], b = ((const double*)y)[k];
        else a = ((const double complex*)x)[k], b = ((const double complex*)y)[k];
        bad |= !(cabs(a - b) <= tol * (cabs(b) > 1 ? cabs(b) : 1));
    }
    return bad;
}

/* sub(A) m x n at (off, off) of A (m+off+2) x (n+off+1): QR by the shim and by libscalapack on the
 * same input (WORK from each one's query), then Q·C, Qᴴ·C (SIDE = L), C·Q and C·Qᴴ (SIDE = R) on
 * the same factors. */
static void qr(const char* what, int ctxt, char t, int m, int n, int nb, int rsrc, int off, int z1, int z2) {
    int p, q, r, c;
    Cblacs_gridinfo(ctxt, &p, &q, &r, &c);
    if (r < 0) return;
    Mat a = make(ctxt, t, m + off + 2, n + off + 1, nb, nb, rsrc, rsrc, 2);
    for (int j = 0; j < a.n; ++j)
        for (int i = 0; i < a.m; ++i) put(&a, i, j, j - off == z1 || j - off == z2 ? 0 : gen(t, 1, i, j));
    Mat a2 = copy(&a);
    const int ia = off + 1, k = m < n ? m : n, query = -1, ntau = a.nloc + nb;
    const size_t e = esize(t);
    double complex wq = 0, wq2 = 0; /* WORK(1) of each query (any type fits) */
    int info = -1, info2 = -1, bad = 0;
    GeqrfFn mine = t == 'd' ? pdgeqrf_ : pzgeqrf_, theirs = (GeqrfFn)real(t == 'd' ? "pdgeqrf_" : "pzgeqrf_");
    mine(&m, &n, a.v, &ia, &ia, a.desc, NULL, &wq, &query, &info);
    theirs(&m, &n, a2.v, &ia, &ia, a2.desc, NULL, &wq2, &query, &info2);
    bad |= info != 0 || info2 != 0 || creal(wq) != creal(wq2) || creal(wq) < 1;
    int lwork = (int)creal(wq2);
    void *tau = malloc(e * ntau), *tau2 = malloc(e * ntau), *work = calloc((size_t)lwork + 1, e);
    for (int i = 0; i < ntau; ++i) memcpy((char*)tau + i * e, &(double complex){-7}, e), memcpy((char*)tau2 + i * e, &(double complex){-7}, e);
    mine(&m, &n, a.v, &ia, &ia, a.desc, tau, work, &lwork, &info);
    theirs(&m, &n, a2.v, &ia, &ia, a2.desc, tau2, work, &lwork, &info2);
    bad |= info != 0 || info2 != 0 || differ(t, a.v, a2.v, bytes(&a) / e, 1e-10) ||
           differ(t, tau, tau2, (size_t)ntau, 1e-10);
    if (bad) fprintf(stderr, "[%d] %s: geqrf info %d/%d, WORK(1) %g/%g, results differ\n", me, what, info, info2,
                     creal(wq), creal(wq2));
    /* Q·C and Qᴴ·C with C (m+off+1) x 6, sub(C) m x 5 at (off, 1) (rows aligned with sub(A)) */
    OrmqrFn om = t == 'd' ? pdormqr_ : pzunmqr_, ot = (OrmqrFn)real(t == 'd' ? "pdormqr_" : "pzunmqr_");
    for (int tr = 0; tr < 2; ++tr) {
        const char* trans = tr == 0 ? "N" : t == 'd' ? "T" : "C";
        Mat cm = make(ctxt, t, m + off + 1, 6, nb, 2, rsrc, 0, 1);
        for (int j = 0; j < cm.n; ++j)
            for (int i = 0; i < cm.m; ++i) put(&cm, i, j, gen(t, 3, i, j));
        Mat c2 = copy(&cm);
        const int nc = 5, jc = 2;
        double complex oq = 0;
        om("L", trans, &m, &nc, &k, a.v, &ia, &ia, a.desc, tau, cm.v, &ia, &jc, cm.desc, &oq, &query, &info);
        int lw = (int)creal(oq);
        void* w = calloc((size_t)lw + 1, e);
        om("L", trans, &m, &nc, &k, a.v, &ia, &ia, a.desc, tau, cm.v, &ia, &jc, cm.desc, w, &lw, &info);
        ot("L", trans, &m, &nc, &k, a.v, &ia, &ia, a.desc, tau, c2.v, &ia, &jc, c2.desc, w, &lw, &info2);
        if (info != 0 || info2 != 0 || differ(t, cm.v, c2.v, bytes(&cm) / e, 1e-10)) {
            fprintf(stderr, "[%d] %s: ormqr %s info %d/%d, results differ\n", me, what, trans, info, info2);
            bad = 1;
        }
        free(cm.v), free(c2.v), free(w);
    }
    /* C·Q and C·Qᴴ (SIDE = R) with C 7 x (m+off+3) in 3 x nb blocks, sub(C) 5 x m at (2, off+1)
     * (its columns aligned with sub(A)'s rows, NB_C = MB_A), C's columns from another process
     * column than sub(A)'s rows start in */
    for (int tr = 0; tr < 2; ++tr) {
        const char* trans = tr == 0 ? "N" : t == 'd' ? "T" : "C";
        Mat cm = make(ctxt, t, 7, m + off + 3, 3, nb, 0, (rsrc + 1) % q, 1);
        for (int j = 0; j < cm.n; ++j)
            for (int i = 0; i < cm.m; ++i) put(&cm, i, j, gen(t, 4, i, j));
        Mat c2 = copy(&cm);
        const int mc = 5, ic = 2;
        double complex oq = 0;
        om("R", trans, &mc, &m, &k, a.v, &ia, &ia, a.desc, tau, cm.v, &ic, &ia, cm.desc, &oq, &query, &info);
        int lw = (int)creal(oq);
        void* w = calloc((size_t)lw + 1, e);
        om("R", trans, &mc, &m, &k, a.v, &ia, &ia, a.desc, tau, cm.v, &ic, &ia, cm.desc, w, &lw, &info);
        ot("R", trans, &mc, &m, &k, a.v, &ia, &ia, a.desc, tau, c2.v, &ic, &ia, c2.desc, w, &lw, &info2);
        if (info != 0 || info2 != 0 || differ(t, cm.v, c2.v, bytes(&cm) / e, 1e-10)) {
            fprintf(stderr, "[%d] %s: ormqr R %s info %d/%d, results differ\n", me, what, trans, info, info2);
            bad = 1;
        }
        free(cm.v), free(c2.v), free(w);
    }
    verdict(ctxt, what, bad);
    free(a.v), free(a2.v), free(tau), free(tau2), free(work);
}

/* LWORK one short of LWMIN: p?geqrf -9, p?ormqr -16 on every process; A, TAU, C untouched. */
static void qr_lwork(int ctxt) {
    Mat a = make(ctxt, 'd', 16, 12, 4, 4, 0, 0, 0), cm = make(ctxt, 'd', 16, 4, 4, 4, 0, 0, 0);
    for (int j = 0; j < 12; ++j)
        for (int i = 0; i < 16; ++i) put(&a, i, j, gen('d', 1, i, j)), put(&cm, i, j % 4, 2);
    Mat a0 = copy(&a), c0 = copy(&cm);
    int m = 16, n = 12, k = 12, nc = 4, one = 1, query = -1, info = 0, info2 = 0;
    double wq = 0, tau[16], tau0[16], work[4096];
    for (int i = 0; i < 16; ++i) tau[i] = tau0[i] = -7;
    pdgeqrf_(&m, &n, a.v, &one, &one, a.desc, tau, &wq, &query, &info);
    int lw = (int)wq - 1;
    pdgeqrf_(&m, &n, a.v, &one, &one, a.desc, tau, work, &lw, &info);
    pdormqr_("L", "T", &m, &nc, &k, a.v, &one, &one, a.desc, tau, cm.v, &one, &one, cm.desc, &wq, &query, &info2);
    lw = (int)wq - 1;
    pdormqr_("L", "T", &m, &nc, &k, a.v, &one, &one, a.desc, tau, cm.v, &one, &one, cm.desc, work, &lw, &info2);
    const int bad = info != -9 || info2 != -16 || memcmp(a.v, a0.v, bytes(&a)) != 0 ||
                    memcmp(cm.v, c0.v, bytes(&cm)) != 0 || memcmp(tau, tau0, sizeof tau) != 0;
    if (bad) fprintf(stderr, "[%d] LWORK too small: info %d and %d, expected -9 and -16\n", me, info, info2);
    verdict(ctxt, "LWORK too small: p?geqrf -9, p?ormqr -16", bad);
    free(a.v), free(a0.v), free(cm.v), free(c0.v);
}

int main(void) {
    int nprocs, row, colc, sub, tall;
    Cblacs_pinfo(&me, &nprocs);
    if (nprocs != 4) {
        if (me == 0) fprintf(stderr, "factor_checks: run on 4 processes\n");
        Cblacs_exit(0);
        return 1;
    }
    Cblacs_get(-1, 0, &row);
    Cblacs_gridinit(&row, "Row", 2, 2);
    Cblacs_get(-1, 0, &colc);
    Cblacs_gridinit(&colc, "Col", 2, 2);
    Cblacs_get(-1, 0, &sub);
    Cblacs_gridinit(&sub, "Row", 1, 3);
    Cblacs_get(-1, 0, &tall);
    Cblacs_gridinit(&tall, "Row", 3, 1);

    solve("pdgetrf_ + pdgetrs_ N, 2x2, sub(A) at a later block, RSRC=CSRC=1", row, 'd', pdgetrf_, pdgetrs_, NULL,
          'N', 37, 5, 4, 1, 1, 8);
    solve("PDGETRF + pdgetrs T, column-major 2x2", colc, 'd', PDGETRF, pdgetrs, NULL, 'T', 33, 3, 5, 0, 1, 5);
    solve("psgetrf_ + PSGETRS N, 2x2", row, 's', psgetrf_, PSGETRS, NULL, 'N', 29, 4, 3, 1, 0, 3);
    solve("pcgetrf + pcgetrs_ C, 2x2", row, 'c', pcgetrf, pcgetrs_, NULL, 'C', 26, 2, 4, 0, 0, 4);
    solve("pzgetrf_ + PZGETRS T, column-major 2x2", colc, 'z', pzgetrf_, PZGETRS, NULL, 'T', 31, 3, 4, 1, 1, 0);
    solve("pdgesv_, 1x3 sub-grid of 4 processes", sub, 'd', NULL, NULL, pdgesv_, 'N', 40, 3, 6, 0, 2, 6);
    solve("PCGESV, 2x2", row, 'c', NULL, NULL, PCGESV, 'N', 23, 2, 4, 1, 1, 4);
    solve("pzgesv, column-major 2x2", colc, 'z', NULL, NULL, pzgesv, 'N', 35, 4, 5, 0, 0, 10);

    ipiv_format("IPIV as ScaLAPACK's, 2x2, n 20, nb 3, IA = 4", row, 20, 3, 1, 3);
    ipiv_format("IPIV as ScaLAPACK's, 2x2, n 37, nb 4, IA = 1", row, 37, 4, 0, 0);
    ipiv_format("IPIV as ScaLAPACK's, column-major 2x2, n 25, nb 2, IA = 7", colc, 25, 2, 1, 6);
    across("cala's p?getrf, ScaLAPACK's p?getrs", row, pdgetrf_, (GetrsFn)real("pdgetrs_"), 35, 3, 4, 4);
    across("ScaLAPACK's p?getrf, cala's p?getrs", row, (GetrfFn)real("pdgetrf_"), pdgetrs_, 35, 3, 4, 4);

    numerical("singular: column 14 of 33 zero -> INFO 14 as ScaLAPACK", row, 33, 4, 13, 0, 14);
    numerical("singular: column 1 of 20 zero -> INFO 1 as ScaLAPACK", row, 20, 3, 0, 0, 1);
    numerical("NaN in sub(A) -> INFO as ScaLAPACK", row, 24, 4, -1, 1, -1);

    /* Illegal calls on the 2x2 grid: n = 8, A 12 x 12 in 2 x 2 blocks, B 12 x 4. */
    Mat a = make(row, 'd', 12, 12, 2, 2, 0, 0, 0), b = make(row, 'd', 12, 4, 2, 2, 0, 0, 0);
    for (int j = 0; j < 12; ++j)
        for (int i = 0; i < 12; ++i) put(&a, i, j, gen('d', 1, i, j) + (i == j ? 12 : 0)), put(&b, i, j % 4, 1);
    illegal("p?getrf IA inside a block (info -4)", row, 'f', &a, 2, &b, 1, "N", -4);
    Mat amn = make(row, 'd', 12, 12, 2, 3, 0, 0, 0);
    illegal("p?getrf MB != NB (info -606)", row, 'f', &amn, 1, &b, 1, "N", -606);
    Mat alld = make(row, 'd', 12, 12, 2, 2, 0, 0, 0);
    if (me == 3) alld.desc[8] = 3; /* LLD 3 < 6 local rows, on one process */
    illegal("p?getrf LLD too small on one process (info -609)", row, 'f', &alld, 1, &b, 1, "N", -609);
    illegal("p?getrs TRANS = 'X' (info -1)", row, 's', &a, 1, &b, 1, "X", -1);
    illegal("p?getrs IB inside a block (info -10)", row, 's', &a, 1, &b, 2, "N", -10);
    Mat bmb = make(row, 'd', 12, 4, 3, 2, 0, 0, 0);
    illegal("p?getrs B's MB != A's NB (info -1206)", row, 's', &a, 1, &bmb, 1, "N", -1206);
    Mat bctx = make(row, 'd', 12, 4, 2, 2, 0, 0, 0);
    bctx.desc[1] = colc; /* B in another context */
    illegal("p?getrs B in another context (info -1202)", row, 's', &a, 1, &bctx, 1, "N", -1202);
    illegal("p?gesv B in another context (info -1102)", row, 'v', &a, 1, &bctx, 1, "N", -1102);
    illegal("p?gesv IA inside a block (info -4)", row, 'v', &a, 2, &b, 2, "N", -4);

    qr("pdgeqrf_ + pdormqr_ vs ScaLAPACK, 2x2, sub(A) 37 x 29 at (5, 5)", row, 'd', 37, 29, 4, 1, 4, -1, -1);
    qr("pzgeqrf_ + pzunmqr_ vs ScaLAPACK, column-major 2x2, 30 x 30", colc, 'z', 30, 30, 5, 0, 0, -1, -1);
    qr("pdgeqrf_ + pdormqr_ vs ScaLAPACK, 1x3 sub-grid, 25 x 40", sub, 'd', 25, 40, 3, 0, 3, -1, -1);
    /* zero columns (ScaLAPACK's tau = 0): at a panel's first column and inside one */
    qr("pdgeqrf_ zero columns 4, 10 (tau = 0) vs ScaLAPACK, 2x2, 37 x 23", row, 'd', 37, 23, 4, 0, 4, 4, 10);
    qr("pzgeqrf_ zero columns 0, 7 (tau = 0) vs ScaLAPACK, 3x1 sub-grid", tall, 'z', 41, 17, 5, 0, 5, 0, 7);
    qr_lwork(row);

    int all = failures;
    Cigsum2d(row, "All", " ", 1, 1, &all, 1, -1, -1);
    if (me == 0) printf("factor_checks: %s\n", all == 0 ? "all checks passed" : "FAILED");
    fflush(stdout);
    Cblacs_exit(0);
    return all == 0 ? 0 : 1;
}

#include "kernels/blas.hpp"

#include "kernels/openblas.hpp"

#include <blis.h>
#include <omp.h>

#include <algorithm>
#include <climits>
#include <initializer_list>
#include <atomic>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace cala::kernels {

namespace {

trans_t blis_trans(Op op) {
    return op == Op::N ? BLIS_NO_TRANSPOSE : op == Op::T ? BLIS_TRANSPOSE : BLIS_CONJ_TRANSPOSE;
}

// BLIS's complex types are layout-compatible with std::complex.
template <class T> struct Blis;
template <> struct Blis<float> { using type = float; };
template <> struct Blis<double> { using type = double; };
template <> struct Blis<std::complex<float>> { using type = scomplex; };
template <> struct Blis<std::complex<double>> { using type = dcomplex; };
template <class T> using Blis_t = typename Blis<std::remove_const_t<T>>::type;
template <class T> auto* bl(T* p) { return reinterpret_cast<Blis_t<T>*>(const_cast<std::remove_const_t<T>*>(p)); }

thread_local int tl_threads = 0;

// A BLIS runtime with an explicit thread count: thread-safe, unlike the library-wide setting.
struct Rntm {
    rntm_t r;
    explicit Rntm(int n) {
        bli_rntm_init(&r);
        bli_rntm_set_num_threads(n, &r);
    }
};

uplo_t blis_uplo(bool lower) { return lower ? BLIS_LOWER : BLIS_UPPER; }

template <class T>
void blis_gemm_ex(trans_t ta, trans_t tb, dim_t m, dim_t n, dim_t k, T* alpha, T* a, inc_t lda, T* b, inc_t ldb,
                  T* beta, T* c, inc_t ldc, rntm_t* r) {
    if constexpr (std::is_same_v<T, float>) bli_sgemm_ex(ta, tb, m, n, k, alpha, a, 1, lda, b, 1, ldb, beta, c, 1, ldc, nullptr, r);
    else if constexpr (std::is_same_v<T, double>) bli_dgemm_ex(ta, tb, m, n, k, alpha, a, 1, lda, b, 1, ldb, beta, c, 1, ldc, nullptr, r);
    else if constexpr (std::is_same_v<T, scomplex>) bli_cgemm_ex(ta, tb, m, n, k, alpha, a, 1, lda, b, 1, ldb, beta, c, 1, ldc, nullptr, r);
    else bli_zgemm_ex(ta, tb, m, n, k, alpha, a, 1, lda, b, 1, ldb, beta, c, 1, ldc, nullptr, r);
}

template <class T>
void blis_trsm_ex(side_t s, uplo_t u, trans_t t, diag_t d, dim_t m, dim_t n, T* alpha, T* a, inc_t lda, T* b,
                  inc_t ldb, rntm_t* r) {
    if constexpr (std::is_same_v<T, float>) bli_strsm_ex(s, u, t, d, m, n, alpha, a, 1, lda, b, 1, ldb, nullptr, r);
    else if constexpr (std::is_same_v<T, double>) bli_dtrsm_ex(s, u, t, d, m, n, alpha, a, 1, lda, b, 1, ldb, nullptr, r);
    else if constexpr (std::is_same_v<T, scomplex>) bli_ctrsm_ex(s, u, t, d, m, n, alpha, a, 1, lda, b, 1, ldb, nullptr, r);
    else bli_ztrsm_ex(s, u, t, d, m, n, alpha, a, 1, lda, b, 1, ldb, nullptr, r);
}

template <class T>
void blis_trmm_ex(side_t s, uplo_t u, trans_t t, diag_t d, dim_t m, dim_t n, T* alpha, T* a, inc_t lda, T* b,
                  inc_t ldb, rntm_t* r) {
    if constexpr (std::is_same_v<T, float>) bli_strmm_ex(s, u, t, d, m, n, alpha, a, 1, lda, b, 1, ldb, nullptr, r);
    else if constexpr (std::is_same_v<T, double>) bli_dtrmm_ex(s, u, t, d, m, n, alpha, a, 1, lda, b, 1, ldb, nullptr, r);
    else if constexpr (std::is_same_v<T, scomplex>) bli_ctrmm_ex(s, u, t, d, m, n, alpha, a, 1, lda, b, 1, ldb, nullptr, r);
    else bli_ztrmm_ex(s, u, t, d, m, n, alpha, a, 1, lda, b, 1, ldb, nullptr, r);
}

template <class T, class R>
void blis_herk_ex(uplo_t u, trans_t t, dim_t n, dim_t k, R* alpha, T* a, inc_t lda, R* beta, T* c, inc_t ldc,
                  rntm_t* r) {
    if constexpr (std::is_same_v<T, float>) bli_ssyrk_ex(u, t, n, k, alpha, a, 1, lda, beta, c, 1, ldc, nullptr, r);
    else if constexpr (std::is_same_v<T, double>) bli_dsyrk_ex(u, t, n, k, alpha, a, 1, lda, beta, c, 1, ldc, nullptr, r);
    else if constexpr (std::is_same_v<T, scomplex>) bli_cherk_ex(u, t, n, k, alpha, a, 1, lda, beta, c, 1, ldc, nullptr, r);
    else bli_zherk_ex(u, t, n, k, alpha, a, 1, lda, beta, c, 1, ldc, nullptr, r);
}

// OpenBLAS for a call on `t` threads, or nullptr: BLIS runs it (openblas.hpp, "Threads"; and
// sizes beyond OpenBLAS's 32-bit integers).
const OpenBlas* openblas_for(int t, std::initializer_list<index_t> sizes) {
    const OpenBlas* ob = active_openblas();
    if (ob == nullptr) return nullptr;
    for (index_t v : sizes)
        if (v > INT_MAX) return nullptr;
    const bool serves = ob->parallel == 2 ? t == 1 || !omp_in_parallel() : t == 1 && ob->get_num_threads() == 1;
    if (!serves) return nullptr;
    count_openblas_call();
    return ob;
}

// Around a call of OpenBLAS's OpenMP build outside a parallel region: it runs
// omp_get_max_threads() threads, so that is `t` for the call.
class OmpThreads {
public:
    OmpThreads(const OpenBlas& ob, int t) {
        if (ob.parallel == 2 && !omp_in_parallel() && omp_get_max_threads() != t)
            saved_ = omp_get_max_threads(), omp_set_num_threads(t);
    }
    ~OmpThreads() {
        if (saved_ > 0) omp_set_num_threads(saved_);
    }
    OmpThreads(const OmpThreads&) = delete;
    OmpThreads& operator=(const OmpThreads&) = delete;

private:
    int saved_ = 0;
};

int ci(index_t v) { return static_cast<int>(v); }
template <class T>
int cb_trans(Op op) {
    return op == Op::N ? cblas::no_trans : op == Op::T || !is_complex_v<T> ? cblas::trans : cblas::conj_trans;
}
int cb_uplo(bool lower) { return lower ? cblas::lower : cblas::upper; }
int cb_side(bool left) { return left ? cblas::left : cblas::right; }
int cb_diag(bool unit) { return unit ? cblas::unit : cblas::non_unit; }

template <class T>
void ob_gemm(const OpenBlas& ob, Op ta, Op tb, index_t m, index_t n, index_t k, T alpha, const T* a, index_t lda,
             const T* b, index_t ldb, T beta, T* c, index_t ldc) {
    const int o = cblas::col_major, x = cb_trans<T>(ta), y = cb_trans<T>(tb);
    if constexpr (std::is_same_v<T, float>) ob.sgemm(o, x, y, ci(m), ci(n), ci(k), alpha, a, ci(lda), b, ci(ldb), beta, c, ci(ldc));
    else if constexpr (std::is_same_v<T, double>) ob.dgemm(o, x, y, ci(m), ci(n), ci(k), alpha, a, ci(lda), b, ci(ldb), beta, c, ci(ldc));
    else if constexpr (std::is_same_v<T, std::complex<float>>) ob.cgemm(o, x, y, ci(m), ci(n), ci(k), &alpha, a, ci(lda), b, ci(ldb), &beta, c, ci(ldc));
    else ob.zgemm(o, x, y, ci(m), ci(n), ci(k), &alpha, a, ci(lda), b, ci(ldb), &beta, c, ci(ldc));
}

template <class T>
void ob_trsm(const OpenBlas& ob, bool left, bool lower, Op op, bool unit, index_t m, index_t n, T alpha, const T* a,
             index_t lda, T* b, index_t ldb) {
    const int o = cblas::col_major, sd = cb_side(left), u = cb_uplo(lower), t = cb_trans<T>(op), d = cb_diag(unit);
    if constexpr (std::is_same_v<T, float>) ob.strsm(o, sd, u, t, d, ci(m), ci(n), alpha, a, ci(lda), b, ci(ldb));
    else if constexpr (std::is_same_v<T, double>) ob.dtrsm(o, sd, u, t, d, ci(m), ci(n), alpha, a, ci(lda), b, ci(ldb));
    else if constexpr (std::is_same_v<T, std::complex<float>>) ob.ctrsm(o, sd, u, t, d, ci(m), ci(n), &alpha, a, ci(lda), b, ci(ldb));
    else ob.ztrsm(o, sd, u, t, d, ci(m), ci(n), &alpha, a, ci(lda), b, ci(ldb));
}

template <class T>
void ob_trmm(const OpenBlas& ob, bool left, bool lower, Op op, bool unit, index_t m, index_t n, T alpha, const T* a,
             index_t lda, T* b, index_t ldb) {
    const int o = cblas::col_major, sd = cb_side(left), u = cb_uplo(lower), t = cb_trans<T>(op), d = cb_diag(unit);
    if constexpr (std::is_same_v<T, float>) ob.strmm(o, sd, u, t, d, ci(m), ci(n), alpha, a, ci(lda), b, ci(ldb));
    else if constexpr (std::is_same_v<T, double>) ob.dtrmm(o, sd, u, t, d, ci(m), ci(n), alpha, a, ci(lda), b, ci(ldb));
    else if constexpr (std::is_same_v<T, std::complex<float>>) ob.ctrmm(o, sd, u, t, d, ci(m), ci(n), &alpha, a, ci(lda), b, ci(ldb));
    else ob.ztrmm(o, sd, u, t, d, ci(m), ci(n), &alpha, a, ci(lda), b, ci(ldb));
}

// syrk for real types, herk for complex ones (op N or C).
template <class T>
void ob_herk(const OpenBlas& ob, bool lower, Op op, index_t n, index_t k, real_t<T> alpha, const T* a, index_t lda,
             real_t<T> beta, T* c, index_t ldc) {
    const int o = cblas::col_major, u = cb_uplo(lower), t = cb_trans<T>(op);
    if constexpr (std::is_same_v<T, float>) ob.ssyrk(o, u, t, ci(n), ci(k), alpha, a, ci(lda), beta, c, ci(ldc));
    else if constexpr (std::is_same_v<T, double>) ob.dsyrk(o, u, t, ci(n), ci(k), alpha, a, ci(lda), beta, c, ci(ldc));
    else if constexpr (std::is_same_v<T, std::complex<float>>) ob.cherk(o, u, t, ci(n), ci(k), alpha, a, ci(lda), beta, c, ci(ldc));
    else ob.zherk(o, u, t, ci(n), ci(k), alpha, a, ci(lda), beta, c, ci(ldc));
}

}  // namespace

extern "C" {
void spotrf_(const char*, const int*, float*, const int*, int*);
void dpotrf_(const char*, const int*, double*, const int*, int*);
void cpotrf_(const char*, const int*, std::complex<float>*, const int*, int*);
void zpotrf_(const char*, const int*, std::complex<double>*, const int*, int*);
}

namespace {

// Rows of C per BLIS call in gemm (blas.hpp: gemm_row_block).
std::atomic<index_t> g_row_block{-1};

}  // namespace

index_t gemm_row_block() {
    index_t rows = g_row_block.load(std::memory_order_relaxed);
    if (rows < 0) {
        const char* s = std::getenv("CALA_GEMM_ROWS");
        rows = s != nullptr && *s != '\0' ? std::max<index_t>(0, std::atol(s)) : index_t{2048};
        g_row_block.store(rows, std::memory_order_relaxed);
    }
    return rows;
}

index_t set_gemm_row_block(index_t rows) {
    const index_t before = gemm_row_block();
    g_row_block.store(std::max<index_t>(0, rows), std::memory_order_relaxed);
    return before;
}

template <class T>
void gemm(Op op_a, Op op_b, index_t m, index_t n, index_t k, T alpha, const T* a, index_t lda, const T* b,
          index_t ldb, T beta, T* c, index_t ldc) {
    if (m == 0 || n == 0) return;
    if (k == 0 || alpha == T(0)) {
        scale(m, n, beta, c, ldc);
        return;
    }
    if (beta == T(0)) scale(m, n, T(0), c, ldc);  // BLAS semantics: NaN in c must not leak
    // Threads pay off only on products large enough to split; tiny ones stay on one core.
    const double mnk = double(m) * double(n) * double(k);
    const bool tiny = mnk < 64.0 * 64.0 * 64.0;
    const int t = tiny ? 1 : threads();
    if (const OpenBlas* ob = openblas_for(t, {m, n, k, lda, ldb, ldc})) {  // one call: it packs as it likes
        OmpThreads scope(*ob, t);
        ob_gemm(*ob, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    Rntm r(t);
    // BLIS 0.9 sends a product with m or n < 256 or k < 220 (zen3's thresholds) down its
    // small/unpacked path, which runs 2048 x 256 x 64 and 2048 x 64 x 256 at half the packed
    // rate (one core, zen3 kernels: 15-16 against 31-38 GF/s; nb = 64 updates are such shapes).
    // It wins only below about 64^3 multiply-adds (64^3: 21 against 20 GF/s; 128^3: 21 against 38).
    if (mnk >= 96.0 * 96.0 * 96.0) bli_rntm_disable_l3_sup(&r.r);
    // Calls of at most gemm_row_block() rows, of equal height rounded up to 16 (a multiple of
    // every BLIS micro-tile height): op(A)'s rows r0.. start at a + r0 (N) or a + r0·lda (T, C).
    const index_t block = gemm_row_block();
    const index_t parts = block > 0 && m > block ? (m + block - 1) / block : 1;
    const index_t rows = parts == 1 ? m : ((m + parts - 1) / parts + 15) / 16 * 16;
    for (index_t r0 = 0; r0 < m; r0 += rows) {
        const index_t h = std::min(rows, m - r0);
        const T* ar = op_a == Op::N ? a + r0 : a + r0 * lda;
        blis_gemm_ex(blis_trans(op_a), blis_trans(op_b), h, n, k, bl(&alpha), bl(ar), lda, bl(b), ldb, bl(&beta),
                     bl(c + r0), ldc, &r.r);
    }
}

void set_threads(int n) { bli_thread_set_num_threads(n); }

int threads() noexcept { return tl_threads > 0 ? tl_threads : omp_get_max_threads(); }

ThreadScope::ThreadScope(int n) noexcept : saved_(tl_threads) { tl_threads = n < 1 ? 1 : n; }
ThreadScope::~ThreadScope() { tl_threads = saved_; }

// trsm (solve) or trmm: one call on OpenBLAS or BLIS, one thread below 64³ multiply-adds.
template <class T>
void triangular(bool solve, bool left, bool lower, Op op_a, bool unit, index_t m, index_t n, T alpha, const T* a,
                index_t lda, T* b, index_t ldb) {
    if (m == 0 || n == 0) return;
    const int t = double(m) * double(n) * double(left ? m : n) < 64.0 * 64.0 * 64.0 ? 1 : threads();
    if (const OpenBlas* ob = openblas_for(t, {m, n, lda, ldb})) {
        OmpThreads scope(*ob, t);
        (solve ? ob_trsm<T> : ob_trmm<T>)(*ob, left, lower, op_a, unit, m, n, alpha, a, lda, b, ldb);
        return;
    }
    Rntm r(t);
    (solve ? blis_trsm_ex<Blis_t<T>> : blis_trmm_ex<Blis_t<T>>)(
        left ? BLIS_LEFT : BLIS_RIGHT, blis_uplo(lower), blis_trans(op_a), unit ? BLIS_UNIT_DIAG : BLIS_NONUNIT_DIAG, m,
        n, bl(&alpha), bl(a), lda, bl(b), ldb, &r.r);
}

template <class T>
void trsm(bool left, bool lower, Op op_a, bool unit, index_t m, index_t n, T alpha, const T* a, index_t lda,
          T* b, index_t ldb) {
    triangular(true, left, lower, op_a, unit, m, n, alpha, a, lda, b, ldb);
}

template <class T>
void trmm(bool left, bool lower, Op op_a, bool unit, index_t m, index_t n, T alpha, const T* a, index_t lda,
          T* b, index_t ldb) {
    triangular(false, left, lower, op_a, unit, m, n, alpha, a, lda, b, ldb);
}

template <class T>
void herk(bool lower, Op op_a, index_t n, index_t k, real_t<T> alpha, const T* a, index_t lda, real_t<T> beta,
          T* c, index_t ldc) {
    if (n == 0) return;
    if (k == 0 || alpha == real_t<T>(0)) {
        if (beta == real_t<T>(1)) return;  // BLAS ?herk: nothing to do, the diagonal as it is
        // Only the referenced triangle is scaled; the diagonal is made real (BLAS ?herk).
        for (index_t j = 0; j < n; ++j) {
            const index_t i0 = lower ? j : 0, i1 = lower ? n : j + 1;
            for (index_t i = i0; i < i1; ++i) c[i + j * ldc] = beta == real_t<T>(0) ? T(0) : T(beta) * c[i + j * ldc];
            if constexpr (is_complex_v<T>) c[j + j * ldc] = T(std::real(c[j + j * ldc]));
        }
        return;
    }
    if (beta == real_t<T>(0)) {
        for (index_t j = 0; j < n; ++j) {
            const index_t i0 = lower ? j : 0, i1 = lower ? n : j + 1;
            std::fill(c + i0 + j * ldc, c + i1 + j * ldc, T(0));
        }
    }
    const int t = double(n) * double(n) * double(k) < 64.0 * 64.0 * 64.0 ? 1 : threads();
    if (const OpenBlas* ob = openblas_for(t, {n, k, lda, ldc})) {
        OmpThreads scope(*ob, t);
        ob_herk(*ob, lower, op_a, n, k, alpha, a, lda, beta, c, ldc);
        return;
    }
    Rntm r(t);
    using B = typename Blis<T>::type;
    // The real-arithmetic variant for real types is syrk, which takes a B-typed alpha.
    if constexpr (is_complex_v<T>) {
        real_t<T> al = alpha, be = beta;
        blis_herk_ex<B, real_t<T>>(blis_uplo(lower), op_a == Op::N ? BLIS_NO_TRANSPOSE : BLIS_CONJ_TRANSPOSE, n, k,
                                   &al, bl(a), lda, &be, bl(c), ldc, &r.r);
    } else {
        T al = alpha, be = beta;
        blis_herk_ex<B, T>(blis_uplo(lower), op_a == Op::N ? BLIS_NO_TRANSPOSE : BLIS_TRANSPOSE, n, k, &al, bl(a),
                           lda, &be, bl(c), ldc, &r.r);
    }
}

template <class T>
void syrk(bool lower, Op op_a, index_t n, index_t k, T alpha, const T* a, index_t lda, T beta, T* c, index_t ldc) {
    if constexpr (!is_complex_v<T>) {
        herk<T>(lower, op_a == Op::N ? Op::N : Op::C, n, k, alpha, a, lda, beta, c, ldc);
    } else {
        if (n == 0 || (beta == T(1) && (k == 0 || alpha == T(0)))) return;
        // Column panels of width w: the panel's rows of the triangle (and the few above or
        // below its diagonal block) by one gemm into a slot, then the triangle's part into c.
        // Flops: the triangle's plus half a w x w block per panel; memory: n x w.
        const bool prod = k > 0 && alpha != T(0);
        const index_t w = std::min<index_t>(n, 256);
        std::vector<T> t(prod ? static_cast<std::size_t>(n * w) : 0);
        const Op oa = op_a == Op::N ? Op::N : Op::T, ob = op_a == Op::N ? Op::T : Op::N;
        for (index_t j0 = 0; j0 < n; j0 += w) {
            const index_t jw = std::min(w, n - j0);
            const index_t r0 = lower ? j0 : 0, r1 = lower ? n : j0 + jw, rows = r1 - r0;
            if (prod) {
                const T* ar = op_a == Op::N ? a + r0 : a + r0 * lda;  // op(a)'s rows r0..r1
                const T* bc = op_a == Op::N ? a + j0 : a + j0 * lda;  // op(a)ᵀ's columns j0..
                gemm<T>(oa, ob, rows, jw, k, alpha, ar, lda, bc, lda, T(0), t.data(), rows);
            }
            for (index_t j = j0; j < j0 + jw; ++j)
                for (index_t i = lower ? j : 0; i < (lower ? n : j + 1); ++i) {
                    const T v = prod ? t[static_cast<std::size_t>((i - r0) + (j - j0) * rows)] : T(0);
                    c[i + j * ldc] = beta == T(0) ? v : v + beta * c[i + j * ldc];
                }
        }
    }
}

namespace {

// Unblocked lower Cholesky of a small tile (in cache): column by column.
template <class T>
index_t potrf_lower_small(index_t n, T* a, index_t lda) {
    using R = real_t<T>;
    for (index_t j = 0; j < n; ++j) {
        R d = std::real(a[j + j * lda]);
        for (index_t k = 0; k < j; ++k) d -= std::norm(a[j + k * lda]);
        if (!(d > R(0))) {  // also catches NaN
            a[j + j * lda] = T(d);
            return j + 1;
        }
        const R s = std::sqrt(d);
        a[j + j * lda] = T(s);
        for (index_t k = 0; k < j; ++k) {
            const T ljk = conj_if(a[j + k * lda], true);
            for (index_t i = j + 1; i < n; ++i) a[i + j * lda] -= a[i + k * lda] * ljk;
        }
        for (index_t i = j + 1; i < n; ++i) a[i + j * lda] /= s;
    }
    return 0;
}

// Recursive lower Cholesky: most of the work in trsm and herk on halves (LAPACK's dpotrf
// reaches BLIS through the BLAS interface and runs a few GFLOP/s on 256-tiles).
template <class T>
index_t potrf_lower_rec(index_t n, T* a, index_t lda) {
    if (n <= 32) return potrf_lower_small(n, a, lda);
    const index_t n1 = (n / 2 + 7) / 8 * 8, n2 = n - n1;
    if (const index_t info = potrf_lower_rec(n1, a, lda)) return info;
    T* a21 = a + n1;
    T* a22 = a + n1 + n1 * lda;
    trsm(false, true, Op::C, false, n2, n1, T(1), a, lda, a21, lda);
    herk(true, Op::N, n2, n1, real_t<T>(-1), a21, lda, real_t<T>(1), a22, lda);
    if (const index_t info = potrf_lower_rec(n2, a22, lda)) return info + n1;
    return 0;
}

}  // namespace

template <class T>
index_t potrf(bool lower, index_t n, T* a, index_t lda) {
    if (n == 0) return 0;
    if (lower) return potrf_lower_rec(n, a, lda);
    // LAPACK reaches BLIS through the BLAS interface, which uses the library-wide thread count.
    bli_thread_set_num_threads(threads());
    const char u = 'U';
    const int nn = static_cast<int>(n), ld = static_cast<int>(lda);
    int info = 0;
    if constexpr (std::is_same_v<T, float>) spotrf_(&u, &nn, a, &ld, &info);
    else if constexpr (std::is_same_v<T, double>) dpotrf_(&u, &nn, a, &ld, &info);
    else if constexpr (std::is_same_v<T, std::complex<float>>) cpotrf_(&u, &nn, a, &ld, &info);
    else zpotrf_(&u, &nn, a, &ld, &info);
    return info;
}

template <class T>
void inverse_lower(index_t n, const T* l, index_t ldl, T* inv) {
    std::fill(inv, inv + n * n, T(0));
    for (index_t i = 0; i < n; ++i) inv[i + i * n] = T(1);
    trsm(true, true, Op::N, false, n, n, T(1), l, ldl, inv, n);
}

template <class T>
void trmm_right_lower_ch(index_t m, index_t n, const T* inv, T* b, index_t ldb) {
    trmm(false, true, Op::C, false, m, n, T(1), inv, n, b, ldb);
}

template <class T>
void trsm_right_lower_ch(index_t m, index_t n, const T* l, index_t ldl, T* b, index_t ldb) {
    if (m == 0 || n == 0) return;
    if (n < 64 || m < 2 * n) {
        trsm(false, true, Op::C, false, m, n, T(1), l, ldl, b, ldb);
        return;
    }
    // X := B·L⁻ᴴ as an in-place trmm with L⁻¹: BLIS's right-side trsm runs at about 40% of its
    // GEMM rate on tall panels, the trmm at about 75%.
    std::vector<T> inv(static_cast<std::size_t>(n * n));
    inverse_lower(n, l, ldl, inv.data());
    trmm_right_lower_ch(m, n, inv.data(), b, ldb);
}

template <class T>
void scale(index_t m, index_t n, T beta, T* c, index_t ldc) {
    if (beta == T(1)) return;
#pragma omp parallel for schedule(static) if (m * n > 65536)
    for (index_t j = 0; j < n; ++j) {
        T* col = c + j * ldc;
        if (beta == T(0)) std::fill(col, col + m, T(0));
        else for (index_t i = 0; i < m; ++i) col[i] *= beta;
    }
}

template <class T>
void add(Op op, index_t m, index_t n, const T* x, index_t ldx, T beta, T* c, index_t ldc) {
    const bool cj = op == Op::C;
    // Element (i, j) of op(x): x(i, j) or x(j, i), conjugated for C.
    const index_t si = op == Op::N ? 1 : ldx, sj = op == Op::N ? ldx : 1;
#pragma omp parallel for schedule(static) if (m * n > 65536)
    for (index_t j = 0; j < n; ++j) {
        T* col = c + j * ldc;
        const T* xc = x + j * sj;
        if (beta == T(0)) for (index_t i = 0; i < m; ++i) col[i] = conj_if(xc[i * si], cj);
        else for (index_t i = 0; i < m; ++i) col[i] = conj_if(xc[i * si], cj) + beta * col[i];
    }
}

template <class T>
void copy(Op op, index_t m, index_t n, const T* a, index_t lda, T* b, index_t ldb) {
    if (op == Op::N) {
#pragma omp parallel for schedule(static) if (m * n > 65536)
        for (index_t j = 0; j < n; ++j) std::copy(a + j * lda, a + j * lda + m, b + j * ldb);
        return;
    }
    // Transpose in 32 x 32 tiles: b(j, i) = op(a(i, j)).
    const bool cj = op == Op::C;
    constexpr index_t t = 32;
#pragma omp parallel for collapse(2) schedule(static) if (m * n > 65536)
    for (index_t j0 = 0; j0 < n; j0 += t)
        for (index_t i0 = 0; i0 < m; i0 += t)
            for (index_t i = i0; i < std::min(m, i0 + t); ++i)
                for (index_t j = j0; j < std::min(n, j0 + t); ++j) b[j + i * ldb] = conj_if(a[i + j * lda], cj);
}

#define CALA_INST(T)                                                                                         \
    template void gemm<T>(Op, Op, index_t, index_t, index_t, T, const T*, index_t, const T*, index_t, T, T*,   \
                          index_t);                                                                          \
    template void scale<T>(index_t, index_t, T, T*, index_t);                                                 \
    template void add<T>(Op, index_t, index_t, const T*, index_t, T, T*, index_t);                                \
    template void copy<T>(Op, index_t, index_t, const T*, index_t, T*, index_t);                              \
    template void trsm<T>(bool, bool, Op, bool, index_t, index_t, T, const T*, index_t, T*, index_t);           \
    template void trmm<T>(bool, bool, Op, bool, index_t, index_t, T, const T*, index_t, T*, index_t);           \
    template void herk<T>(bool, Op, index_t, index_t, real_t<T>, const T*, index_t, real_t<T>, T*, index_t);     \
    template void syrk<T>(bool, Op, index_t, index_t, T, const T*, index_t, T, T*, index_t);                     \
    template index_t potrf<T>(bool, index_t, T*, index_t);                                                    \
    template void trsm_right_lower_ch<T>(index_t, index_t, const T*, index_t, T*, index_t);                           \
    template void inverse_lower<T>(index_t, const T*, index_t, T*);                                                   \
    template void trmm_right_lower_ch<T>(index_t, index_t, const T*, T*, index_t);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::kernels

#pragma once
// Host LAPACK kernels of Householder QR (cala::geqrf, cala::ormqr; the reference in tests/qr).
// Column-major, 64-bit sizes; LAPACK underneath (its BLAS calls reach BLIS with the calling
// thread's kernels::threads()). Nothing above this layer names LAPACK.

#include <string>

#include "cala/types.hpp"

namespace cala::kernels {

/// QR of the m x n tile a (LAPACK ?geqrf): R on and above the diagonal, the Householder vectors
/// below it (unit diagonal implicit), tau[0, min(m, n)).
template <class T>
void geqrf(index_t m, index_t n, T* a, index_t lda, T* tau);

/// Recursive QR of the m x n tile a, m >= n (LAPACK ?geqrt3's recursion, level 3 throughout, its
/// products through cala's gemm and trmm; LAPACK's ?larfg on single columns): R and the
/// Householder vectors as geqrf, and t (n x n, ld ldt) the triangular factor of the block
/// reflector (its diagonal is geqrf's tau); the strict lower triangle of t is not set.
template <class T>
void geqrt3(index_t m, index_t n, T* a, index_t lda, T* t, index_t ldt);

/// How this process factors a tall panel with its T: LAPACK's recursive ?geqrt3, or ?geqrf and T
/// from the Gram matrix (herk + larft_gram). Measured once a process on a 2048 x 64 double panel
/// (each way best of 3, with V made explicit as a panel needs it), the times kept in the machine's
/// cache under the BLAS library; ?geqrt3 where it is faster by 3%. CALA_QR_PANEL=geqrt3 or geqrf
/// forces one (another value is ignored: measured).
struct PanelQrChoice {
    bool geqrt3 = false;
    double geqrf_seconds = 0, geqrt3_seconds = 0;  ///< the measurement (0 where forced)
    std::string reason;                            ///< one line, for cala-bench
};
const PanelQrChoice& panel_qr_choice();

/// t := the k x k upper triangular factor of the block reflector H = H_0···H_{k-1} = I − V·t·Vᴴ
/// (LAPACK ?larft, forward, columnwise); v is n x k (unit lower trapezoidal, the part above
/// the diagonal not read).
template <class T>
void larft(index_t n, index_t k, const T* v, index_t ldv, const T* tau, T* t, index_t ldt);

/// c := op(Q)·c (left) or c·op(Q) (right), Q = H_0···H_{k-1} of geqrf in a (LAPACK ?ormqr /
/// ?unmqr; op T is read as C for complex types); c is m x n.
template <class T>
void ormqr(bool left, Op op, index_t m, index_t n, index_t k, const T* a, index_t lda, const T* tau, T* c,
           index_t ldc);

/// a := the first n columns of Q = H_0···H_{k-1} of geqrf (LAPACK ?orgqr / ?ungqr); a is m x n.
template <class T>
void ungqr(index_t m, index_t n, index_t k, T* a, index_t lda, const T* tau);

/// The k x k triangular factor t of H_0···H_{k-1} = I − V·t·Vᴴ from the Gram matrix g = VᴴV
/// (k x k, only its strict upper triangle read) and tau: column i is −tau_i·t(0:i, 0:i)·g(0:i, i)
/// (LAPACK's larft recurrence with the inner products given). The strict lower triangle of t
/// is set to zero.
template <class T>
void larft_gram(index_t k, const T* g, index_t ldg, const T* tau, T* t, index_t ldt);

}  // namespace cala::kernels

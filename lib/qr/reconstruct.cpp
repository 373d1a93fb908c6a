// Householder vectors from TSQR's Q (Ballard, Demmel, Grigori, Jacquelin, Nguyen and Solomonik,
// "Reconstructing Householder vectors from tall-skinny QR", IPDPS 2014), on the diagonal block.
//
// With H = I − V·T·Vᴴ and H·[I; 0] = Q·Sᴴ (S diagonal, |s_i| = 1): Q − [S; 0] = V·(−T·V1ᴴ·S),
// so the LU factorization without pivoting of Q − [S; 0] gives V = L and U = −T·V1ᴴ·S, i.e.
// T = −U·S·V1⁻ᴴ (S = S⁻¹ for S = diag(±1)), and A = Q·R = (Q·Sᴴ)·(S·R) = H·[S·R; 0]. The sign
// s_i = −sign(Re a_ii) of the current pivot a_ii makes |a_ii − s_i| >= 1 (no pivoting needed)
// and is the sign LAPACK's larfg picks (beta = −sign(Re alpha)·‖x‖), so V, T, tau and S·R are
// LAPACK's own up to rounding.

#include <cmath>

#include "kernels/blas.hpp"
#include "qr/panel.hpp"

namespace cala::detail {

template <class T>
void reconstruct_top(index_t w, const T* q1, index_t ldq, T* lu, T* t, std::vector<real_t<T>>& s) {
    using R = real_t<T>;
    s.assign(static_cast<std::size_t>(w), R(1));
    kernels::copy(Op::N, w, w, q1, ldq, lu, w);
    for (index_t i = 0; i < w; ++i) {
        T& d = lu[i + i * w];
        const R si = std::real(d) >= R(0) ? R(-1) : R(1);
        s[i] = si;
        d -= T(si);
        const T inv = T(1) / d;
        for (index_t k = i + 1; k < w; ++k) lu[k + i * w] *= inv;
        for (index_t j = i + 1; j < w; ++j) {
            const T uij = lu[i + j * w];
            if (uij == T(0)) continue;
            for (index_t k = i + 1; k < w; ++k) lu[k + j * w] -= lu[k + i * w] * uij;
        }
    }
    // t := −U·S (upper), then t := t·L1⁻ᴴ.
    for (index_t j = 0; j < w; ++j)
        for (index_t i = 0; i < w; ++i) t[i + j * w] = i <= j ? -lu[i + j * w] * T(s[j]) : T(0);
    kernels::trsm(false, true, Op::C, true, w, w, T(1), lu, w, t, w);
}

#define CALA_INST(T) template void reconstruct_top<T>(index_t, const T*, index_t, T*, T*, std::vector<real_t<T>>&);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::detail

#pragma once
// The panel factorization of cala::geqrf on the process column that holds panel l
// (geometry.hpp): LAPACK geqrf when one process row holds the panel, else TSQR down the column
// and the Householder vectors rebuilt from its Q (reconstruct.cpp).

#include <vector>

#include "cala/comm.hpp"
#include "qr/geometry.hpp"

namespace cala::detail {

/// Factors panel l on process row r of its column; every rank of the column calls it (in the
/// same order). `pa` is the first local panel row (ld lda). On return the panel rows hold R and
/// V in LAPACK's format; `v` (panel_rows x w, ld ldv) a copy of V with its unit diagonal and the
/// zeros above it explicit; `t` (w x w, ld w) the triangular factor (I − V·T·Vᴴ = H_0···H_{w-1})
/// on every rank that holds panel rows; `tau` its diagonal. `ws`: qr_work(...).tsqr elements.
/// Traffic (np > 1): w zero-column flags summed down the column; the tree's messages both ways
/// (or, with an exactly zero column, the rows gathered on the root and sent back: LAPACK's tau = 0);
/// one broadcast of 2w² words down the column.
template <class T>
void factor_panel(const QrGeom& g, index_t l, int r, const Comm& col, T* pa, index_t lda, T* v, index_t ldv, T* t,
                  T* tau, T* ws);

/// Rebuilds Householder vectors from the first w rows q1 (w x w, ld ldq) of an explicit Q with
/// orthonormal columns (Ballard et al. 2014): the LU without pivoting of Q − S, S = diag(±1)
/// chosen as the elimination goes (s_i = −sign(Re of the pivot)), into lu (w x w, ld w: L1
/// unit lower below the diagonal, U on and above it); t := −U·S·L1⁻ᴴ (ld w), s := S. The rest of
/// V is Q2·U⁻¹ (done by the caller); R := S·R.
template <class T>
void reconstruct_top(index_t w, const T* q1, index_t ldq, T* lu, T* t, std::vector<real_t<T>>& s);

}  // namespace cala::detail

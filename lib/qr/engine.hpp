#pragma once
// The right-looking panel loop of cala::geqrf on one rank (lib/qr/engine.cpp) and the
// applications of its Q (engine.cpp: Left, ormqr_right.cpp: Right); lib/qr/qr.cpp checks the
// arguments and distributes tau.

#include "cala/comm.hpp"
#include "qr/geometry.hpp"

namespace cala::detail {

/// Factors the local share `a` (ld lda) of the matrix laid out by g on process (r, c): R and V
/// in LAPACK's format; tau[c0(l) .. c0(l) + w(l)) written on the root (ro(l), co(l)) of each
/// panel, left alone elsewhere; `delay` as QrOptions::delay (qr_delay). Traffic follows model.cpp
/// exactly.
template <class T>
void geqrf_engine(const QrGeom& g, int r, int c, const Comm& row, const Comm& col, T* a, index_t lda, T* tau,
                  int lookahead, int delay);

/// C := op(Q)·C for the reflectors of g (A's share `a`, ld lda; tau on every rank) and C's share
/// (ld ldc, nc local columns) with the rows of A. Traffic follows model.cpp exactly.
template <class T>
void ormqr_left_engine(const QrGeom& g, int r, int c, const Comm& row, const Comm& col, Op op, const T* a,
                       index_t lda, const T* tau, T* cm, index_t ldc, index_t nc);

/// C := C·op(Q) for the reflectors of g (A's share `a`, ld lda; tau on every rank) and C's share
/// (ld ldc, mc local rows) whose columns carry A's row indices, distributed by `ccols`
/// (ormqr_right.cpp). Traffic follows model.cpp exactly.
template <class T>
void ormqr_right_engine(const QrGeom& g, const Dist1D& ccols, int r, int c, const Comm& row, const Comm& col, Op op,
                        const T* a, index_t lda, const T* tau, T* cm, index_t ldc, index_t mc);

}  // namespace cala::detail

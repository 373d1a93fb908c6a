#pragma once
// Internal: the local block columns of a triangle of a square layout with nb x nb tiles, as the
// resident herk updates them (lib/resident/syrk.cpp) and the shim copies them to and from a
// device (lib/scalapack/resident_potrf.cpp).
//
//   one local block column (w columns, global block J), Lower (Upper mirrors it, rows from 0):
//     local rows 0 .. band_begin          above the diagonal tile (not in the triangle)
//                band_begin .. band_end   the rows of block J: the diagonal tile (empty where
//                                         this process row does not hold block J)
//                band_end .. m_loc        below it: whole rows of the triangle

#include <algorithm>
#include <vector>

#include "cala/cholesky.hpp"
#include "cala/layout.hpp"

namespace cala::detail {

/// Local columns [col, col + cols); local rows [band_begin, band_end) hold its global columns'
/// indices; [row_begin, row_end) are the rows the triangle's columns reach (Lower: band_begin to
/// the end; Upper: 0 to band_end).
struct TrianglePiece {
    index_t col, cols, band_begin, band_end, row_begin, row_end;
};

inline std::vector<TrianglePiece> triangle_pieces(Uplo uplo, const BlockCyclic& a, int row, int col) {
    const index_t n_loc = a.cols.local_size(col), m_loc = a.rows.local_size(row);
    std::vector<TrianglePiece> out;
    for (index_t jl = 0; jl < n_loc;) {  // one local block column at a time
        const index_t j0 = a.cols.to_global(jl, col), b = a.cols.block_of(j0);
        const index_t w = std::min(a.cols.block_start(b) + a.cols.block_size(b) - j0, n_loc - jl);
        TrianglePiece t{jl, w, a.rows.local_before(j0, row), a.rows.local_before(j0 + w, row), 0, 0};
        t.row_begin = uplo == Uplo::Lower ? t.band_begin : 0;
        t.row_end = uplo == Uplo::Lower ? m_loc : t.band_end;
        out.push_back(t);
        jl += w;
    }
    return out;
}

/// The local elements the pieces cover.
inline index_t triangle_elements(Uplo uplo, const BlockCyclic& a, int row, int col) {
    index_t count = 0;
    for (const TrianglePiece& t : triangle_pieces(uplo, a, row, col)) count += (t.row_end - t.row_begin) * t.cols;
    return count;
}

}  // namespace cala::detail

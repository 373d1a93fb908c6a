// p?potrf_ on a GPU node: the resident run (resident_route.hpp), and the triangle's copies it and
// p?syrk_/p?herk_'s resident run share.
//
// ppotrf.cpp -> run_resident_potrf (this) -> ResidentMatrix (device memory) + Device copies of the
// triangle's local pieces -> cala::potrf(Uplo, ResidentMatrix&) (lib/resident: one Device::potrf
// on a 1 x 1 grid, else the resident 2D Cholesky)
//
// Per local block column of sub(A) (w columns), Lower (Upper mirrors it, rows from 0):
//
//   local rows   0 ..  band_begin       not copied (the upper triangle)
//                band_begin .. band_end  the diagonal band: copied up whole; back through a w x w
//                                        host slot, only the entries on or below the diagonal
//                band_end .. m_loc       copied up and back whole, in place
//
// so the caller's entries outside the factored triangle are never written.

#include <algorithm>
#include <complex>
#include <vector>

#include "device/device.hpp"
#include "scalapack/resident_route.hpp"

namespace cala::scalapack {

template <class T>
void triangle_to_device(Uplo uplo, const MatrixRef<T>& a, const ResidentMatrix<T>& ra) {
    device::Device& d = *ra.device().get();
    const index_t ld = ra.ld(), lda = a.ld();
    for (const detail::TrianglePiece& t : detail::triangle_pieces(uplo, a.layout(), a.grid().row(), a.grid().col()))
        if (t.row_end > t.row_begin)
            d.copy_to_device({ra.data() + t.row_begin + t.col * ld, ld, a.data() + t.row_begin + t.col * lda, lda,
                              t.row_end - t.row_begin, t.cols, sizeof(T)});
    d.synchronize();
}

template <class T>
void triangle_to_host(Uplo uplo, const ResidentMatrix<T>& ra, const MatrixRef<T>& a) {
    // The rows off the band in place, the band through a host slot.
    device::Device& d = *ra.device().get();
    const BlockCyclic& l = a.layout();
    const int row = a.grid().row(), col = a.grid().col();
    const index_t ld = ra.ld(), lda = a.ld();
    const bool lower = uplo == Uplo::Lower;
    std::vector<T> band;
    for (const detail::TrianglePiece& t : detail::triangle_pieces(uplo, l, row, col)) {
        const index_t r0 = lower ? t.band_end : t.row_begin, r1 = lower ? t.row_end : t.band_begin;
        if (r1 > r0)
            d.copy_to_host({a.data() + r0 + t.col * lda, lda, ra.data() + r0 + t.col * ld, ld, r1 - r0, t.cols,
                            sizeof(T)});
        const index_t nb = t.band_end - t.band_begin;
        if (nb == 0) continue;
        band.resize(static_cast<std::size_t>(nb * t.cols));
        d.copy_to_host({band.data(), nb, ra.data() + t.band_begin + t.col * ld, ld, nb, t.cols, sizeof(T)});
        d.synchronize();
        for (index_t j = 0; j < t.cols; ++j) {
            const index_t gj = l.cols.to_global(t.col + j, col);
            for (index_t i = 0; i < nb; ++i) {
                const index_t gi = l.rows.to_global(t.band_begin + i, row);
                if (lower ? gi >= gj : gi <= gj) a.data()[t.band_begin + i + (t.col + j) * lda] = band[i + j * nb];
            }
        }
    }
    d.synchronize();
}

template <class T>
index_t run_resident_potrf(const ResidentDevice& dev, Uplo uplo, const MatrixRef<T>& a) {
    ResidentMatrix<T> ra(a.grid(), a.layout(), dev);  // collective: a device too small fails on every rank here
    triangle_to_device(uplo, a, ra);
    const index_t info = potrf(uplo, ra, ResidentPotrfOptions{});
    triangle_to_host(uplo, ra, a);
    return info;
}

#define CALA_INST(T)                                                                            \
    template void triangle_to_device<T>(Uplo, const MatrixRef<T>&, const ResidentMatrix<T>&);     \
    template void triangle_to_host<T>(Uplo, const ResidentMatrix<T>&, const MatrixRef<T>&);       \
    template index_t run_resident_potrf<T>(const ResidentDevice&, Uplo, const MatrixRef<T>&);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::scalapack

#pragma once
// The ScaLAPACK reference of cala-bench: PBLAS p?gemm and ScaLAPACK p?potrf/p?potrs run
// directly on cala's local storage.
//
// cala-bench gemm -> scalapack_ref -> p?gemm_ (libscalapack-mpich, Fortran ABI) -> ?gemm_ (BLAS)
// cala-bench potrf -> scalapack_ref -> p?potrf_ / p?potrs_ (libscalapack-mpich) -> BLAS, LAPACK
//
// A DistMatrix's local array is ScaLAPACK's (column-major, ld >= max(1, local rows)), and a
// BLACS grid made with "Row" order over MPI_COMM_WORLD puts rank r at the same (row, col) as a
// RowMajor cala::Grid2D over MPI_COMM_WORLD, so a descriptor built from the cala layout lets
// ScaLAPACK read A and B and write C in place, with no copy.

#include <array>

#include "cala/cholesky.hpp"
#include "cala/gemm.hpp"
#include "cala/matrix.hpp"

namespace cala::bench {

/// A BLACS process grid over MPI_COMM_WORLD, p x q, ranks in row-major order (BLACS "Row").
/// Collective over MPI_COMM_WORLD (Cblacs_gridinit); move-only; ~BlacsGrid() calls
/// Cblacs_gridexit and never throws.
class BlacsGrid {
public:
    /// Throws cala::Error on every rank if p * q is not the size of MPI_COMM_WORLD.
    BlacsGrid(int p, int q);
    BlacsGrid(BlacsGrid&& o) noexcept;
    BlacsGrid& operator=(BlacsGrid&& o) noexcept;
    BlacsGrid(const BlacsGrid&) = delete;
    BlacsGrid& operator=(const BlacsGrid&) = delete;
    ~BlacsGrid();

    int context() const noexcept { return ctxt_; }
    int p() const noexcept { return p_; }
    int q() const noexcept { return q_; }
    int row() const noexcept { return row_; }  ///< this rank's BLACS process row
    int col() const noexcept { return col_; }  ///< this rank's BLACS process column

private:
    int ctxt_ = -1;
    int p_ = 0, q_ = 0, row_ = -1, col_ = -1;
};

/// ScaLAPACK array descriptor (DTYPE 1, CTXT, M, N, MB, NB, RSRC, CSRC, LLD) of a matrix with
/// cala layout `l` and local leading dimension `ld`, checked by descinit_ and numroc_.
/// Throws cala::Error if the layout has no descriptor (a first block smaller than the others)
/// or ScaLAPACK disagrees with cala about the local size on this rank.
std::array<int, 9> descriptor(const BlacsGrid& g, const BlockCyclic& l, index_t ld);

/// C := alpha·op(A)·op(B) + beta·C by ScaLAPACK's p?gemm on the local storage of a, b, c,
/// with omp_get_max_threads() BLAS threads per rank.
/// Collective over the BLACS grid `g`, which must match the cala grid of a, b, c (same p x q
/// and this rank at the same coordinates; checked, cala::Error otherwise).
template <class T>
void pgemm(const BlacsGrid& g, Op op_a, Op op_b, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b,
           T beta, const MatrixRef<T>& c);

/// Cholesky factorization of a (n x n, the `uplo` triangle) by ScaLAPACK's p?potrf on the local
/// storage of a, with omp_get_max_threads() BLAS threads per rank. Returns ScaLAPACK's info (0, or
/// k > 0: the leading minor of order k is not positive definite; the same on every rank).
/// Collective over `g`, which must match a's cala grid (checked, cala::Error otherwise); a must
/// be square with square blocks (MB = NB, as ScaLAPACK requires; cala::Error otherwise).
template <class T>
index_t ppotrf(const BlacsGrid& g, Uplo uplo, const MatrixRef<T>& a);

/// B := A⁻¹·B by ScaLAPACK's p?potrs with the factor ppotrf left in a; b is n x nrhs with the
/// row blocking of a. Collective over `g` (as ppotrf). Throws cala::Error if ScaLAPACK rejects
/// the arguments (its info < 0).
template <class T>
void ppotrs(const BlacsGrid& g, Uplo uplo, const MatrixRef<T>& a, const MatrixRef<T>& b);

}  // namespace cala::bench

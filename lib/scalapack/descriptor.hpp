#pragma once
// ScaLAPACK array descriptors as PBLAS reads them, and PBLAS's argument checks. Pure functions,
// no MPI, no BLACS calls: the caller passes the grid shape and coordinates.
//
// shim (pgemm.cpp) -> descriptor (this) -> cala::Dist1D (layout/)
//
// Descriptors come in two kinds (PBLAS's PB_CargFtoC):
//   DTYPE 1 (BLOCK_CYCLIC_2D, 9 entries):      DTYPE CTXT M N MB NB RSRC CSRC LLD
//   DTYPE 2 (BLOCK_CYCLIC_2D_INB, 11 entries): DTYPE CTXT M N IMB INB MB NB RSRC CSRC LLD
// Both are read into the 11-entry form (IMB = MB, INB = NB for DTYPE 1). Error codes follow
// PBLAS: argument i wrong -> info = -i; entry j (of the 11-entry form) of descriptor argument i
// wrong -> info = -(100 i + j); the first wrong argument in the list wins.

#include <array>
#include <cctype>
#include <optional>
#include <string>

#include "cala/layout.hpp"

namespace cala::scalapack {

/// Entries of the 11-entry descriptor, 0-based (PBLAS's C names).
enum DescEntry : int { DTYPE_ = 0, CTXT_, M_, N_, IMB_, INB_, MB_, NB_, RSRC_, CSRC_, LLD_, DLEN_ };

using Desc = std::array<int, DLEN_>;

/// The 11-entry form of a user descriptor (DTYPE 1 or 2); another DTYPE keeps DTYPE and CTXT and
/// is rejected by check_matrix.
Desc read_descriptor(const int* desc) noexcept;

/// This rank's view of a BLACS grid (Cblacs_gridinfo).
struct GridPos {
    int p = -1, q = -1, row = -1, col = -1;
};

/// Running result of PBLAS's argument checks, in PBLAS's "DESCMULT" encoding: argument i is
/// 100 i, entry j of descriptor argument i is 100 i + j + 1 (j 0-based); kNone when all is well.
/// The smallest code wins, as in PBLAS.
struct ArgCheck {
    static constexpr int kDescMult = 100;
    static constexpr int kNone = 10000;  // PBLAS's BIGNUM
    int code = kNone;
    std::string first;  ///< what was wrong with the argument the code names (for CALA_VERBOSE)

    void fail(int c, std::string why);
    bool ok() const noexcept { return code == kNone; }
    /// ScaLAPACK's info (< 0), 0 when all is well.
    int info() const noexcept;
    /// The positive number PXERBLA prints ("parameter number ...").
    int position() const noexcept { return -info(); }
};

/// An option argument (SIDE, UPLO, TRANS, DIAG) as PBLAS reads it: its first character, upper case.
inline char option(const char* c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c[0]))); }

/// PBLAS's PB_Cchkmat for sub(X) = X(ix:ix+m-1, jx:jx+n-1) (ix, jx 1-based as the user passed
/// them), where M, N, IX/JX and DESCX are arguments number mpos, npos, dpos-2/dpos-1 and dpos.
/// `ctxt` is the context of the first matrix argument; `g` its grid as seen by this rank.
void check_matrix(ArgCheck& chk, const char* name, int ctxt, const GridPos& g, int m, int mpos, int n, int npos,
                  int ix, int jx, const Desc& d, int dpos);

/// ScaLAPACK's CHK1MAT (the local checks of a ScaLAPACK routine, not PBLAS's) for
/// sub(X) = X(ix:ix+m-1, jx:jx+n-1), with M, N, IX/JX and DESCX arguments number mpos, npos,
/// dpos-2/dpos-1 and dpos, on the descriptor `desc` as the user passed it (ScaLAPACK routines
/// accept only DTYPE 1, 9 entries). Descriptor entries are numbered as ScaLAPACK numbers them,
/// 1..9 (DTYPE 1, CTXT 2, M 3, N 4, MB 5, NB 6, RSRC 7, CSRC 8, LLD 9): entry j wrong gives code
/// 100·dpos + j. One failure at most per call (CHK1MAT's chain), the smallest code wins overall.
void chk1mat(ArgCheck& chk, const char* name, const GridPos& g, int m, int mpos, int n, int npos, int ix, int jx,
             const int* desc, int dpos);

/// The local array argument number `pos` (named `name`) is null while this process holds
/// elements of its matrix (descriptor `d`, 11-entry form, already checked) and the call reads or
/// writes it (`used`): an illegal value of that argument, code 100·pos. ScaLAPACK does not check
/// pointers (it would crash); the shim reports them like any other argument. Call only while
/// `chk` is ok.
void check_array(ArgCheck& chk, const char* name, const void* data, bool used, const Desc& d, const GridPos& g,
                 int pos);

/// ScaLAPACK's 1-based numbering of the entries of a 9-entry descriptor (for ArgCheck codes).
enum ScalapackDescEntry : int { SL_DTYPE = 1, SL_CTXT, SL_M, SL_N, SL_MB, SL_NB, SL_RSRC, SL_CSRC, SL_LLD };

/// Number of the first n indices a process holds when block 0 has ib indices, the others nb,
/// block b on process (src + b) mod nprocs; src == -1 means every process holds them all.
index_t local_count(index_t n, index_t ib, index_t nb, int src, int nprocs, int proc) noexcept;

/// One dimension of a submatrix: its distribution and the local index of its first element on
/// this process (where the process's part of the submatrix starts in local storage).
struct SubAxis {
    Dist1D dist;
    index_t local_offset = 0;
};

/// The distribution of indices [off, off + len) of a dimension of n indices (first block ib,
/// then nb, block 0 on src, over nprocs processes), seen from process `proc`.
/// nullopt when cala has no layout for it: src == -1 (replicated), or (over several processes)
/// a first block wider than nb that the range starts inside, with more than nb of its indices
/// in that block, and leaves.
std::optional<SubAxis> sub_axis(index_t n, index_t ib, index_t nb, int src, int nprocs, index_t off, index_t len,
                                int proc);

}  // namespace cala::scalapack

// PBLAS descriptors and argument checks, in the order and with the codes PBLAS uses.

#include "scalapack/descriptor.hpp"

#include <algorithm>

#include "core/check.hpp"

namespace cala::scalapack {

namespace {
constexpr int kBlockCyclic2D = 1;     // DTYPE of a 9-entry descriptor
constexpr int kBlockCyclic2DInb = 2;  // DTYPE of an 11-entry descriptor
}  // namespace

Desc read_descriptor(const int* in) noexcept {
    Desc d{};
    if (in[0] == kBlockCyclic2D) {
        //        DTYPE             CTXT   M      N      IMB    INB    MB     NB     RSRC   CSRC   LLD
        d = Desc{kBlockCyclic2DInb, in[1], in[2], in[3], in[4], in[5], in[4], in[5], in[6], in[7], in[8]};
    } else if (in[0] == kBlockCyclic2DInb) {
        std::copy(in, in + DLEN_, d.begin());
    } else {  // unknown kind: only DTYPE and CTXT are read, check_matrix rejects it
        d = Desc{in[0], in[1], 0, 0, 1, 1, 1, 1, 0, 0, 1};
    }
    return d;
}

void ArgCheck::fail(int c, std::string why) {
    if (c < code) {
        code = c;
        first = std::move(why);
    }
}

int ArgCheck::info() const noexcept {
    if (code == kNone) return 0;
    return code % kDescMult == 0 ? -(code / kDescMult) : -code;
}

index_t local_count(index_t n, index_t ib, index_t nb, int src, int nprocs, int proc) noexcept {
    if (n <= 0) return 0;
    if (src < 0 || nprocs == 1) return n;
    const int d = (proc - src + nprocs) % nprocs;  // block b lives on d == b mod nprocs
    if (n <= ib) return d == 0 ? n : 0;
    const index_t rest = n - ib, full = rest / nb, rem = rest % nb;
    // Blocks 1 .. full have nb indices, block full + 1 has rem.
    const index_t mine = d == 0 ? full / nprocs : (full >= d ? (full - d) / nprocs + 1 : 0);
    index_t count = (d == 0 ? ib : 0) + mine * nb;
    if (rem > 0 && (full + 1) % nprocs == d) count += rem;
    return count;
}

void check_matrix(ArgCheck& chk, const char* name, int ctxt, const GridPos& g, int m, int mpos, int n, int npos,
                  int ix, int jx, const Desc& d, int dpos) {
    using detail::cat;
    constexpr int k = ArgCheck::kDescMult;
    const int ipos = (dpos - 2) * k, jpos = (dpos - 1) * k, entry = dpos * k + 1;
    const int i0 = ix - 1, j0 = jx - 1;
    if (m < 0) chk.fail(mpos * k, cat("rows of sub(", name, ") = ", m, " < 0"));
    if (n < 0) chk.fail(npos * k, cat("columns of sub(", name, ") = ", n, " < 0"));
    if (i0 < 0) chk.fail(ipos, cat("I", name, " = ", ix, " < 1"));
    if (j0 < 0) chk.fail(jpos, cat("J", name, " = ", jx, " < 1"));
    if (d[DTYPE_] != kBlockCyclic2DInb) {
        chk.fail(entry + DTYPE_, cat("DESC", name, " has descriptor type ", d[DTYPE_], ", not 1 or 2"));
        return;
    }
    if (d[CTXT_] != ctxt) {
        chk.fail(entry + CTXT_, cat("DESC", name, " context ", d[CTXT_], " is not the context ", ctxt, " of A"));
        return;
    }
    static constexpr const char* block_names[] = {"IMB", "INB", "MB", "NB"};
    for (const DescEntry e : {IMB_, INB_, MB_, NB_})
        if (d[e] < 1) chk.fail(entry + e, cat("DESC", name, " ", block_names[e - IMB_], " = ", d[e], " < 1"));
    if (d[RSRC_] < -1 || d[RSRC_] >= g.p)
        chk.fail(entry + RSRC_, cat("DESC", name, " RSRC = ", d[RSRC_], " is not -1 or a row of ", g.p));
    if (d[CSRC_] < -1 || d[CSRC_] >= g.q)
        chk.fail(entry + CSRC_, cat("DESC", name, " CSRC = ", d[CSRC_], " is not -1 or a column of ", g.q));
    if (m == 0 || n == 0) {  // an empty submatrix: PBLAS relaxes the range checks
        if (d[M_] < 0) chk.fail(entry + M_, cat("DESC", name, " M = ", d[M_], " < 0"));
        if (d[N_] < 0) chk.fail(entry + N_, cat("DESC", name, " N = ", d[N_], " < 0"));
        if (d[LLD_] < 1) chk.fail(entry + LLD_, cat("DESC", name, " LLD = ", d[LLD_], " < 1"));
        return;
    }
    if (d[M_] < 1) chk.fail(entry + M_, cat("DESC", name, " M = ", d[M_], " < 1"));
    if (d[N_] < 1) chk.fail(entry + N_, cat("DESC", name, " N = ", d[N_], " < 1"));
    if (d[M_] >= 1 && d[N_] >= 1) {
        if (static_cast<index_t>(i0) + m > d[M_])
            chk.fail(ipos, cat("sub(", name, ") rows ", ix, "..", static_cast<index_t>(i0) + m, " exceed M = ", d[M_]));
        if (static_cast<index_t>(j0) + n > d[N_])
            chk.fail(jpos, cat("sub(", name, ") columns ", jx, "..", static_cast<index_t>(j0) + n, " exceed N = ",
                               d[N_]));
    }
    // PBLAS checks LLD only while no argument so far is wrong (the block sizes are then valid).
    if (!chk.ok()) return;
    const index_t np = local_count(d[M_], d[IMB_], d[MB_], d[RSRC_], g.p, g.row);
    if (d[LLD_] >= std::max<index_t>(1, np)) return;
    const index_t nq = local_count(d[N_], d[INB_], d[NB_], d[CSRC_], g.q, g.col);
    if (d[LLD_] < 1 || nq > 0)
        chk.fail(entry + LLD_, cat("DESC", name, " LLD = ", d[LLD_], " < ", std::max<index_t>(1, np),
                                   " local rows on process (", g.row, ",", g.col, ")"));
}

void check_array(ArgCheck& chk, const char* name, const void* data, bool used, const Desc& d, const GridPos& g,
                 int pos) {
    if (data != nullptr || !used || !chk.ok()) return;
    const index_t rows = local_count(d[M_], d[IMB_], d[MB_], d[RSRC_], g.p, g.row);
    const index_t cols = local_count(d[N_], d[INB_], d[NB_], d[CSRC_], g.q, g.col);
    if (rows > 0 && cols > 0)
        chk.fail(pos * ArgCheck::kDescMult, detail::cat(name, " is a null pointer with ", rows, " x ", cols,
                                                        " local elements on process (", g.row, ",", g.col, ")"));
}

void chk1mat(ArgCheck& chk, const char* name, const GridPos& g, int m, int mpos, int n, int npos, int ix, int jx,
             const int* desc, int dpos) {
    using detail::cat;
    constexpr int k = ArgCheck::kDescMult;
    const int mcode = mpos * k, ncode = npos * k, icode = (dpos - 2) * k, jcode = (dpos - 1) * k, d = dpos * k;
    if (desc[SL_DTYPE - 1] != kBlockCyclic2D) {
        chk.fail(d + SL_DTYPE, cat("DESC", name, " has descriptor type ", desc[0], ", not 1"));
        return;  // the other entries mean nothing
    }
    const int dm = desc[SL_M - 1], dn = desc[SL_N - 1], mb = desc[SL_MB - 1], nb = desc[SL_NB - 1],
              rsrc = desc[SL_RSRC - 1], csrc = desc[SL_CSRC - 1], lld = desc[SL_LLD - 1];
    // CHK1MAT's first chain: the first failure only.
    if (m < 0) chk.fail(mcode, cat("rows of sub(", name, ") = ", m, " < 0"));
    else if (n < 0) chk.fail(ncode, cat("columns of sub(", name, ") = ", n, " < 0"));
    else if (ix < 1) chk.fail(icode, cat("I", name, " = ", ix, " < 1"));
    else if (jx < 1) chk.fail(jcode, cat("J", name, " = ", jx, " < 1"));
    else if (mb < 1) chk.fail(d + SL_MB, cat("DESC", name, " MB = ", mb, " < 1"));
    else if (nb < 1) chk.fail(d + SL_NB, cat("DESC", name, " NB = ", nb, " < 1"));
    else if (rsrc < 0 || rsrc >= g.p) chk.fail(d + SL_RSRC, cat("DESC", name, " RSRC = ", rsrc, " is not a row of ", g.p));
    else if (csrc < 0 || csrc >= g.q)
        chk.fail(d + SL_CSRC, cat("DESC", name, " CSRC = ", csrc, " is not a column of ", g.q));
    else if (lld < 1) chk.fail(d + SL_LLD, cat("DESC", name, " LLD = ", lld, " < 1"));
    else if (const index_t np = local_count(dm, mb, mb, rsrc, g.p, g.row);
             lld < np && local_count(dn, nb, nb, csrc, g.q, g.col) > 0)
        chk.fail(d + SL_LLD, cat("DESC", name, " LLD = ", lld, " < ", np, " local rows on process (", g.row, ",",
                                 g.col, ")"));
    if (m == 0 || n == 0) {  // an empty submatrix: relaxed checks
        if (dm < 0) chk.fail(d + SL_M, cat("DESC", name, " M = ", dm, " < 0"));
        if (dn < 0) chk.fail(d + SL_N, cat("DESC", name, " N = ", dn, " < 0"));
    } else if (dm < 1) chk.fail(d + SL_M, cat("DESC", name, " M = ", dm, " < 1"));
    else if (dn < 1) chk.fail(d + SL_N, cat("DESC", name, " N = ", dn, " < 1"));
    else if (ix > dm) chk.fail(icode, cat("I", name, " = ", ix, " > M = ", dm));
    else if (jx > dn) chk.fail(jcode, cat("J", name, " = ", jx, " > N = ", dn));
    else {
        if (static_cast<index_t>(ix) + m - 1 > dm)
            chk.fail(mcode, cat("sub(", name, ") rows ", ix, "..", static_cast<index_t>(ix) + m - 1, " exceed M = ", dm));
        if (static_cast<index_t>(jx) + n - 1 > dn)
            chk.fail(ncode, cat("sub(", name, ") columns ", jx, "..", static_cast<index_t>(jx) + n - 1, " exceed N = ",
                                dn));
    }
}

std::optional<SubAxis> sub_axis(index_t n, index_t ib, index_t nb, int src, int nprocs, index_t off, index_t len,
                                int proc) {
    if (src < 0) return std::nullopt;  // replicated: no block-cyclic layout describes it
    if (ib <= nb || n <= ib) {
        // A plain Dist1D (a single block when the first block covers everything).
        const Dist1D full(n, std::max(nb, std::min(ib, std::max<index_t>(n, 1))), nprocs, src,
                          std::min(ib, std::max<index_t>(n, 1)));
        return SubAxis{full.sub(off, len), full.local_before(off, proc)};
    }
    if (nprocs == 1)  // one process holds everything in global order: any blocking describes it
        return SubAxis{Dist1D(len, nb, 1, 0, off < ib ? std::min(ib - off, nb) : nb - (off - ib) % nb), off};
    // First block wider than nb: only src holds [0, ib); the rest is an ordinary layout from src + 1.
    const index_t first_local = proc == src ? off : 0;
    if (off >= ib) {
        const Dist1D tail(n - ib, nb, nprocs, (src + 1) % nprocs, nb);
        return SubAxis{tail.sub(off - ib, len), (proc == src ? ib : 0) + tail.local_before(off - ib, proc)};
    }
    if (off + len <= ib) {  // inside block 0: one block on src
        const index_t w = std::max<index_t>(len, 1);
        return SubAxis{Dist1D(len, w, nprocs, src, w), first_local};
    }
    if (ib - off <= nb) return SubAxis{Dist1D(len, nb, nprocs, src, ib - off), first_local};
    return std::nullopt;
}

}  // namespace cala::scalapack

#include "cala/layout.hpp"

#include "core/check.hpp"

namespace cala {

Dist1D::Dist1D(index_t n_, index_t nb_, int nprocs_, int src_, index_t ib_, const char* what)
    : n(n_), nb(nb_), ib(ib_ == 0 ? nb_ : ib_), src(src_), nprocs(nprocs_) {
    using detail::cat;
    if (n < 0) throw Error(cat(what, ": size is ", n, ", must be >= 0"));
    if (nb < 1) throw Error(cat(what, ": block size is ", nb, ", must be >= 1"));
    if (nprocs < 1) throw Error(cat(what, ": process count is ", nprocs, ", must be >= 1"));
    if (ib < 1 || ib > nb) throw Error(cat(what, ": first block size is ", ib, ", must be in [1, ", nb, "]"));
    if (src < 0 || src >= nprocs)
        throw Error(cat(what, ": source process is ", src, ", must be in [0, ", nprocs, ")"));
}

index_t Dist1D::num_blocks() const noexcept {
    if (n == 0) return 0;
    if (n <= ib) return 1;
    return 1 + (n - ib + nb - 1) / nb;
}

index_t Dist1D::block_of(index_t g) const noexcept { return g < ib ? 0 : 1 + (g - ib) / nb; }

index_t Dist1D::block_start(index_t b) const noexcept { return b == 0 ? 0 : ib + (b - 1) * nb; }

index_t Dist1D::block_size(index_t b) const noexcept {
    const index_t start = block_start(b);
    const index_t end = b == 0 ? ib : start + nb;
    return (end < n ? end : n) - start;
}

namespace {
// Local start of the t-th block (t = 0, 1, ...) that a process holds, where b0 is its first
// block: all its blocks are full-size except that block 0 (if it holds it) has size ib.
index_t owned_start(const Dist1D& d, index_t b0, index_t t) {
    if (t == 0) return 0;
    return b0 == 0 ? d.ib + (t - 1) * d.nb : t * d.nb;
}
}  // namespace

index_t Dist1D::local_size(int proc) const noexcept { return local_before(n, proc); }

index_t Dist1D::local_before(index_t g, int proc) const noexcept {
    if (g <= 0) return 0;
    if (g > n) g = n;
    const index_t b0 = (proc - src + nprocs) % nprocs;  // first block the process holds
    // Blocks strictly before the block containing g (or all blocks, if g == n).
    const index_t bg = g == n ? num_blocks() : block_of(g);
    index_t count = 0;
    if (b0 < bg) {
        const index_t t = (bg - 1 - b0) / nprocs;  // index of the last held block before bg
        count = owned_start(*this, b0, t) + block_size(b0 + t * nprocs);
    }
    if (g < n && block_owner(bg) == proc) count += g - block_start(bg);
    return count;
}

index_t Dist1D::to_global(index_t l, int proc) const noexcept {
    const index_t b0 = (proc - src + nprocs) % nprocs;
    index_t t, off;
    if (b0 == 0) {
        if (l < ib) return l;
        t = 1 + (l - ib) / nb;
        off = (l - ib) % nb;
    } else {
        t = l / nb;
        off = l % nb;
    }
    return block_start(b0 + t * nprocs) + off;
}

Dist1D Dist1D::sub(index_t offset, index_t len) const {
    using detail::cat;
    if (offset < 0 || len < 0 || offset + len > n)
        throw Error(cat("submatrix: range [", offset, ", ", offset + len, ") is outside [0, ", n, ")"));
    Dist1D d = *this;
    d.n = len;
    if (offset == n) return d;  // empty range at the end: any distribution will do
    const index_t b = block_of(offset);
    d.src = block_owner(b);
    // Remainder of the (unclipped) block containing offset: in [1, nb].
    d.ib = (b == 0 ? ib : block_start(b) + nb) - offset;
    return d;
}

BlockCyclic::BlockCyclic(index_t m, index_t n, index_t mb, index_t nb, int p, int q, int rsrc, int csrc)
    : rows(m, mb, p, rsrc, 0, "rows"), cols(n, nb, q, csrc, 0, "columns") {}

}  // namespace cala

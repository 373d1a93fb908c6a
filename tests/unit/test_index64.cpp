// 64-bit sizes without allocating: the index arithmetic of every layout (Dist1D / BlockCyclic
// global <-> local maps and numroc, submatrix offsets, the redistribution plan, the stencil
// domains) and the cost models, at global sizes and offsets past 2^31 (10^6 x 10^6 matrices,
// 3·10^9 rows, 3·10^9-point stencil dimensions).
//
// Two independent references: ScaLAPACK's numroc/indxg2l/indxl2g formulas written out here, and
// exact scaling: multiplying every size, block size and panel width of a small problem by s moves
// every block boundary by the factor s, so the huge problem's counts are the small one's times
// s (1D quantities) or s^2 (areas), and its messages are unchanged. An int overflow anywhere on
// the way breaks the equality.

#include <doctest/doctest.h>

#include <random>

#include "cala/cholesky.hpp"
#include "cala/model.hpp"
#include "cala/stencil.hpp"
#include "matrix/redist_plan.hpp"

using namespace cala;

namespace {

constexpr index_t k2_31 = index_t(1) << 31;

// ScaLAPACK's NUMROC, INDXG2L, INDXL2G, INDXG2P (first block full: ib = nb).
index_t numroc(index_t n, index_t nb, int iproc, int isrc, int nprocs) {
    const int mydist = (nprocs + iproc - isrc) % nprocs;
    const index_t nblocks = n / nb;
    index_t num = (nblocks / nprocs) * nb;
    const index_t extra = nblocks % nprocs;
    if (mydist < extra)
        num += nb;
    else if (mydist == extra)
        num += n % nb;
    return num;
}
index_t indxg2l(index_t g, index_t nb, int nprocs) { return nb * (g / (nb * nprocs)) + g % nb; }
index_t indxl2g(index_t l, index_t nb, int iproc, int isrc, int nprocs) {
    return nprocs * nb * (l / nb) + l % nb + ((nprocs + iproc - isrc) % nprocs) * nb;
}
int indxg2p(index_t g, index_t nb, int isrc, int nprocs) { return static_cast<int>((isrc + g / nb) % nprocs); }

}  // namespace

TEST_CASE("Dist1D agrees with ScaLAPACK's formulas past 2^31") {
    std::mt19937_64 g(31);
    for (int t = 0; t < 400; ++t) {
        const index_t n = k2_31 + static_cast<index_t>(g() % (index_t(4) << 32));            // 2^31 .. 2^31 + 1.7e10
        const index_t nb = 1 + static_cast<index_t>(g() % (t % 2 ? 64 : index_t(1) << 33));  // up to 8.6e9 (past 2^31)
        const int np = 1 + static_cast<int>(g() % 97), src = static_cast<int>(g() % static_cast<std::uint64_t>(np));
        const Dist1D d(n, nb, np, src);
        index_t total = 0;
        for (int pr = 0; pr < np; ++pr) {
            CAPTURE(n);
            CAPTURE(nb);
            CAPTURE(np);
            CAPTURE(pr);
            CHECK(d.local_size(pr) == numroc(n, nb, pr, src, np));
            total += d.local_size(pr);
        }
        CHECK(total == n);
        for (int s = 0; s < 8; ++s) {
            const index_t gi = s == 0 ? n - 1 : static_cast<index_t>(g() % static_cast<std::uint64_t>(n));
            const int owner = indxg2p(gi, nb, src, np);
            const index_t l = indxg2l(gi, nb, np);
            CAPTURE(gi);
            CHECK(d.owner(gi) == owner);
            CHECK(d.to_local(gi) == l);
            CHECK(d.to_global(l, owner) == gi);
            CHECK(indxl2g(l, nb, owner, src, np) == gi);
            CHECK(d.local_before(gi, owner) == l);
        }
    }
}

TEST_CASE("submatrices at offsets past 2^31 keep the global <-> local maps") {
    std::mt19937_64 g(32);
    for (int t = 0; t < 200; ++t) {
        const index_t n = 3'000'000'000 + static_cast<index_t>(g() % 1'000'000'000);
        const index_t nb = 1 + static_cast<index_t>(g() % 100'000'000);
        const int np = 1 + static_cast<int>(g() % 13), src = static_cast<int>(g() % static_cast<std::uint64_t>(np));
        const Dist1D d(n, nb, np, src);
        const index_t off = k2_31 + static_cast<index_t>(g() % static_cast<std::uint64_t>(n - k2_31));
        const index_t len = static_cast<index_t>(g() % static_cast<std::uint64_t>(n - off + 1));
        const Dist1D s = d.sub(off, len);
        CAPTURE(n);
        CAPTURE(nb);
        CAPTURE(np);
        CAPTURE(off);
        CAPTURE(len);
        // Index i of the submatrix is index off + i of the parent, on the same process; its
        // local index is the parent's minus what the process holds before off.
        for (int k = 0; k < 6 && len > 0; ++k) {
            const index_t i = k == 0 ? len - 1 : static_cast<index_t>(g() % static_cast<std::uint64_t>(len));
            const int pr = d.owner(off + i);
            CHECK(s.owner(i) == pr);
            CHECK(s.to_local(i) == d.to_local(off + i) - d.local_before(off, pr));
            CHECK(s.to_global(s.to_local(i), pr) == i);
        }
        index_t total = 0;
        for (int pr = 0; pr < np; ++pr) total += s.local_size(pr);
        CHECK(total == len);
    }
}

TEST_CASE("a 10^6 x 10^6 BlockCyclic: local sizes multiply past 2^31 elements") {
    const BlockCyclic l(1'000'000, 1'000'000, 1000, 700, 4, 3, 1, 2);
    index_t elems = 0;
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 3; ++c) {
            const index_t e = l.rows.local_size(r) * l.cols.local_size(c);
            CHECK(e > k2_31);
            elems += e;
        }
    CHECK(elems == index_t(1'000'000) * 1'000'000);
    const BlockCyclic s = l.sub(999'999, 3, 1, 999'997);
    CHECK(s.rows.local_size(s.rows.src) == 1);
    CHECK(s.cols.to_global(s.cols.to_local(999'996), s.cols.owner(999'996)) == 999'996);
}

TEST_CASE("the redistribution plan of a 10^6 x 10^6 matrix sends every element once") {
    for (Op op : {Op::N, Op::T}) {
        const BlockCyclic src(1'000'000, 1'000'000, 30'000, 20'000, 2, 3, 1, 0);
        const BlockCyclic dst(1'000'000, 1'000'000, 70'000, 10'000, 3, 2, 0, 1);
        const detail::RedistGeometry geo(op, src, dst);
        index_t sent = 0, received = 0;
        for (int r = 0; r < 2; ++r)
            for (int c = 0; c < 3; ++c)
                for (std::int64_t x : detail::send_counts(geo, r, c)) sent += x;
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 2; ++c) {
                index_t mine = 0;
                for (std::int64_t x : detail::recv_counts(geo, r, c)) mine += x;
                CHECK(mine == dst.rows.local_size(r) * dst.cols.local_size(c));
                received += mine;
            }
        CAPTURE(op_char(op));
        CHECK(sent == index_t(1'000'000) * 1'000'000);
        CHECK(received == sent);
    }
}

TEST_CASE("stencil domains of 3·10^9 points along x, and their model") {
    const index_t nx = 3'000'000'007, ny = 5;
    const StencilDomain d = StencilDomain::make_2d(nx, ny, 7, 1, Boundary::Periodic, Boundary::Periodic);
    CHECK(d.check().empty());
    index_t total = 0;
    for (int c = 0; c < 7; ++c) {
        CHECK(d.lo(0, c) == c * (nx / 7) + std::min<index_t>(c, nx % 7));
        CHECK(d.extent(0, c) == nx / 7 + (c < nx % 7 ? 1 : 0));
        total += d.extent(0, c);
    }
    CHECK(total == nx);
    // A 5-point star, depth 1, 3 steps, on a 2 x 2 periodic grid of 2·10^5 x 2·10^5 points:
    // each step 4 faces out and 4 in; updates of 10^10 points per rank and step (past 2^31).
    const index_t n = 200'000;
    const StencilDomain sq = StencilDomain::make_2d(n, n, 2, 2, Boundary::Periodic, Boundary::Periodic);
    const StencilCost cost = stencil_cost(sq, {1, 0, 0}, {2, 1, true}, 1, 3);
    CHECK(cost.msgs == 3 * 8);
    CHECK(cost.words == 3 * 2 * (2 * (n / 2) + 2 * (n / 2)));
    CHECK(cost.updates == 3 * (n / 2) * (n / 2));
    CHECK(cost.redundant_updates == 0);
    // 3D: faces of 10^10 points. 7-point star, depth 1, 2 steps on 2 x 1 x 1 periodic ranks: the
    // two x-neighbours are the other rank (2 messages out, 2 in per step), y and z wrap onto
    // this rank (no message).
    const index_t f = 100'000;
    const StencilDomain cube =
        StencilDomain::make_3d(4, f, f, 2, 1, 1, Boundary::Periodic, Boundary::Periodic, Boundary::Periodic);
    const StencilCost c3 = stencil_cost(cube, {0, 0, 0}, {3, 1, true}, 1, 2);
    CHECK(c3.msgs == 2 * 4);
    CHECK(c3.words == 2 * 4 * f * f);
    CHECK(c3.updates == 2 * 2 * f * f);
}

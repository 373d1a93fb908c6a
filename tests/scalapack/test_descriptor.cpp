// The shim's descriptor arithmetic against brute force (first blocks of any size, wider than the
// block size included), and PBLAS's error codes for a few illegal arguments. No MPI, no BLACS.

#include <doctest/doctest.h>

#include <array>
#include <random>
#include <vector>

#include "scalapack/descriptor.hpp"

using cala::index_t;
using namespace cala::scalapack;

namespace {

// Owner and local index of every index of a dimension (first block ib, then nb, from src).
struct Brute {
    std::vector<int> owner;
    std::vector<index_t> local;
};

Brute brute(index_t n, index_t ib, index_t nb, int src, int P) {
    Brute b{std::vector<int>(n), std::vector<index_t>(n)};
    std::vector<index_t> count(P, 0);
    index_t g = 0;
    for (index_t blk = 0; g < n; ++blk) {
        const int p = static_cast<int>((src + blk) % P);
        for (index_t i = 0; i < (blk == 0 ? ib : nb) && g < n; ++i, ++g) {
            b.owner[g] = p;
            b.local[g] = count[p]++;
        }
    }
    return b;
}

}  // namespace

TEST_CASE("local_count and sub_axis match brute force, first blocks wider than the block size included") {
    std::mt19937 rng(11);
    int representable = 0, not_representable = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        const int P = 1 + static_cast<int>(rng() % 4);
        const index_t nb = 1 + rng() % 6, ib = 1 + rng() % 12, n = rng() % 50;
        const int src = static_cast<int>(rng() % P);
        const Brute b = brute(n, ib, nb, src, P);
        for (int p = 0; p < P; ++p) {
            index_t mine = 0;
            for (index_t g = 0; g < n; ++g) mine += b.owner[g] == p;
            CHECK(local_count(n, ib, nb, src, P, p) == mine);
        }
        CHECK(local_count(n, ib, nb, -1, P, 0) == n);  // replicated
        const index_t off = n == 0 ? 0 : rng() % (n + 1), len = rng() % (n - off + 1);
        for (int p = 0; p < P; ++p) {
            const auto s = sub_axis(n, ib, nb, src, P, off, len, p);
            const bool expect = P == 1 || ib <= nb || n <= ib || off >= ib || off + len <= ib || ib - off <= nb;
            REQUIRE(s.has_value() == expect);
            if (!s) {
                ++not_representable;
                continue;
            }
            ++representable;
            CHECK(s->dist.n == len);
            for (index_t i = 0; i < len; ++i) {
                const index_t g = off + i;
                if (P > 1) CHECK(s->dist.owner(i) == b.owner[g]);
                if (b.owner[g] == p) CHECK(s->local_offset + s->dist.local_before(i, p) == b.local[g]);
            }
        }
    }
    CHECK(representable > 1000);
    CHECK(not_representable > 10);
    CHECK_FALSE(sub_axis(10, 2, 2, -1, 2, 0, 5, 0).has_value());  // replicated: ScaLAPACK's
}

TEST_CASE("check_matrix gives PBLAS's codes") {
    const GridPos g{2, 2, 0, 0};
    const int ctxt = 7;
    const int d9[9] = {1, ctxt, 10, 10, 2, 2, 0, 0, 6};
    const Desc d = read_descriptor(d9);
    CHECK(d == Desc{2, ctxt, 10, 10, 2, 2, 2, 2, 0, 0, 6});

    ArgCheck ok;
    check_matrix(ok, "A", ctxt, g, 4, 3, 4, 5, 1, 1, d, 10);
    CHECK(ok.ok());
    CHECK(ok.info() == 0);

    ArgCheck m_neg;  // M (argument 3) < 0
    check_matrix(m_neg, "A", ctxt, g, -1, 3, 4, 5, 1, 1, d, 10);
    CHECK(m_neg.info() == -3);

    ArgCheck ia;  // IA (argument 8) past the end
    check_matrix(ia, "A", ctxt, g, 4, 3, 4, 5, 8, 1, d, 10);
    CHECK(ia.info() == -8);

    ArgCheck other_ctxt;  // B (argument 14) in another context: entry 2
    check_matrix(other_ctxt, "B", ctxt + 1, g, 4, 5, 4, 4, 1, 1, d, 14);
    CHECK(other_ctxt.info() == -1402);

    ArgCheck lld;  // LLD of C (argument 19) < 6 local rows: entry 11
    const Desc small = Desc{2, ctxt, 12, 10, 2, 2, 2, 2, 0, 0, 4};
    check_matrix(lld, "C", ctxt, g, 4, 3, 4, 4, 1, 1, small, 19);
    CHECK(lld.info() == -1911);

    ArgCheck first_wins;  // TRANSA wrong (argument 1) and MB of A wrong (entry 7 of argument 10)
    first_wins.fail(100, "TRANSA");
    const Desc bad_mb = Desc{2, ctxt, 10, 10, 2, 2, 0, 2, 0, 0, 5};
    check_matrix(first_wins, "A", ctxt, g, 4, 3, 4, 5, 1, 1, bad_mb, 10);
    CHECK(first_wins.info() == -1);

    ArgCheck dtype;
    const int d_bad[9] = {5, ctxt, 10, 10, 2, 2, 0, 0, 5};
    check_matrix(dtype, "A", ctxt, g, 4, 3, 4, 5, 1, 1, read_descriptor(d_bad), 10);
    CHECK(dtype.info() == -1001);
}

TEST_CASE("chk1mat gives ScaLAPACK's codes (9-entry numbering, one failure per chain)") {
    const GridPos g{2, 3, 1, 2};
    // p?potrf: N is argument 2, IA 4, JA 5, DESCA 6. DESCA: 20 x 20 in 4 x 4 blocks, LLD 12.
    const auto code = [&](int n, int ia, int ja, std::array<int, 9> d) {
        ArgCheck chk;
        chk1mat(chk, "A", g, n, 2, n, 2, ia, ja, d.data(), 6);
        return chk.info();
    };
    const std::array<int, 9> ok{1, 0, 20, 20, 4, 4, 0, 0, 12};
    CHECK(code(8, 5, 9, ok) == 0);
    CHECK(code(0, 1, 1, ok) == 0);
    auto d = ok;
    d[0] = 2;  // an 11-entry descriptor: ScaLAPACK routines take type 1 only
    CHECK(code(8, 1, 1, d) == -601);
    CHECK(code(-1, 1, 1, ok) == -2);
    CHECK(code(8, 0, 1, ok) == -4);
    CHECK(code(8, 1, 0, ok) == -5);
    d = ok;
    d[4] = 0;
    CHECK(code(8, 1, 1, d) == -605);
    d = ok;
    d[6] = -1;  // RSRC -1 is PBLAS's replication, not ScaLAPACK's
    CHECK(code(8, 1, 1, d) == -607);
    d = ok;
    d[7] = 3;
    CHECK(code(8, 1, 1, d) == -608);
    d = ok;
    d[8] = 7;  // process row 1 of 2 holds 8 rows of 20 in blocks of 4
    CHECK(code(8, 1, 1, d) == -609);
    CHECK(code(8, 21, 1, ok) == -4);   // IA > M
    CHECK(code(8, 17, 1, ok) == -2);   // IA + N - 1 > M: N's position
    d = ok;
    d[2] = 0;
    CHECK(code(8, 1, 1, d) == -603);
    CHECK(code(0, 1, 1, d) == 0);      // an empty submatrix relaxes M >= 1
    d[6] = 5;                          // both chains fail: the smaller code wins (ScaLAPACK's MIN)
    CHECK(code(8, 1, 1, d) == -603);
}

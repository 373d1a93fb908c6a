// SBC and TBC layouts against their definitions (thesis ch. 5): one owner per lower block, the
// row sets (size and coverage), triangle-blocks that share at most one row, storage per rank,
// 64-bit sizes, and the chooser's answers and errors.

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "cala/error.hpp"
#include "cala/layout.hpp"

using namespace cala;

namespace {

std::vector<SymmetricLayout> layouts(index_t n, index_t nb) {
    return {SymmetricBlockCyclic(n, nb, 2),       SymmetricBlockCyclic(n, nb, 4),
            SymmetricBlockCyclic(n, nb, 8),       SymmetricBlockCyclic(n, nb, 3, true),
            SymmetricBlockCyclic(n, nb, 4, true), SymmetricBlockCyclic(n, nb, 11, true),
            TriangleBlockCyclic(n, nb, 2),        TriangleBlockCyclic(n, nb, 3),
            TriangleBlockCyclic(n, nb, 5)};
}

std::size_t expected_row_set(const SymmetricLayout& l) {
    switch (l.kind()) {
        case SymmetricKind::SBC: return static_cast<std::size_t>(l.param());
        case SymmetricKind::SBCExtended: return static_cast<std::size_t>(l.param() - 1);
        case SymmetricKind::TBC: return static_cast<std::size_t>(l.param() + 1);
    }
    return 0;
}

}  // namespace

TEST_CASE("symmetric patterns: rank counts, cells per rank, row sets") {
    for (const auto& l : layouts(40, 3)) {
        CAPTURE(l.describe());
        const int t = l.pattern_size(), P = l.nprocs();
        std::vector<int> offdiag(static_cast<std::size_t>(P), 0), rows_of(static_cast<std::size_t>(P), 0);
        for (int x = 0; x < t; ++x)
            for (int y = 0; y < x; ++y) {
                const int o = l.cell(x, y);
                REQUIRE(o >= 0);
                REQUIRE(o < P);
                CHECK(l.cell(y, x) == o);
                offdiag[static_cast<std::size_t>(o)] += 1;
            }
        for (int x = 0; x < t; ++x) {
            CHECK(l.row_set(x).size() == expected_row_set(l));
            for (const int r : l.row_set(x)) rows_of[static_cast<std::size_t>(r)] += 1;
        }
        const int c = l.param();
        for (int r = 0; r < P; ++r) {
            CAPTURE(r);
            if (l.kind() == SymmetricKind::TBC) {
                CHECK(offdiag[static_cast<std::size_t>(r)] == c * (c - 1) / 2);  // one triangle-block
                CHECK(rows_of[static_cast<std::size_t>(r)] == c);
            } else if (l.kind() == SymmetricKind::SBCExtended || r < c * (c - 1) / 2) {
                CHECK(offdiag[static_cast<std::size_t>(r)] == 1);
                CHECK(rows_of[static_cast<std::size_t>(r)] == 2);
            } else {  // basic SBC: the r/2 ranks on two diagonal cells each
                CHECK(offdiag[static_cast<std::size_t>(r)] == 0);
                CHECK(rows_of[static_cast<std::size_t>(r)] == 2);
            }
        }
        if (l.kind() == SymmetricKind::TBC)  // triangle-blocks overlap in at most one row
            for (int a = 0; a < P; ++a)
                for (int b = a + 1; b < P; ++b) {
                    int common = 0;
                    for (int x = 0; x < t; ++x) {
                        const auto& s = l.row_set(x);
                        common += std::binary_search(s.begin(), s.end(), a) && std::binary_search(s.begin(), s.end(), b);
                    }
                    CHECK(common <= 1);
                }
    }
}

TEST_CASE("symmetric layouts: one owner per lower block, in the row set of its row and column") {
    for (const index_t n : {0, 1, 7, 40, 101}) {
        for (const index_t nb : {1, 3, 8}) {
            for (const auto& l : layouts(n, nb)) {
                CAPTURE(l.describe()); CAPTURE(n); CAPTURE(nb);
                const index_t N = l.num_blocks();
                std::vector<index_t> blocks(static_cast<std::size_t>(l.nprocs()), 0),
                    elems(static_cast<std::size_t>(l.nprocs()), 0);
                bool ok = true;
                for (index_t i = 0; i < N; ++i)
                    for (index_t j = 0; j <= i; ++j) {
                        const int o = l.owner(i, j);
                        ok = ok && o >= 0 && o < l.nprocs() && l.owner(j, i) == o;
                        const auto& ri = l.row_set(l.row_of(i));
                        const auto& rj = l.row_set(l.row_of(j));
                        ok = ok && std::binary_search(ri.begin(), ri.end(), o) &&
                             std::binary_search(rj.begin(), rj.end(), o);
                        if (o >= 0 && o < l.nprocs()) {
                            blocks[static_cast<std::size_t>(o)] += 1;
                            elems[static_cast<std::size_t>(o)] += l.block_size(i) * l.block_size(j);
                        }
                    }
                CHECK(ok);
                for (int r = 0; r < l.nprocs(); ++r) {
                    CHECK(l.local_blocks(r) == blocks[static_cast<std::size_t>(r)]);
                    CHECK(l.local_elements(r) == elems[static_cast<std::size_t>(r)]);
                }
            }
        }
    }
}

TEST_CASE("symmetric layouts: storage per rank <= n²/(2P) + one block row") {
    for (const index_t n : {50, 97, 200, 333}) {
        for (const index_t nb : {1, 2, 5}) {
            for (const auto& l : layouts(n, nb)) {
                CAPTURE(l.describe()); CAPTURE(n); CAPTURE(nb);
                const double bound = double(n) * double(n) / (2.0 * l.nprocs()) + double(n) * double(nb);
                index_t worst = 0;
                for (int r = 0; r < l.nprocs(); ++r) worst = std::max(worst, l.local_elements(r));
                CAPTURE(worst); CAPTURE(bound);
                // The pattern must repeat at least once for the bound to make sense.
                if (l.num_blocks() >= l.pattern_size()) CHECK(double(worst) <= bound);
            }
        }
    }
}

TEST_CASE("symmetric layouts: 64-bit sizes") {
    const index_t n = 3'000'000, nb = 60'001;  // n² / 2 > 2^42
    for (const auto& l : {SymmetricLayout(TriangleBlockCyclic(n, nb, 3)), SymmetricLayout(SymmetricBlockCyclic(n, nb, 4))}) {
        index_t sum = 0, diag = 0;
        for (int r = 0; r < l.nprocs(); ++r) sum += l.local_elements(r);
        for (index_t i = 0; i < l.num_blocks(); ++i) diag += l.block_size(i) * l.block_size(i);
        CHECK(sum == (n * n + diag) / 2);
        CHECK(sum > (index_t(1) << 42));
    }
}

TEST_CASE("choose_symmetric_layout: the patterns that fit, and the nearby counts when none does") {
    CHECK(choose_symmetric_layout(12, 100, 4).front().kind == SymmetricKind::TBC);
    CHECK(choose_symmetric_layout(12, 100, 4).front().param == 3);
    CHECK(choose_symmetric_layout(30, 100, 4).front().param == 5);
    CHECK(choose_symmetric_layout(32, 100, 4).front().kind == SymmetricKind::SBC);
    CHECK(choose_symmetric_layout(32, 100, 4).front().param == 8);
    CHECK(choose_symmetric_layout(55, 100, 4).front().kind == SymmetricKind::SBCExtended);
    CHECK(choose_symmetric_layout(55, 100, 4).front().param == 11);
    CHECK(choose_symmetric_layout(6, 100, 4).size() == 2);  // TBC c=2 and extended SBC r=4
    const auto six = choose_symmetric_layout(6, 100, 4);
    for (const auto& c : six) CHECK(c.words_per_rank <= 100 * 100 / 12 + 100 * 4);

    const std::string e7 = [] {
        try { choose_symmetric_layout(7, 100, 4); } catch (const Error& e) { return std::string(e.what()); }
        return std::string();
    }();
    CHECK(e7.find("7 ranks fit no symmetric pattern") != std::string::npos);
    CHECK(e7.find("6 (tbc c=2)") != std::string::npos);
    CHECK(e7.find("8 (sbc r=4)") != std::string::npos);
    CHECK(e7.find("1 of the 7 ranks stay idle") != std::string::npos);

    const std::string e_mem = [] {
        try { choose_symmetric_layout(12, 1000, 10, 1000); } catch (const Error& e) { return std::string(e.what()); }
        return std::string();
    }();
    CHECK(e_mem.find("above the limit of 1000") != std::string::npos);
    CHECK_THROWS_AS(choose_symmetric_layout(0, 10, 1), Error);
    CHECK_THROWS_AS(TriangleBlockCyclic(10, 1, 4), Error);
    CHECK_THROWS_AS(SymmetricBlockCyclic(10, 1, 5), Error);
    CHECK_THROWS_AS(SymmetricBlockCyclic(10, 0, 4), Error);
    CHECK_THROWS_AS(SymmetricBlockCyclic(-1, 2, 4), Error);
}

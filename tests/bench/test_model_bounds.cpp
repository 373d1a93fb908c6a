// `cala-bench model`'s table (bench/model_table.cpp): over the whole P range, no algorithm's
// modelled words fall below the lower bound printed beside it, and the table covers every
// algorithm and P. No MPI: the table is the library's cost model evaluated per rank.

#include <doctest/doctest.h>

#include <map>
#include <set>

#include "model_table.hpp"

using cala::bench::ModelRow;
using cala::bench::ModelSpec;

namespace {

void check_above_bounds(const std::vector<ModelRow>& rows) {
    for (const ModelRow& r : rows) {
        CAPTURE(r.family);
        CAPTURE(r.algorithm);
        CAPTURE(r.ranks);
        CAPTURE(r.plan);
        CAPTURE(r.words);
        CAPTURE(r.memory_words);
        if (!r.bound) continue;
        CHECK(r.words >= *r.bound);
        if (r.bound_mem) CHECK(r.words >= *r.bound_mem);
        if (r.bound_indep) CHECK(r.words >= *r.bound_indep);
    }
}

}  // namespace

TEST_CASE("model >= lower bound for every algorithm, n = 32768, P = 1 .. 16384") {
    const ModelSpec spec{.n = 32768, .nb = 256, .p_max = 16384};

    const std::vector<ModelRow> rows = cala::bench::model_rows(spec);

    check_above_bounds(rows);
    std::map<std::string, std::set<int>> seen;
    for (const ModelRow& r : rows) seen[r.family + "/" + r.algorithm].insert(r.ranks);
    for (const char* a : {"gemm/summa2d-C", "gemm/summa2d-A", "gemm/summa2d-B", "gemm/planner",
                          "potrf/2d", "potrf/planner", "trsm/2d"}) {
        CAPTURE(a);
        CHECK(seen[a].size() == 15);  // P = 1, 2, 4, ..., 16384
    }
    CHECK(seen["gemm/summa3d"].count(16384) == 1);
    CHECK(seen["potrf/replpart"].count(16384) == 1);
    // The bounds are not vacuous: at P = 4096 every GEMM and Cholesky row has a positive bound,
    // and the 3D grid sits closer to the memory-independent bound than 2D SUMMA does.
    double ratio_2d = 0, ratio_3d = 0;
    for (const ModelRow& r : rows) {
        if (r.ranks != 4096 || r.family == "trsm") continue;
        CAPTURE(r.algorithm);
        REQUIRE(r.bound);
        CHECK(*r.bound > 0);
        if (r.algorithm == "summa2d-C") ratio_2d = r.words / *r.bound_indep;
        if (r.algorithm == "summa3d") ratio_3d = r.words / *r.bound_indep;
    }
    CHECK(ratio_3d < ratio_2d);
}

TEST_CASE("model >= lower bound when there are more ranks than blocks (n = 4096)") {
    const ModelSpec spec{.n = 4096, .nb = 256, .p_max = 16384};

    const std::vector<ModelRow> rows = cala::bench::model_rows(spec);

    CHECK(rows.size() > 100);
    check_above_bounds(rows);
}

TEST_CASE("at P = 1 nothing moves and no bound is positive") {
    const ModelSpec spec{.n = 1024, .nb = 128, .p_max = 1};

    const std::vector<ModelRow> rows = cala::bench::model_rows(spec);

    REQUIRE(!rows.empty());
    for (const ModelRow& r : rows) {
        CAPTURE(r.algorithm);
        CHECK(r.words == 0);
        if (r.bound) CHECK(*r.bound == 0);
    }
}

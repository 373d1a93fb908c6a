// The rows of `cala-bench model` (model_table.hpp): the library's exact per-rank costs, maxima
// over ranks, beside the lower bounds.

#include "model_table.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <utility>

#include "cala/cholesky.hpp"
#include "cala/grid.hpp"
#include "cala/model.hpp"

namespace cala::bench {

namespace {

// Ranks whose exact cost is evaluated: all of them up to spec.exact_up_to, else `probes`
// evenly spread ones (rank 0 and P-1 included: the corners of block-cyclic layouts).
std::vector<int> probe_ranks(int nranks, const ModelSpec& spec) {
    std::vector<int> out;
    if (nranks <= spec.exact_up_to) {
        for (int r = 0; r < nranks; ++r) out.push_back(r);
        return out;
    }
    const int s = std::max(2, spec.probes);
    for (int x = 0; x < s; ++x)
        out.push_back(static_cast<int>(std::int64_t(x) * (nranks - 1) / (s - 1)));
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

// Maxima over the probed ranks of cost(rank) and of what the rank holds.
void fill_maxima(ModelRow& row, const std::vector<int>& ranks, const std::function<Cost(int)>& cost,
                 const std::function<double(int)>& held) {
    row.probed_ranks = static_cast<int>(ranks.size());
    for (int r : ranks) {
        const Cost x = cost(r);
        const double h = held(r);
        row.words = std::max(row.words, double(x.words));
        row.words_recv = std::max(row.words_recv, double(x.words_recv));
        row.msgs = std::max(row.msgs, double(x.msgs));
        row.extra_bytes = std::max(row.extra_bytes, double(x.extra_bytes));
        row.held_words = std::max(row.held_words, h);
        row.memory_words = std::max(row.memory_words, h + double(x.extra_bytes) / sizeof(double));
    }
}

ModelRow make_row(std::string family, std::string algorithm, std::string plan, int nranks, int p,
                  int q, int c) {
    ModelRow row;
    row.family = std::move(family), row.algorithm = std::move(algorithm),
    row.plan = std::move(plan);
    row.ranks = nranks, row.p = p, row.q = q, row.c = c;
    return row;
}

std::string grid_name(int p, int q, int c) {
    return std::to_string(p) + "x" + std::to_string(q) + "x" + std::to_string(c);
}

// The c (or h) of the 3D rows: 2^floor(log2(P)/3), so that P/c is a square or twice one.
int cube_layers(int nranks) {
    int j = 0;
    while ((2 << j) <= nranks) ++j;  // j = floor(log2 P)
    return 1 << (j / 3);
}

void gemm_bounds(ModelRow& row, double n) {
    const double P = row.ranks, F = n * n * n / P, M = row.memory_words;
    row.bound_mem = 2.0 * F / std::sqrt(M) - M;
    row.bound_indep = 3.0 * std::pow(F, 2.0 / 3.0) - row.held_words;
    const double M2 = 3.0 * n * n / P;
    row.bound_2d = 2.0 * F / std::sqrt(M2) - M2;
    row.bound = std::max({*row.bound_mem, *row.bound_indep, 0.0});
    row.bound_name = *row.bound_mem >= *row.bound_indep ? "memory-dependent" : "memory-independent";
    if (row.memory_words <= M2 && *row.bound_2d > *row.bound) {
        row.bound = *row.bound_2d;  // a rank with no more than 2D memory: the 2D bound holds
        row.bound_name = "2D";
    }
}

void gemm_rows(const ModelSpec& spec, int nranks, std::vector<ModelRow>& out) {
    const auto [p, q] = Grid2D::squarest(nranks);
    const index_t n = spec.n, nb = spec.nb;
    const BlockCyclic l(n, n, nb, nb, p, q);
    const std::vector<int> ranks = probe_ranks(nranks, spec);
    auto held = [&](int r) {
        return 3.0 * double(l.rows.local_size(r / q)) * double(l.cols.local_size(r % q));
    };
    auto add = [&](const std::string& name, const GemmOptions& o, int pp, int qq, int cc,
                   const std::string& plan) {
        ModelRow row = make_row("gemm", name, plan, nranks, pp, qq, cc);
        fill_maxima(
            row, ranks,
            [&](int r) {
                return gemm_cost(Op::N, Op::N, l, l, l, o, GridOrder::RowMajor, r, 8, false);
            },
            held);
        gemm_bounds(row, double(n));
        out.push_back(row);
    };
    for (Variant v : {Variant::StationaryC, Variant::StationaryA, Variant::StationaryB})
        add(std::string("summa2d-") + to_string(v), {.variant = v}, p, q, 1,
            std::string(to_string(v)) + " " + grid_name(p, q, 1) + " nb=" + std::to_string(nb));
    // 2.5D with c = 4 and 3D with c = 2^floor(log2(P)/3): the planner's best variant and block
    // size on that grid (GemmOptions::grid3d forces the grid, not the variant).
    std::vector<int> layers{4, cube_layers(nranks)};
    if (layers[1] == 4) layers.pop_back();
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const int c = layers[i];
        if (c < 2 || nranks < 2 * c) continue;
        const auto [p3, q3] = Grid2D::squarest(nranks / c);
        const GemmOptions o{.grid3d = {p3, q3, c}};
        const GemmPlanInfo info =
            plan_gemm(Op::N, Op::N, l, l, l, GridOrder::RowMajor, o, 8, false);
        add(i == 0 ? "summa2.5d-c4" : "summa3d", o, p3, q3, c, info.describe());
    }
    // The planner's own choice, then its exact cost (the choice forced, so that every rank's
    // cost does not plan again).
    const GemmPlanInfo info = plan_gemm(Op::N, Op::N, l, l, l, GridOrder::RowMajor, {}, 8, false);
    GemmOptions chosen{.variant = info.variant};
    if (!info.user_grid) chosen.grid3d = info.grid, chosen.block_size = info.block_size;
    add("planner", chosen, info.grid.p, info.grid.q, info.grid.c, info.describe());
}

void potrf_rows(const ModelSpec& spec, int nranks, std::vector<ModelRow>& out) {
    const auto [p, q] = Grid2D::squarest(nranks);
    const index_t n = spec.n, nb = spec.nb;
    const BlockCyclic l(n, n, nb, nb, p, q);
    const std::vector<int> ranks = probe_ranks(nranks, spec);
    auto held = [&](int r) {
        return double(l.rows.local_size(r / q)) * double(l.cols.local_size(r % q));
    };
    auto add = [&](const std::string& name, const CholeskyOptions& o, int pp, int qq, int hh,
                   const std::string& plan) {
        ModelRow row = make_row("potrf", name, plan, nranks, pp, qq, hh);
        fill_maxima(
            row, ranks,
            [&](int r) { return potrf_cost(Uplo::Lower, l, GridOrder::RowMajor, o, r, 8, false); },
            held);
        const double F = double(n) * double(n) * double(n) / (6.0 * nranks), M = row.memory_words;
        row.bound_mem = 2.0 * F / std::sqrt(M) - M;
        row.bound_indep = std::pow(F, 2.0 / 3.0) - row.held_words;
        row.bound = std::max({*row.bound_mem, *row.bound_indep, 0.0});
        row.bound_name =
            *row.bound_mem >= *row.bound_indep ? "memory-dependent" : "memory-independent";
        out.push_back(row);
    };
    add("2d", {.variant = CholeskyVariant::TwoD}, p, q, 1,
        "2D " + grid_name(p, q, 1) + " nb=" + std::to_string(nb));
    const int h = cube_layers(nranks);
    if (h >= 2) {
        const auto [p3, q3] = Grid2D::squarest(nranks / h);
        for (CholeskyVariant v : {CholeskyVariant::Repl, CholeskyVariant::ReplPart}) {
            const CholeskyOptions o{.variant = v, .grid3d = {p3, q3, h}};
            const CholeskyPlanInfo info =
                plan_potrf(Uplo::Lower, l, GridOrder::RowMajor, o, 8, false);
            add(v == CholeskyVariant::Repl ? "repl" : "replpart", o, p3, q3, h, info.describe());
        }
    }
    const CholeskyPlanInfo info = plan_potrf(Uplo::Lower, l, GridOrder::RowMajor, {}, 8, false);
    CholeskyOptions chosen{.variant = info.variant, .block_size = info.block_size};
    if (info.grid.c > 1) chosen.grid3d = info.grid;
    add("planner", chosen, info.grid.p, info.grid.q, info.grid.c, info.describe());
}

void trsm_rows(const ModelSpec& spec, int nranks, std::vector<ModelRow>& out) {
    const auto [p, q] = Grid2D::squarest(nranks);
    const index_t n = spec.n, nb = spec.nb;
    const BlockCyclic l(n, n, nb, nb, p, q);
    ModelRow row = make_row("trsm", "2d", "L, op N, n right-hand sides, " + grid_name(p, q, 1),
                            nranks, p, q, 1);
    fill_maxima(
        row, probe_ranks(nranks, spec),
        [&](int r) { return trsm_cost(Uplo::Lower, Op::N, l, l, {}, r / q, r % q, 8, false); },
        [&](int r) {
            return 2.0 * double(l.rows.local_size(r / q)) * double(l.cols.local_size(r % q));
        });
    out.push_back(row);
}

}  // namespace

std::vector<ModelRow> model_rows(const ModelSpec& spec) {
    std::vector<ModelRow> out;
    auto wants = [&](const char* f) {
        return std::find(spec.families.begin(), spec.families.end(), f) != spec.families.end();
    };
    for (int nranks = 1; nranks <= spec.p_max; nranks *= 2) {
        if (wants("gemm")) gemm_rows(spec, nranks, out);
        if (wants("potrf")) potrf_rows(spec, nranks, out);
        if (wants("trsm")) trsm_rows(spec, nranks, out);
        if (nranks > spec.p_max / 2) break;  // no overflow past INT_MAX / 2
    }
    return out;
}

}  // namespace cala::bench

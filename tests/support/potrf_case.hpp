#pragma once
// One checked cala::potrf run (tests/cholesky): a random SPD matrix (or one whose minor `bad`+1
// fails) on a grid, factored with the given options; checked on every rank: info, the factor
// against A on gathered data (‖A − L·Lᴴ‖ / (n·‖A‖·eps) < 30), the rest bitwise untouched,
// traffic == potrf_cost exactly, workspace <= the model. Returns the measured workspace.

#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "cholesky.hpp"
#include "helpers.hpp"

namespace cala::test {

struct Case {
    index_t n, mb, nb;
    int rsrc, csrc;
    index_t off;  // submatrix offset (both dimensions)
};

template <class T>
std::int64_t run_case(const Grid2D& grid, const Case& c, Uplo uplo, const CholeskyOptions& opts, index_t bad = -1,
                      index_t expect_info = 0) {
    const index_t pn = c.n + c.off;
    DistMatrix<T> parent(grid, pn, pn, c.mb, c.nb, c.rsrc % grid.p(), c.csrc % grid.q());
    randomize(parent.view());
    std::vector<T> g0 = gather(parent.view());
    std::vector<T> spd;
    if (grid.comm().rank() == 0) spd = make_spd(g0, pn, c.off, c.n, bad);
    scatter(spd.data(), pn, parent.view());
    const MatrixRef<T> a = parent.sub(c.off, c.off, c.n, c.n);

    const Cost model = potrf_cost(uplo, a.layout(), grid.order(), opts, grid.comm().rank(), sizeof(T), is_complex_v<T>);
    const std::int64_t mem0 = memory_stats().current_bytes;
    reset_peak_memory();
    reset_traffic();
    const index_t info = potrf(uplo, a, opts);
    const Traffic t = traffic();
    const std::int64_t extra = memory_stats().peak_bytes - mem0;
    const std::vector<T> f = gather(parent.view());

    double err = 0;
    bool untouched = true;
    if (grid.comm().rank() == 0 && bad < 0) {
        err = factor_error(spd, f, pn, c.off, c.n, uplo);
        untouched = rest_untouched(spd, f, pn, c.off, c.n, uplo);
    }
    CAPTURE(c.n);
    CAPTURE(c.mb);
    CAPTURE(c.nb);
    CAPTURE(c.off);
    CAPTURE(uplo_char(uplo));
    const std::string variant = to_string(opts.variant);
    CAPTURE(variant);
    CAPTURE(extra);
    CAPTURE(model.extra_bytes);
    CAPTURE(opts.grid3d.p);
    CAPTURE(opts.grid3d.q);
    CAPTURE(opts.grid3d.c);
    CAPTURE(opts.delay);
    CHECK(all_ranks(info == expect_info, grid));
    CHECK(all_ranks(err < 30.0, grid));
    CHECK(all_ranks(untouched, grid));
    if (bad < 0) {
        if (extra > model.extra_bytes)
            std::fprintf(stderr, "rank %d: n=%lld %s h=%d workspace %lld > model %lld\n", grid.comm().rank(),
                         (long long)c.n, variant.c_str(), opts.grid3d.c, (long long)extra, (long long)model.extra_bytes);
        CHECK(all_ranks(t.words() == model.words && t.words_recv == model.words_recv, grid));
        CHECK(all_ranks(t.msgs() == model.msgs, grid));
        CHECK(all_ranks(extra <= model.extra_bytes, grid));
    }
    return extra;
}

}  // namespace cala::test

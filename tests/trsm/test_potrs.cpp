// cala::potrs with a factor made by sequential LAPACK potrf on gathered data and scattered:
// residual ‖A·X − B‖ / (n·‖A‖·‖X‖·eps) bounded; traffic and workspace equal to potrs_cost.
// (run as: mpiexec.mpich -n N test_potrs, N in {1, 2, 4, 6})

#include <doctest/doctest.h>

#include "kernels/blas.hpp"
#include "support/cholesky.hpp"
#include "trsm/trsm_case.hpp"

using namespace cala;

namespace {

struct Shape {
    index_t n, nrhs, nb, mbb, nbb, oa, ob;
};

const Shape kShapes[] = {
    {0, 2, 2, 2, 2, 0, 0},    // n = 0
    {1, 1, 3, 3, 3, 0, 0},    // 1 x 1
    {7, 3, 4, 4, 2, 0, 0},    // nb divides nothing
    {33, 5, 5, 5, 3, 2, 2},   // aligned submatrices
    {26, 4, 4, 3, 3, 0, 1},   // B does not line up
};

template <class T>
void run_case(const Grid2D& grid, const Shape& s, Uplo uplo, int lookahead) {
    const int root = 0;
    const bool me = grid.comm().rank() == root;
    const index_t n = s.n;
    // On the root: A = G·Gᴴ/n + I (Hermitian positive definite), its factor F with NaN outside the triangle.
    std::vector<T> ga, gf;
    if (me) {
        std::vector<T> g(static_cast<std::size_t>(n * n));
        for (auto& v : g) v = test::random_value<T>(test::rng());
        ga.assign(g.size(), T(0));
        for (index_t i = 0; i < n; ++i) ga[i + i * n] = T(1);
        if (n > 0) kernels::gemm(Op::N, Op::C, n, n, n, T(1) / T(static_cast<real_t<T>>(n)), g.data(), n, g.data(), n,
                                 T(1), ga.data(), n);
        for (index_t j = 0; j < n; ++j)  // exactly Hermitian
            for (index_t i = 0; i < j; ++i) ga[i + j * n] = conj_if(ga[j + i * n], true);
        for (index_t i = 0; i < n; ++i) ga[i + i * n] = T(std::real(ga[i + i * n]));
        gf = ga;
        REQUIRE(kernels::potrf(uplo == Uplo::Lower, n, gf.data(), std::max<index_t>(n, 1)) == 0);
        for (index_t j = 0; j < n; ++j)
            for (index_t i = 0; i < n; ++i)
                if (i != j && (i > j) != (uplo == Uplo::Lower)) gf[i + j * n] = T(std::numeric_limits<real_t<T>>::quiet_NaN());
    }
    DistMatrix<T> F0(grid, n + s.oa, n + s.oa, s.nb, s.nb, 0, grid.q() - 1);
    DistMatrix<T> B0(grid, n + s.ob, s.nrhs + s.ob, s.mbb, s.nbb, 0, 0);
    const MatrixRef<T> f = F0.sub(s.oa, s.oa, n, n), b = B0.sub(s.ob, s.ob, n, s.nrhs);
    scatter(me ? gf.data() : nullptr, n, f, root);
    test::randomize(B0.view());
    const auto gb = gather(b, root);
    const TrsmOptions opts{.lookahead = lookahead};
    const std::int64_t mem0 = test::mark();

    potrs(uplo, f, b, opts);

    const auto got = test::measure(mem0);
    const auto x = gather(b, root);
    const double err = me ? test::potrs_residual(ga, n, gb, x, s.nrhs) : 0.0;
    const Cost model = potrs_cost(uplo, f.layout(), b.layout(), opts, grid.row(), grid.col(), sizeof(T), is_complex_v<T>);
    CAPTURE(grid.p()); CAPTURE(grid.q()); CAPTURE(n); CAPTURE(s.nrhs); CAPTURE(uplo_char(uplo)); CAPTURE(err);
    CAPTURE(got.t.words()); CAPTURE(model.words); CAPTURE(got.t.msgs()); CAPTURE(model.msgs);
    CAPTURE(got.extra); CAPTURE(model.extra_bytes);
    CHECK(test::all_ranks(err < 8.0, grid));
    CHECK(test::all_ranks(test::matches(got, model), grid));
}

}  // namespace

TEST_CASE_TEMPLATE("potrs solves A·X = B with the Cholesky factor and matches the model", T, float, double,
                   std::complex<float>, std::complex<double>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    int count = 0;
    for (auto [p, q] : test::grids(world.size())) {
        const Grid2D grid(world, p, q);
        for (const Shape& s : kShapes)
            for (Uplo uplo : {Uplo::Lower, Uplo::Upper}) run_case<T>(grid, s, uplo, count++ % 3);
    }
}

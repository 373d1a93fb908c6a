// cala::trsm on 2D grids: every uplo x op x diag x type, against the residual of the solve on
// gathered data; traffic and workspace equal to trsm_cost exactly on every rank.
// (run as: mpiexec.mpich -n N test_trsm, N in {1, 2, 4, 6}; grids 1x1, 1x2, 2x1, 2x2, 2x3)

#include <doctest/doctest.h>

#include <cstdlib>

#include "trsm/trsm_case.hpp"

using namespace cala;

namespace {

struct Shape {
    index_t n, nrhs;
    index_t mba, nba, mbb, nbb;  // block sizes of A and B
    bool sources;                // non-zero source processes (B's rows start where A's do)
    index_t oa, ob;              // A = A0(oa:, oa:), B = B0(ob:, ob:)
    bool all_ops;                // every uplo x op x diag, else a sample
};

const Shape kShapes[] = {
    {0, 3, 2, 2, 2, 2, false, 0, 0, false},     // n = 0
    {5, 0, 2, 2, 2, 2, false, 0, 0, false},     // nrhs = 0
    {1, 1, 4, 4, 4, 4, false, 0, 0, false},     // 1 x 1
    {3, 5, 8, 8, 8, 8, true, 0, 0, true},       // smaller than a block
    {13, 7, 4, 4, 4, 3, true, 0, 0, true},      // aligned, nb divides nothing
    {29, 1, 5, 5, 5, 2, false, 0, 0, true},     // one right-hand side
    {23, 9, 3, 3, 4, 2, true, 0, 0, true},      // B's rows do not line up: B moves (2·nrhs < n)
    {19, 11, 4, 3, 4, 4, false, 0, 0, true},    // A without square tiles: A moves
    {10, 8, 3, 3, 2, 2, true, 0, 0, true},      // B's rows do not line up, 2·nrhs >= n: A moves
    {17, 5, 4, 4, 4, 4, true, 3, 1, true},      // submatrices cut blocks differently
    {21, 6, 4, 4, 4, 4, false, 3, 3, true},     // aligned submatrices (first block of 1)
    {64, 13, 6, 6, 6, 5, true, 0, 0, false},    // several steps of lookahead
};

template <class T>
void run_case(const Grid2D& grid, const Shape& s, Uplo uplo, Op op, Diag diag, bool alpha_zero, int lookahead) {
    std::mt19937_64 shared(static_cast<std::uint64_t>(s.n * 131 + s.nrhs));  // same alpha on every rank
    const int p = grid.p(), q = grid.q();
    const int rs = s.sources ? 1 % p : 0, cs = s.sources ? q - 1 : 0;
    DistMatrix<T> A0(grid, s.n + s.oa, s.n + s.oa, s.mba, s.nba, rs, cs);
    DistMatrix<T> B0(grid, s.n + s.ob, s.nrhs + s.ob, s.mbb, s.nbb, rs, 0);
    const MatrixRef<T> a = A0.sub(s.oa, s.oa, s.n, s.n), b = B0.sub(s.ob, s.ob, s.n, s.nrhs);
    test::randomize(B0.view());
    test::triangular(a, uplo, diag);
    const T alpha = alpha_zero ? T(0) : test::random_value<T>(shared) + T(1);
    const auto ga = gather(a), gb = gather(b);
    const std::vector<T> a_local(A0.data(), A0.data() + A0.m_loc() * A0.n_loc());
    const TrsmOptions opts{.lookahead = lookahead};
    const std::int64_t mem0 = test::mark();

    trsm(uplo, op, diag, alpha, a, b, opts);

    const auto got = test::measure(mem0);
    const auto x = gather(b);
    double err = 0;
    if (grid.comm().rank() == 0) err = test::trsm_residual(ga, s.n, uplo, op, diag, alpha, gb, x, s.nrhs);
    const Cost model = alpha_zero ? Cost{} : trsm_cost(uplo, op, a.layout(), b.layout(), opts, grid.row(), grid.col(),
                                                       sizeof(T), is_complex_v<T>);
    const bool a_same = std::equal(a_local.begin(), a_local.end(), A0.data(), [](T u, T v) {
        return u == v || (u != u && v != v);
    });
    CAPTURE(p); CAPTURE(q); CAPTURE(s.n); CAPTURE(s.nrhs); CAPTURE(uplo_char(uplo)); CAPTURE(op_char(op));
    CAPTURE(static_cast<int>(diag)); CAPTURE(alpha_zero); CAPTURE(lookahead); CAPTURE(err);
    CAPTURE(got.t.words()); CAPTURE(model.words); CAPTURE(got.t.msgs()); CAPTURE(model.msgs);
    CAPTURE(got.extra); CAPTURE(model.extra_bytes);
    CHECK(test::all_ranks(err < 4.0, grid));
    CHECK(test::all_ranks(test::matches(got, model), grid));
    CHECK(test::all_ranks(a_same, grid));
}

}  // namespace

TEST_CASE_TEMPLATE("trsm solves op(A)·X = alpha·B and matches the model", T, float, double, std::complex<float>,
                   std::complex<double>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    int count = 0;
    for (auto [p, q] : test::grids(world.size())) {
        const Grid2D grid(world, p, q);
        for (const Shape& s : kShapes)
            for (Uplo uplo : {Uplo::Lower, Uplo::Upper})
                for (Op op : {Op::N, Op::T, Op::C})
                    for (Diag diag : {Diag::NonUnit, Diag::Unit}) {
                        // Past 2 ranks (oversubscribed on CI's 2 cores) a sample that still
                        // covers every combination over the shapes.
                        const bool sample = !s.all_ops || world.size() > 2;
                        if (sample && (count % (s.all_ops ? 7 : 4)) != 0) {
                            ++count;
                            continue;
                        }
                        run_case<T>(grid, s, uplo, op, diag, (count % 29) == 7, count % 3);
                        ++count;
                    }
    }
}

TEST_CASE("trsm with alpha = 0 sets B to zero without reading A or moving anything") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    DistMatrix<double> a(grid, 9, 9, 2, 3), b(grid, 9, 4, 2, 2);
    for (index_t j = 0; j < a.n_loc(); ++j)
        for (index_t i = 0; i < a.m_loc(); ++i) a.local(i, j) = std::numeric_limits<double>::quiet_NaN();
    test::randomize(b.view());
    const std::int64_t mem0 = test::mark();

    trsm(Uplo::Lower, Op::T, Diag::NonUnit, 0.0, a.view(), b.view());

    const auto got = test::measure(mem0);
    bool zero = true;
    for (index_t j = 0; j < b.n_loc(); ++j)
        for (index_t i = 0; i < b.m_loc(); ++i) zero = zero && b.local(i, j) == 0.0;
    CHECK(test::all_ranks(zero, grid));
    CHECK(test::all_ranks(test::matches(got, Cost{}), grid));
}

TEST_CASE("trsm on a column-major grid with deep lookahead") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const auto [p, q] = test::grids(world.size()).back();
    const Grid2D grid(world, p, q, GridOrder::ColumnMajor);
    const Shape s{45, 7, 4, 4, 4, 3, true, 1, 1, true};

    for (int lookahead : {5, 64})
        for (Uplo uplo : {Uplo::Lower, Uplo::Upper})
            for (Op op : {Op::N, Op::T, Op::C}) run_case<double>(grid, s, uplo, op, Diag::NonUnit, false, lookahead);
}

// Opt-in (CALA_TRSM_FUZZ=1): 400 random layouts, offsets, grid orders, ops and lookaheads.
TEST_CASE("fuzz" * doctest::skip(std::getenv("CALA_TRSM_FUZZ") == nullptr)) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    std::mt19937_64 g(12345);
    auto u = [&](int lo, int hi) { return static_cast<index_t>(std::uniform_int_distribution<int>(lo, hi)(g)); };
    for (int it = 0; it < 400; ++it) {
        const auto gr = test::grids(world.size());
        const auto [p, q] = gr[static_cast<std::size_t>(it) % gr.size()];
        const Grid2D grid(world, p, q, it % 2 ? GridOrder::ColumnMajor : GridOrder::RowMajor);
        const index_t mba = u(1, 6);
        const Shape s{u(0, 30), u(0, 9), mba, u(0, 2) ? mba : u(1, 6), u(1, 6), u(1, 4), u(0, 1) == 1, u(0, 5), u(0, 5), true};
        const Uplo uplo = u(0, 1) ? Uplo::Lower : Uplo::Upper;
        const Op op = static_cast<Op>(u(0, 2));
        const Diag diag = u(0, 1) ? Diag::Unit : Diag::NonUnit;
        if (u(0, 1)) run_case<double>(grid, s, uplo, op, diag, u(0, 20) == 0, static_cast<int>(u(0, 3)));
        else run_case<std::complex<float>>(grid, s, uplo, op, diag, false, static_cast<int>(u(0, 3)));
    }
}

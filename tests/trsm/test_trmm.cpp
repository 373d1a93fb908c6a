// cala::trsm(Side::Right, ...) and cala::trmm (both sides) on 2D grids: every side x uplo x op x
// diag x type, against the residual on gathered data; traffic and workspace equal to
// trsm_cost(Side, ...) / trmm_cost exactly on every rank; A untouched.
// (run as: mpiexec.mpich -n N test_trmm, N in {1, 2, 4}; grids 1x1, 1x2, 2x1, 2x2)

#include <doctest/doctest.h>

#include "trsm/trsm_case.hpp"

using namespace cala;

namespace {

struct Shape {
    index_t m, n;                // B is m x n
    index_t mba, nba, mbb, nbb;  // block sizes of A and B
    bool sources;                // non-zero source processes
    index_t oa, ob;              // A = A0(oa:, oa:), B = B0(ob:, ob:)
};

// k (A's order) is m on the left, n on the right: the shapes are used for both sides.
const Shape kShapes[] = {
    {0, 3, 2, 2, 2, 2, false, 0, 0},   // m = 0
    {4, 0, 2, 2, 2, 2, false, 0, 0},   // n = 0
    {1, 1, 4, 4, 4, 4, false, 0, 0},   // 1 x 1
    {3, 5, 8, 8, 8, 8, true, 0, 0},    // smaller than a block
    {13, 11, 4, 4, 4, 3, true, 0, 0},  // block sizes divide nothing
    {7, 17, 3, 3, 2, 5, false, 2, 1},  // offsets, A's tiles and B's blocks differ
    {16, 9, 4, 3, 4, 4, true, 1, 3},   // A without square tiles
};

// Product: max |got - alpha·op(A)·B| (Left) or |got - alpha·B·op(A)| (Right).
template <class T>
double product_error(Side side, const std::vector<T>& a, index_t k, Uplo uplo, Op op, Diag diag, T alpha,
                     const std::vector<T>& b, const std::vector<T>& got, index_t m, index_t n) {
    using LC = std::complex<long double>;
    long double num = 0, den = 0;
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < m; ++i) {
            LC s = 0;
            long double bound = 0;
            for (index_t l = 0; l < k; ++l) {
                const LC t = side == Side::Left ? LC(test::tri_at(a, k, uplo, op, diag, i, l)) * LC(b[l + j * m])
                                                : LC(b[i + l * m]) * LC(test::tri_at(a, k, uplo, op, diag, l, j));
                s += t;
                bound += std::abs(t);
            }
            const long double d = std::abs(LC(got[i + j * m]) - LC(alpha) * s);
            if (!(d == d)) return INFINITY;
            num = std::max(num, d);
            den = std::max(den, std::abs(LC(alpha)) * bound);
        }
    return test::residual_ratio<T>(num, den, k);
}

template <class T>
void run_case(const Grid2D& grid, const Shape& s, bool solve, Side side, Uplo uplo, Op op, Diag diag, bool alpha_zero) {
    std::mt19937_64 shared(static_cast<std::uint64_t>(s.m * 131 + s.n));  // same alpha on every rank
    const int p = grid.p(), q = grid.q();
    const int rs = s.sources ? 1 % p : 0, cs = s.sources ? q - 1 : 0;
    const index_t k = side == Side::Left ? s.m : s.n;
    DistMatrix<T> A0(grid, k + s.oa, k + s.oa, s.mba, s.nba, rs, cs);
    DistMatrix<T> B0(grid, s.m + s.ob, s.n + s.ob, s.mbb, s.nbb, cs % p, rs % q);
    const MatrixRef<T> a = A0.sub(s.oa, s.oa, k, k), b = B0.sub(s.ob, s.ob, s.m, s.n);
    test::randomize(B0.view());
    test::triangular(a, uplo, diag);
    const T alpha = alpha_zero ? T(0) : test::random_value<T>(shared) + T(1);
    const auto ga = gather(a), gb = gather(b);
    const std::vector<T> a_local(A0.data(), A0.data() + A0.m_loc() * A0.n_loc());
    const std::int64_t mem0 = test::mark();

    if (solve) trsm(side, uplo, op, diag, alpha, a, b);
    else trmm(side, uplo, op, diag, alpha, a, b);

    const auto got = test::measure(mem0);
    const auto x = gather(b);
    double err = 0;
    if (grid.comm().rank() == 0) {
        if (solve) err = test::trsm_right_residual(ga, k, uplo, op, diag, alpha, gb, x, s.m);
        else err = product_error(side, ga, k, uplo, op, diag, alpha, gb, x, s.m, s.n);
    }
    const std::size_t es = sizeof(T);
    Cost model;
    if (!alpha_zero)
        model = solve ? trsm_cost(side, uplo, op, a.layout(), b.layout(), {}, grid.row(), grid.col(), es, is_complex_v<T>)
                      : trmm_cost(side, uplo, op, a.layout(), b.layout(), grid.order(), grid.comm().rank(), es,
                                  is_complex_v<T>);
    const bool a_same = std::equal(a_local.begin(), a_local.end(), A0.data(), [](T u, T v) {
        return u == v || (u != u && v != v);
    });
    CAPTURE(p); CAPTURE(q); CAPTURE(s.m); CAPTURE(s.n); CAPTURE(solve); CAPTURE(static_cast<int>(side));
    CAPTURE(uplo_char(uplo)); CAPTURE(op_char(op)); CAPTURE(static_cast<int>(diag)); CAPTURE(alpha_zero);
    CAPTURE(err); CAPTURE(got.t.words()); CAPTURE(model.words); CAPTURE(got.t.msgs()); CAPTURE(model.msgs);
    CAPTURE(got.extra); CAPTURE(model.extra_bytes);
    CHECK(test::all_ranks(err < 4.0, grid));
    CHECK(test::all_ranks(test::matches(got, model), grid));
    CHECK(test::all_ranks(a_same, grid));
}

}  // namespace

TEST_CASE_TEMPLATE("right-side trsm and trmm match the residual and the model", T, float, double,
                   std::complex<float>, std::complex<double>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    int count = 0;
    for (auto [p, q] : test::grids(world.size())) {
        const Grid2D grid(world, p, q);
        for (const Shape& s : kShapes)
            for (bool solve : {true, false})
                for (Side side : {Side::Left, Side::Right})
                    for (Uplo uplo : {Uplo::Lower, Uplo::Upper})
                        for (Op op : {Op::N, Op::T, Op::C})
                            for (Diag diag : {Diag::NonUnit, Diag::Unit}) {
                                ++count;
                                // the left-side solve is test_trsm's; a sample past 2 ranks
                                if (solve && side == Side::Left) continue;
                                if (world.size() > 2 && count % 5 != 0) continue;
                                run_case<T>(grid, s, solve, side, uplo, op, diag, count % 23 == 4);
                            }
    }
}

TEST_CASE("right-side trsm and trmm on a column-major grid") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const auto [p, q] = test::grids(world.size()).back();
    const Grid2D grid(world, p, q, GridOrder::ColumnMajor);
    const Shape s{19, 14, 4, 4, 3, 5, true, 1, 2};

    for (bool solve : {true, false})
        for (Op op : {Op::N, Op::T, Op::C})
            run_case<std::complex<double>>(grid, s, solve, Side::Right, Uplo::Upper, op, Diag::NonUnit, false);
}

TEST_CASE("bad side and shapes are named on every rank, inputs untouched") {
    const Grid2D g(Comm::borrow(MPI_COMM_WORLD));
    DistMatrix<double> a(g, 6, 6, 2, 2), b(g, 6, 4, 2, 2);
    test::randomize(a.view());
    test::randomize(b.view());
    const auto a0 = gather(a.view()), b0 = gather(b.view());

    CHECK(test::error_message([&] { trsm(Side::Right, Uplo::Lower, Op::N, Diag::NonUnit, 1.0, a.view(), b.view()); }) ==
          "trsm: B has 4 columns but A is 6 x 6 (right side)");
    CHECK(test::error_message([&] { trmm(Side::Right, Uplo::Lower, Op::N, Diag::NonUnit, 1.0, a.view(), b.view()); }) ==
          "trmm: B has 4 columns but A is 6 x 6");
    CHECK(test::error_message([&] { trmm(static_cast<Side>(5), Uplo::Lower, Op::N, Diag::NonUnit, 1.0, a.view(), b.view()); }) ==
          "trmm: side is 5, not a Side");
    CHECK(test::error_message([&] { trsm(static_cast<Side>(5), Uplo::Lower, Op::N, Diag::NonUnit, 1.0, a.view(), b.view()); }) ==
          "trsm: side is 5, not a Side");
    CHECK(test::all_ranks(gather(a.view()) == a0 && gather(b.view()) == b0, g));
}

// Bad input to cala::trsm and cala::potrs: cala::Error on every rank, naming the argument; no
// hang; inputs untouched; the grid still works afterwards.
// (run as: mpiexec.mpich -n 2 test_trsm_errors)

#include <doctest/doctest.h>

#include "trsm/trsm_case.hpp"

using namespace cala;

namespace {

struct Operands {
    DistMatrix<double> a, b;
    std::vector<double> a0, b0;
    Operands(const Grid2D& g, index_t n, index_t nrhs) : a(g, n, n, 4, 4), b(g, n, nrhs, 4, 4) {
        test::randomize(b.view());
        test::triangular(a.view(), Uplo::Lower, Diag::NonUnit);
        a0 = local(a), b0 = local(b);
    }
    static std::vector<double> local(const DistMatrix<double>& x) {
        return std::vector<double>(x.data(), x.data() + x.m_loc() * x.n_loc());
    }
    static bool same(const std::vector<double>& u, const std::vector<double>& v) {
        return std::equal(u.begin(), u.end(), v.begin(), v.end(),
                          [](double s, double t) { return s == t || (s != s && t != t); });
    }
    bool untouched() const { return same(local(a), a0) && same(local(b), b0); }
};

}  // namespace

TEST_CASE("A that is not square, and B with the wrong number of rows") {
    const Grid2D g(Comm::borrow(MPI_COMM_WORLD));
    DistMatrix<double> a(g, 10, 12, 4, 4), b(g, 10, 3, 4, 4), c(g, 11, 3, 4, 4);
    Operands x(g, 10, 3);

    CHECK(test::error_message([&] { trsm(Uplo::Lower, Op::N, Diag::NonUnit, 1.0, a.view(), b.view()); }) ==
          "trsm: A is 10 x 12, not square");
    CHECK(test::error_message([&] { trsm(Uplo::Upper, Op::T, Diag::Unit, 1.0, x.a.view(), c.view()); }) ==
          "trsm: B has 11 rows but A is 10 x 10");
    CHECK(test::error_message([&] { potrs(Uplo::Lower, x.a.view(), c.view()); }) ==
          "potrs: B has 11 rows but A is 10 x 10");
    CHECK(x.untouched());
}

TEST_CASE("bad options and enumerations are named") {
    const Grid2D g(Comm::borrow(MPI_COMM_WORLD));
    Operands x(g, 9, 2);

    CHECK(test::error_message([&] {
              trsm(Uplo::Lower, Op::N, Diag::NonUnit, 1.0, x.a.view(), x.b.view(), {.lookahead = -1});
          }) == "trsm: lookahead is -1, must be in [0, 64]");
    CHECK(test::error_message([&] {
              trsm(static_cast<Uplo>(7), Op::N, Diag::NonUnit, 1.0, x.a.view(), x.b.view());
          }) == "trsm: uplo is 7, not a Uplo");
    CHECK(test::error_message([&] {
              trsm(Uplo::Lower, Op::N, static_cast<Diag>(3), 1.0, x.a.view(), x.b.view());
          }) == "trsm: diag is 3, not a Diag");
    CHECK(test::error_message([&] { potrs(Uplo::Upper, x.a.view(), x.b.view(), {.lookahead = 65}); }) ==
          "potrs: lookahead is 65, must be in [0, 64]");
    CHECK(x.untouched());
}

TEST_CASE("matrices on different grids") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D g(world, 1, world.size()), h(world, world.size(), 1);
    DistMatrix<double> a(h, 8, 8, 2, 2), b(g, 8, 3, 2, 2);
    const auto b0 = Operands::local(b);

    CHECK(test::error_message([&] { trsm(Uplo::Lower, Op::N, Diag::NonUnit, 1.0, a.view(), b.view()); }) ==
          "trsm: A lives on a different process grid");
    CHECK(Operands::local(b) == b0);
}

TEST_CASE("negative sizes are rejected where the matrix is made, on every rank") {
    const Grid2D g(Comm::borrow(MPI_COMM_WORLD));
    Operands x(g, 6, 6);

    CHECK_THROWS_WITH_AS(DistMatrix<double>(g, -3, 4, 2, 2), "rows: size is -3, must be >= 0", Error);
    CHECK_THROWS_AS(x.b.sub(2, 2, 4, -1), Error);
}

TEST_CASE("a null pointer with local data on one rank fails on every rank") {
    const Grid2D g(Comm::borrow(MPI_COMM_WORLD));
    Operands x(g, 16, 16);
    const bool last = g.comm().rank() == g.comm().size() - 1;
    const MatrixRef<double> bad(g, x.b.layout(), last ? nullptr : x.b.data(), x.b.ld());

    const auto msg = test::error_message([&] { trsm(Uplo::Lower, Op::N, Diag::NonUnit, 1.0, x.a.view(), bad); });

    CHECK(msg.find("trsm: B is a null pointer with") == 0);
    CHECK(x.untouched());
}

TEST_CASE("ranks passing different arguments fail together, and the grid still works") {
    const Grid2D g(Comm::borrow(MPI_COMM_WORLD));
    Operands x(g, 10, 4);
    const double alpha = g.comm().rank() == 0 ? 2.0 : 1.0;
    const Op op = g.comm().rank() == 0 ? Op::N : Op::T;

    const auto m1 = test::error_message([&] { trsm(Uplo::Lower, Op::N, Diag::NonUnit, alpha, x.a.view(), x.b.view()); });
    const auto m2 = test::error_message([&] { trsm(Uplo::Lower, op, Diag::NonUnit, 1.0, x.a.view(), x.b.view()); });
    CHECK(m1.find("ranks passed different arguments") != std::string::npos);
    CHECK(m2.find("ranks passed different arguments") != std::string::npos);
    CHECK(x.untouched());

    CHECK_NOTHROW(trsm(Uplo::Lower, Op::N, Diag::NonUnit, 1.0, x.a.view(), x.b.view()));
    CHECK_NOTHROW(potrs(Uplo::Lower, x.a.view(), x.b.view()));
}

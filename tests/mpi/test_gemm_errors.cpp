// Bad input to cala::gemm: cala::Error on every rank, naming the argument; no hang; inputs
// untouched; the grid still works afterwards.
// (run as: mpiexec.mpich -n N test_gemm_errors, N in {2, 4})

#include <doctest/doctest.h>

#include "support/helpers.hpp"

using namespace cala;

namespace {

struct Operands {
    DistMatrix<double> a, b, c;
    std::vector<double> a0, b0, c0;
    Operands(const Grid2D& g, index_t m, index_t n, index_t k)
        : a(g, m, k, 4, 4), b(g, k, n, 4, 4), c(g, m, n, 4, 4) {
        test::randomize(a.view());
        test::randomize(b.view());
        test::randomize(c.view());
        a0 = local(a), b0 = local(b), c0 = local(c);
    }
    static std::vector<double> local(const DistMatrix<double>& x) {
        return std::vector<double>(x.data(), x.data() + x.m_loc() * x.n_loc());
    }
    bool untouched() const { return local(a) == a0 && local(b) == b0 && local(c) == c0; }
};

}  // namespace

TEST_CASE("mismatched inner dimensions") {
    const Grid2D g(Comm::borrow(MPI_COMM_WORLD));
    DistMatrix<double> a(g, 10, 300, 4, 4), b(g, 299, 8, 4, 4), c(g, 10, 8, 4, 4);

    const auto msg = test::error_message([&] { gemm(Op::N, Op::N, 1.0, a.view(), b.view(), 0.0, c.view()); });

    CHECK(msg == "gemm: k of op(A) is 300 but k of op(B) is 299");
}

TEST_CASE("wrong shape of C, and bad options, are named") {
    const Grid2D g(Comm::borrow(MPI_COMM_WORLD));
    Operands x(g, 12, 9, 7);
    DistMatrix<double> c2(g, 12, 10, 4, 4);

    CHECK(test::error_message([&] { gemm(Op::N, Op::N, 1.0, x.a.view(), x.b.view(), 1.0, c2.view()); }) ==
          "gemm: op(B) has 9 columns but C has 10");
    CHECK(test::error_message([&] { gemm(Op::T, Op::N, 1.0, x.a.view(), x.b.view(), 1.0, x.c.view()); }) ==
          "gemm: k of op(A) is 12 but k of op(B) is 7");
    CHECK(test::error_message([&] {
              gemm(Op::N, Op::N, 1.0, x.a.view(), x.b.view(), 1.0, x.c.view(), {.lookahead = -1});
          }) == "gemm: lookahead is -1, must be in [0, 64]");
    CHECK(x.untouched());
}

TEST_CASE("matrices on different grids") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D g(world, 1, world.size()), h(world, world.size(), 1);
    DistMatrix<double> a(h, 8, 8, 2, 2), b(g, 8, 8, 2, 2), c(g, 8, 8, 2, 2);
    const auto c0 = Operands::local(c);

    CHECK(test::error_message([&] { gemm(Op::N, Op::N, 1.0, a.view(), b.view(), 0.0, c.view()); }) ==
          "gemm: A lives on a different process grid");
    CHECK(Operands::local(c) == c0);
}

TEST_CASE("negative sizes are rejected where the matrix is made, on every rank") {
    const Grid2D g(Comm::borrow(MPI_COMM_WORLD));

    CHECK_THROWS_WITH_AS(DistMatrix<double>(g, -3, 4, 2, 2), "rows: size is -3, must be >= 0", Error);
    CHECK_THROWS_AS(DistMatrix<double>(g, 4, 4, 0, 2), Error);
    Operands x(g, 6, 6, 6);
    CHECK_THROWS_AS(x.a.sub(2, 2, 5, -1), Error);
}

TEST_CASE("a null pointer with local data on one rank fails on every rank") {
    const Grid2D g(Comm::borrow(MPI_COMM_WORLD));
    Operands x(g, 16, 16, 16);
    const bool last = g.comm().rank() == g.comm().size() - 1;
    const MatrixRef<double> bad(g, x.b.layout(), last ? nullptr : x.b.data(), x.b.ld());

    const auto msg = test::error_message([&] { gemm(Op::N, Op::N, 1.0, x.a.view(), bad, 1.0, x.c.view()); });

    CHECK(msg.find("gemm: B is a null pointer with") == 0);
    CHECK(x.untouched());
}

TEST_CASE("ranks passing different scalars fail together, and the grid still works") {
    const Grid2D g(Comm::borrow(MPI_COMM_WORLD));
    Operands x(g, 10, 10, 10);
    const double alpha = g.comm().rank() == 0 ? 2.0 : 1.0;

    const auto msg = test::error_message([&] { gemm(Op::N, Op::N, alpha, x.a.view(), x.b.view(), 1.0, x.c.view()); });
    CHECK(msg.find("ranks passed different arguments") != std::string::npos);
    CHECK(x.untouched());

    CHECK_NOTHROW(gemm(Op::N, Op::N, 1.0, x.a.view(), x.b.view(), 1.0, x.c.view()));
}

TEST_CASE("a device that does not open fails on every rank before any message, 2D and 3D plans") {
    // Before stop 32, a 3D plan raised the refusal in one rank's local update while the other
    // ranks waited in a redistribution: a hang. Ordinal 4096 exists nowhere (and without
    // libcala_cuda no ordinal opens).
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D g(world);
    Operands x(g, 40, 36, 44);
    const int c = world.size() == 4 ? 2 : world.size();
    for (const Shape3D shape : {Shape3D{}, Shape3D{world.size() / c, 1, c}}) {
        CAPTURE(shape.c);
        GemmOptions o;
        o.devices = "4096";
        o.grid3d = shape;
        if (shape.c > 0) o.variant = Variant::StationaryC;
        reset_traffic();
        const std::string msg = test::error_message([&] { gemm(Op::N, Op::N, 1.0, x.a.view(), x.b.view(), 1.0, x.c.view(), o); });
        CHECK(test::all_ranks(msg.rfind("gemm: ", 0) == 0 && msg.find("4096") != std::string::npos, g));
        CHECK(test::all_ranks(traffic().words() == 0 && traffic().msgs() == 0, g));
        CHECK(x.untouched());
    }
    // The grid still works.
    gemm(Op::N, Op::N, 1.0, x.a.view(), x.b.view(), 0.0, x.c.view());
}

// LARGE (suite 'large', not run by default: 2.3 GB of memory, run once by hand):
// one rank whose local array is more than 2^31 bytes. C (17000 x 17000 doubles = 2.31 GB) :=
// A·B with k = 2 and then C := 2·A·B - C (beta != 0 reads the whole of C), checked against the
// values of the generating formula at every element (no gathered copy: there is no room for one).
// (run as: mpiexec.mpich -n 1 test_large, CALA_TEST_NPROCS=1)

#include <doctest/doctest.h>

#include <cmath>

#include "cala/cala.hpp"

using namespace cala;

namespace {

// a(i, l) and b(l, j): exact in double, and so are their products and sums of two.
double a_at(index_t i, index_t l) { return static_cast<double>((i * 7 + l * 3) % 1024) - 512; }
double b_at(index_t l, index_t j) { return static_cast<double>((j * 5 + l * 11) % 512) - 256; }

}  // namespace

TEST_CASE("a local array past 2^31 bytes: gemm with k = 2 on 17000 x 17000 doubles") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world, 1, 1);
    const index_t n = 17000, k = 2;
    DistMatrix<double> a(grid, n, k, 512, 512), b(grid, k, n, 512, 512), c(grid, n, n, 512, 512);
    REQUIRE(static_cast<double>(c.ld()) * static_cast<double>(c.n_loc()) * sizeof(double) > 2147483648.0);
    for (index_t l = 0; l < k; ++l)
        for (index_t i = 0; i < n; ++i) a.local(i, l) = a_at(i, l);
    for (index_t j = 0; j < n; ++j)
        for (index_t l = 0; l < k; ++l) b.local(l, j) = b_at(l, j);
    auto product = [&](index_t i, index_t j) { return a_at(i, 0) * b_at(0, j) + a_at(i, 1) * b_at(1, j); };

    gemm(Op::N, Op::N, 1.0, a.view(), b.view(), 0.0, c.view(), {.variant = Variant::StationaryC});
    index_t wrong = 0;
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < n; ++i) wrong += c.local(i, j) != product(i, j);
    CHECK(wrong == 0);

    gemm(Op::N, Op::N, 2.0, a.view(), b.view(), -1.0, c.view(), {.variant = Variant::StationaryC});
    wrong = 0;
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < n; ++i) wrong += c.local(i, j) != product(i, j);
    CHECK(wrong == 0);
    // The last element lies 2.31e9 bytes past the first.
    CHECK(&c.local(n - 1, n - 1) - &c.local(0, 0) == n * n - 1);
}

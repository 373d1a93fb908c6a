// Stability of cala::getrf's tournament pivoting (CALU) against partial pivoting (GEPP: LAPACK's
// getrf on the gathered matrix), issue 31 item 4. For each matrix: the growth factor
// max|U| / max|A| and the backward error ‖P·A − L·U‖_F / (n·eps·‖A‖_F) of both; asserted:
// CALU's backward error < 50·max(1, ρ) (units of n·eps; ρ its growth), CALU's growth within 4x GEPP's
// where GEPP's is moderate (< 1e3), and the same info as GEPP (zero columns). Rank 0 prints the
// table docs/lu.md shows (run as: mpiexec.mpich -n N test_lu_stability, N in {2, 4}: a p x 1
// grid, so that every panel goes through a tournament of p candidate sets).

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <random>
#include <string>

#include "kernels/lapack_lu.hpp"
#include "lu/lu_check.hpp"
#include "support/helpers.hpp"

using namespace cala;
using test::all_ranks;

namespace {

// Column-major n x n matrices (built on rank 0).
std::vector<double> random_matrix(index_t n, std::mt19937_64& g) {
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> a(static_cast<std::size_t>(n * n));
    for (double& x : a) x = u(g);
    return a;
}

// Wilkinson's matrix: 1 on the diagonal and in the last column, −1 below the diagonal:
// partial pivoting does not pivot and U's last column grows to 2^(n−1).
std::vector<double> wilkinson(index_t n) {
    std::vector<double> a(static_cast<std::size_t>(n * n), 0.0);
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < n; ++i) a[i + j * n] = i == j || j == n - 1 ? 1.0 : i > j ? -1.0 : 0.0;
    return a;
}

// Vandermonde on Chebyshev points: V(i, j) = x_i^j, x_i = cos(π(i + ½)/n).
std::vector<double> vandermonde(index_t n) {
    std::vector<double> a(static_cast<std::size_t>(n * n));
    for (index_t i = 0; i < n; ++i) {
        const double x = std::cos(std::numbers::pi * (double(i) + 0.5) / double(n));
        double v = 1;
        for (index_t j = 0; j < n; ++j, v *= x) a[i + j * n] = v;
    }
    return a;
}

struct Row {
    std::string name;
    index_t n = 0;
    double growth_calu = 0, growth_gepp = 0, err_calu = 0, err_gepp = 0;
    index_t info_calu = 0, info_gepp = 0;
};

Row measure(const Grid2D& grid, const std::string& name, index_t n, index_t nb, const std::vector<double>& a0) {
    DistMatrix<double> a(grid, n, n, nb, nb);
    scatter(a0.data(), n, a.view());
    std::vector<index_t> ipiv;
    Row row{name, n};
    // TwoD: on p x 1 the planner would move the matrix onto one process row (OneRow), where every
    // panel's pivots are partial pivoting's; here every panel goes through a tournament of p sets.
    row.info_calu = getrf(a.view(), ipiv, {.variant = LuVariant::TwoD});
    const std::vector<double> f = gather(a.view());
    if (grid.comm().rank() == 0) {
        row.growth_calu = test::growth(a0, f, n, n);
        row.err_calu = test::lu_error(a0, f, n, n, ipiv);
        std::vector<double> r = a0;
        std::vector<index_t> rp;
        row.info_gepp = kernels::getrf(n, n, r.data(), n, rp);
        row.growth_gepp = test::growth(a0, r, n, n);
        row.err_gepp = test::lu_error(a0, r, n, n, rp);
        std::printf("| %-24s | %4lld | %10.3g | %10.3g | %8.3g | %8.3g | %3lld / %3lld |\n", name.c_str(), (long long)n,
                    row.growth_gepp, row.growth_calu, row.err_gepp, row.err_calu, (long long)row.info_gepp,
                    (long long)row.info_calu);
    }
    double v[6] = {row.growth_calu, row.growth_gepp, row.err_calu, row.err_gepp, double(row.info_calu),
                   double(row.info_gepp)};
    MPI_Bcast(v, 6, MPI_DOUBLE, 0, grid.comm().get());
    row.growth_calu = v[0], row.growth_gepp = v[1], row.err_calu = v[2], row.err_gepp = v[3];
    row.info_gepp = static_cast<index_t>(v[5]);
    return row;
}

}  // namespace

TEST_CASE("CALU's growth and backward error against partial pivoting") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world, world.size(), 1);
    std::mt19937_64 gen(std::random_device{}());
    const index_t nb = 16;
    if (world.rank() == 0) {
        std::printf("grid %dx1, nb = %lld; backward error ‖PA − LU‖_F / (n·eps·‖A‖_F)\n", world.size(), (long long)nb);
        std::printf("| matrix                   |    n | growth GEPP | growth CALU | err GEPP | err CALU | info GEPP / CALU |\n");
    }
    auto check = [&](const std::string& name, index_t n, const std::vector<double>& a0) {
        const Row r = measure(grid, name, n, nb, a0);
        CAPTURE(name);
        CAPTURE(n);
        CAPTURE(r.err_calu);
        CAPTURE(r.growth_calu);
        CAPTURE(r.growth_gepp);
        const bool moderate = r.growth_gepp < 1e3;
        // Wilkinson's bound: ‖δA‖ <= c·n·eps·ρ·‖A‖ (ρ the growth factor).
        CHECK(all_ranks(r.err_calu < 50.0 * std::max(1.0, r.growth_calu), grid));
        CHECK(all_ranks(!moderate || r.growth_calu <= 4.0 * r.growth_gepp, grid));
        CHECK(all_ranks(r.info_calu == r.info_gepp, grid));
    };
    // Every rank builds the same matrix from rank 0's seed.
    std::uint64_t seed = gen();
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, world.get());
    std::mt19937_64 g(seed);
    for (index_t n : {64, 128, 256}) check("random", n, random_matrix(n, g));
    for (index_t n : {64, 128, 256}) check("Wilkinson", n, wilkinson(n));
    for (index_t n : {32, 64}) check("Vandermonde (Chebyshev)", n, vandermonde(n));
    for (index_t n : {128, 256}) {
        std::vector<double> z = random_matrix(n, g);
        for (index_t j : {index_t{5}, n / 3, n - 1})
            for (index_t i = 0; i < n; ++i) z[i + j * n] = 0;
        check("zero columns 5, n/3, n-1", n, z);
    }
}

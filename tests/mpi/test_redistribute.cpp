// redistribute(op, src -> dst) between random block-cyclic layouts (block sizes, sources,
// submatrix offsets), for every op and type: data vs gathered reference, traffic == model.
// (run as: mpiexec.mpich -n N test_redistribute, N in {1, 2, 4, 6})

#include <doctest/doctest.h>

#include <random>

#include "support/helpers.hpp"

using namespace cala;

namespace {
std::vector<std::pair<int, int>> grids(int n) {
    std::vector<std::pair<int, int>> out;
    for (int p = 1; p <= n; ++p)
        if (n % p == 0) out.emplace_back(p, n / p);
    return out;
}
}  // namespace

TEST_CASE_TEMPLATE("redistribute matches the gathered source and the model", T, float, double,
                   std::complex<float>, std::complex<double>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    std::mt19937 g(1234);  // same layouts on every rank; data stay random per rank
    for (auto [p, q] : grids(world.size())) {
        const Grid2D grid(world, p, q);
        for (int trial = 0; trial < 12; ++trial) {
            const Op op = static_cast<Op>(trial % 3);
            const index_t m = g() % 23, n = g() % 19;
            // Source: a submatrix at an offset of a larger matrix (first block partial).
            const index_t oi = g() % 5, oj = g() % 5;
            DistMatrix<T> big(grid, m + oi + 2, n + oj + 1, 1 + g() % 5, 1 + g() % 5, g() % p, g() % q);
            test::randomize(big.view());
            const MatrixRef<T> src = big.sub(oi, oj, m, n);
            const index_t dm = op == Op::N ? m : n, dn = op == Op::N ? n : m;
            DistMatrix<T> dst(grid, dm, dn, 1 + g() % 6, 1 + g() % 6, g() % p, g() % q);
            const auto s = gather(src);
            reset_traffic();

            redistribute(op, src, dst.view());
            const Traffic t = traffic();

            const auto d = gather(dst.view());
            bool ok = true;
            if (world.rank() == 0)
                for (index_t j = 0; j < dn; ++j)
                    for (index_t i = 0; i < dm; ++i) ok = ok && d[i + j * dm] == test::op_at(op, s, m, i, j);
            const Cost model = redistribute_cost(op, src.layout(), dst.layout(), grid.row(), grid.col());
            CAPTURE(p); CAPTURE(q); CAPTURE(trial);
            CHECK(test::all_ranks(ok, grid));
            CHECK(test::all_ranks(t.words() == model.words && t.msgs() == model.msgs, grid));
        }
    }
}

TEST_CASE("gather and scatter round-trip through any root") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    const int root = world.size() - 1;
    const index_t m = 11, n = 7;
    std::vector<double> global(m * n);
    for (index_t i = 0; i < m * n; ++i) global[i] = double(i);
    DistMatrix<double> a(grid, m, n, 3, 2, 0, grid.q() - 1);

    scatter(world.rank() == root ? global.data() : nullptr, m, a.view(), root);
    const auto back = gather(a.view(), root);

    if (world.rank() == root) CHECK(back == global);
    else CHECK(back.empty());
}

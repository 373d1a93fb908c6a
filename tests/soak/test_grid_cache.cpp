// The 3D grids gemm caches per (shape, communicator): a Gemm3D stays valid when the cache grows
// (a second communicator of the same ranks in another order gets the same shape) and when the
// cache is released, and every communicator is freed with the last holder.
// (run as: mpiexec.mpich -n N test_grid_cache, N in {2, 4})

#include <doctest/doctest.h>

#include "gemm/driver.hpp"
#include "support/helpers.hpp"

using namespace cala;

namespace {

// C := A·B with the stored operands, checked against the reference on gathered data.
bool multiply_matches(Gemm3D<double>& g, const DistMatrix<double>& a, const DistMatrix<double>& b,
                      const DistMatrix<double>& c) {
    g.multiply(1.0, 0.0, c.view());
    const auto ga = gather(a.view()), gb = gather(b.view()), gc = gather(c.view());
    double err = 0;
    if (a.grid().comm().rank() == 0)
        err = test::gemm_error(gc, test::reference_gemm(Op::N, Op::N, a.m(), b.n(), a.n(), 1.0, ga, a.m(), gb, b.m(), 0.0, {}),
                               a.n());
    return test::all_ranks(err < 2.0, a.grid());
}

}  // namespace

TEST_CASE("a Gemm3D survives the growth and the release of the 3D grid cache") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    detail::release_grid3d_cache();
    const Handles base = live_handles();
    const Shape3D shape{1, 1, 2};
    {
        const Grid2D grid(world);
        DistMatrix<double> a(grid, 13, 9, 3, 3), b(grid, 9, 11, 3, 3), c(grid, 13, 11, 3, 3);
        test::randomize(a.view());
        test::randomize(b.view());
        Gemm3D<double> g(Op::N, Op::N, a.view(), b.view(), c.view(), {.grid3d = shape, .block_size = 2});
        CHECK(multiply_matches(g, a, b, c));

        // The same ranks in reverse order: not congruent, so a second cache entry of this shape.
        const Comm reversed = world.split(0, world.size() - 1 - world.rank());
        const Grid2D other(reversed);
        DistMatrix<double> x(other, 5, 4, 2, 2), y(other, 4, 6, 2, 2), z(other, 5, 6, 2, 2);
        gemm(Op::N, Op::N, 1.0, x.view(), y.view(), 0.0, z.view(), {.grid3d = shape});
        CHECK(multiply_matches(g, a, b, c));

        detail::release_grid3d_cache();
        CHECK(multiply_matches(g, a, b, c));
        CHECK(test::all_ranks(live_handles().comms > base.comms, grid));  // g still holds its grid
    }
    detail::release_grid3d_cache();
    int clean = live_handles() == base ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &clean, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    CHECK(clean == 1);
}

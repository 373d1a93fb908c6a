// Bad input to cala::stencil is a cala::Error on every rank, before any communication that could
// hang, with the field untouched; the communicator stays usable afterwards.
// (run as: mpiexec.mpich -n N test_stencil_errors, CALA_TEST_NPROCS=N)

#include <doctest/doctest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "cala/comm.hpp"
#include "cala/error.hpp"
#include "cala/stencil.hpp"

namespace {

using cala::Boundary;
using cala::index_t;
using cala::StencilDomain;

int world_size() {
    int s = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    return s;
}

int world_rank() {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

bool all_ranks(bool ok) {
    int v = ok ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return v == 1;
}

// Runs f; true when it threw cala::Error whose message contains `word`.
template <class F>
bool throws_error(F&& f, const std::string& word) {
    try {
        f();
    } catch (const cala::Error& e) {
        return std::string(e.what()).find(word) != std::string::npos;
    }
    return false;
}

cala::Comm world() { return cala::Comm::borrow(MPI_COMM_WORLD); }

// 1 x P ranks over 10 x (4·P + 1) points (4 on one rank): local extents 10 along x, and 4 or 5
// along y (the smallest is 4).
StencilDomain domain() {
    const int p = world_size();
    return StencilDomain::make_2d(10, 4 * p + (p > 1 ? 1 : 0), 1, p, Boundary::Periodic, Boundary::Dirichlet);
}

}  // namespace

TEST_CASE("a rank grid that does not match the communicator") {
    StencilDomain d = domain();
    d.procs[1] += 1;

    CHECK(all_ranks(throws_error([&] { cala::StencilGrid g(world(), d); }, "does not match")));
    CHECK(all_ranks(throws_error([&] { cala::StencilGrid g(world(), StencilDomain::make_3d(8, 8, 8, 1, 1, 1 + world_size())); },
                                 "does not match")));
}

TEST_CASE("invalid domains") {
    StencilDomain d = domain();
    d.n[0] = -3;
    CHECK(all_ranks(throws_error([&] { cala::StencilGrid g(world(), d); }, "n along x")));
    d = domain();
    d.dim = 4;
    CHECK(all_ranks(throws_error([&] { cala::StencilGrid g(world(), d); }, "dim")));
    d = StencilDomain::make_2d(3, world_size() - 1, 1, world_size());
    if (world_size() > 1) CHECK(all_ranks(throws_error([&] { cala::StencilGrid g(world(), d); }, "at least one point")));
}

TEST_CASE("ranks passing different domains") {
    if (world_size() < 2) return;
    StencilDomain d = domain();
    if (world_rank() == 1) d.n[0] += 1;

    CHECK(all_ranks(throws_error([&] { cala::StencilGrid g(world(), d); }, "different arguments")));
}

TEST_CASE("a halo deeper than a local extent") {
    const cala::StencilGrid g(world(), domain());

    CHECK(all_ranks(throws_error([&] { cala::StencilField<double> u(g, 5); }, "smallest local extent 4")));
    CHECK(all_ranks(throws_error([&] { cala::StencilField<double> u(g, -1); }, "halo is -1")));
}

TEST_CASE_TEMPLATE("bad calls of cala::stencil leave the field untouched", T, float, double) {
    const cala::StencilGrid g(world(), domain());
    cala::StencilField<T> u(g, 4);
    u.fill([](index_t i, index_t j, index_t) { return static_cast<T>(i * 100 + j); });
    const auto before = u.gather(0);
    const auto five = cala::Stencil<T>::five_point();
    const auto wide = cala::Stencil<T>::star(2, 3, std::vector<T>(13, T(0.1)));

    // depth·radius past the smallest local extent (4 along y)
    CHECK(all_ranks(throws_error([&] { cala::stencil(u, five, 10, {.depth = 5}); }, "smallest local extent 4")));
    CHECK(all_ranks(throws_error([&] { cala::stencil(u, wide, 10, {.depth = 2}); }, "exceeds the smallest local extent")));
    // within the extents but past the field's halo
    cala::StencilField<T> shallow(g, 1);
    CHECK(all_ranks(throws_error([&] { cala::stencil(shallow, five, 10, {.depth = 2}); }, "exceeds the field's halo 1")));
    // negative steps, depth 0, wrong dimension
    CHECK(all_ranks(throws_error([&] { cala::stencil(u, five, -1); }, "steps is -1")));
    CHECK(all_ranks(throws_error([&] { cala::stencil(u, five, 3, {.depth = 0}); }, "depth is 0")));
    CHECK(all_ranks(throws_error([&] { cala::stencil(u, cala::Stencil<T>::seven_point(), 3); }, "3D stencil on a 2D")));
    // ranks that disagree on the steps
    if (world_size() > 1)
        CHECK(all_ranks(throws_error([&] { cala::stencil(u, five, world_rank() == 0 ? 3 : 4); }, "different arguments")));

    const auto after = u.gather(0);
    CHECK(all_ranks(before == after));

    // The grid still works.
    cala::stencil(u, five, 3, {.depth = 2});
    CHECK(all_ranks(u.gather(0) != before || world_rank() != 0));
}

TEST_CASE("bad stencils are errors where they are built") {
    const double three[] = {1, 2, 3};
    CHECK(throws_error([&] { cala::Stencil<double>::star(2, 1, three); }, "needs 5"));
    CHECK(throws_error([&] { cala::Stencil<double>::box(3, 1, three); }, "needs 27"));
    CHECK(throws_error([&] { cala::Stencil<double>::star(2, 0, three); }, "radius is 0"));
    CHECK(throws_error([&] { cala::Stencil<double>(2, {{0, 0, 1, 1.0}}); }, "dz = 1"));
    CHECK(throws_error([&] { cala::Stencil<double>(2, {}); }, "no points"));
    CHECK(throws_error([&] { cala::Stencil<double>::preset("13pt"); }, "unknown preset"));
}

// Comm: RAII, split, and the traffic convention of comm.hpp counted exactly.
// (run as: mpiexec.mpich -n N test_comm, N in {1, 2, 4})

#include <doctest/doctest.h>

#include <numeric>
#include <vector>

#include "cala/cala.hpp"
#include "support/helpers.hpp"

using cala::Comm;

TEST_CASE("split gives row and column communicators of a grid") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const auto [p, q] = cala::Grid2D::squarest(world.size());
    cala::Grid2D g(world, p, q);

    CHECK(g.row_comm().size() == q);
    CHECK(g.col_comm().size() == p);
    CHECK(g.row_comm().rank() == g.col());
    CHECK(g.col_comm().rank() == g.row());
    CHECK(g.rank_of(g.row(), g.col()) == g.comm().rank());
    CHECK(g.coords_of(g.comm().rank()) == std::pair{g.row(), g.col()});
}

TEST_CASE("Grid2D that does not match the communicator throws on every rank") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);

    CHECK_THROWS_AS(cala::Grid2D(world, world.size() + 1, 1), cala::Error);
}

TEST_CASE("broadcast, reduce, allreduce and point-to-point are counted as documented") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Comm c = world.dup();
    const int n = c.size(), me = c.rank();
    const std::int64_t w = 1000 + 7 * n;
    std::vector<double> buf(w, me), out(w, 0);
    cala::reset_traffic();

    c.ibcast(buf.data(), w, n - 1).wait();
    c.ireduce_sum(buf.data(), out.data(), w, 0).wait();
    c.iallreduce_sum(buf.data(), w).wait();
    const auto t = cala::traffic();

    // Broadcast from the last rank: value n-1 everywhere; reduce to 0: n·(n-1); allreduce likewise.
    CHECK(buf[0] == double(n) * (n - 1));
    if (me == 0) CHECK(out[w - 1] == double(n) * (n - 1));
    if (n == 1) {
        CHECK(t.words() == 0);
        CHECK(t.msgs() == 0);
    } else {
        CHECK(t.words() == 3 * w + w);  // bcast w, reduce w, allreduce 2w
        CHECK(t.msgs() == 4);
        CHECK(t.bytes_sent + t.bytes_recv == 8 * t.words());
    }
}

TEST_CASE("isend/irecv ring: one message each way per rank, none to self") {
    const Comm c = Comm::borrow(MPI_COMM_WORLD).dup();
    const int n = c.size(), me = c.rank();
    std::vector<std::complex<float>> s(17, {float(me), 1.0f}), r(17);
    cala::reset_traffic();

    {
        auto rr = c.irecv(r.data(), 17, (me + n - 1) % n, 5);
        auto sr = c.isend(s.data(), 17, (me + 1) % n, 5);
        rr.wait();
        sr.wait();
    }
    const auto t = cala::traffic();

    CHECK(r[3].real() == float((me + n - 1) % n));
    CHECK(t.msgs() == (n > 1 ? 2 : 0));
    CHECK(t.words() == (n > 1 ? 34 : 0));
}

TEST_CASE("agree: one rank's failure throws the same error on every rank") {
    const Comm c = Comm::borrow(MPI_COMM_WORLD).dup();
    const std::string mine = c.rank() == c.size() - 1 ? "bad argument on the last rank" : "";

    CHECK_THROWS_WITH_AS(c.agree(mine, 42, "test"), "bad argument on the last rank", cala::Error);
    CHECK_NOTHROW(c.agree("", 42, "test"));
    if (c.size() > 1) CHECK_THROWS_AS(c.agree("", 42 + 2 * c.rank(), "test"), cala::Error);
}

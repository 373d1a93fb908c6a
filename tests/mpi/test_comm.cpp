// Comm: RAII, split, and the traffic convention of comm.hpp counted exactly.
// (run as: mpiexec.mpich -n N test_comm, N in {1, 2, 4})

#include <doctest/doctest.h>

#include <algorithm>
#include <complex>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "cala/cala.hpp"
#include "comm/shared.hpp"
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

TEST_CASE("sums on a two-rank communicator (messages and a local sum): both roots at once, in place or not, completed by test, wait, a move or the destructor") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    if (world.size() % 2 != 0) return;  // pairs of ranks
    const Comm c = world.split(world.rank() / 2, world.rank() % 2);
    REQUIRE(c.size() == 2);
    const int me = c.rank();
    const std::int64_t w = 4099;
    using Z = std::complex<double>;
    auto val = [](int r, std::int64_t i) { return Z(0.25 * double(i) + r, 1.5 - double(r) * double(i)); };
    auto sum = [&](std::int64_t i) { return val(0, i) + val(1, i); };
    std::vector<Z> a(w), b(w), a_out(w, Z(-7)), all(w);
    for (std::int64_t i = 0; i < w; ++i) a[i] = b[i] = all[i] = val(me, i);
    const std::vector<Z> a_in = a;
    cala::reset_traffic();
    const auto h0 = cala::live_handles();
    {
        // Root 0 not in place, root 1 in place, posted together as a 2.5D panel does.
        cala::Request ra = c.ireduce_sum(a.data(), a_out.data(), w, 0);
        cala::Request rb = c.ireduce_sum(b.data(), b.data(), w, 1);
        cala::Request rall = c.iallreduce_sum(all.data(), w);
        CHECK(cala::live_handles().requests - h0.requests == 4);  // a message for each reduce, two for the allreduce
        cala::Request moved = std::move(ra);
        CHECK(ra.done());
        while (!rb.test()) {
        }
        CHECK(rb.done());
        rall.wait();
        CHECK(rall.done());
        // `moved` completes in its destructor.
    }
    CHECK(cala::live_handles() == h0);
    const auto t = cala::traffic();
    int bad_a = 0, bad_b = 0, bad_all = 0;
    for (std::int64_t i = 0; i < w; ++i) {
        if (me == 0 && a_out[i] != sum(i)) ++bad_a;
        if (me == 1 && b[i] != sum(i)) ++bad_b;
        if (all[i] != sum(i)) ++bad_all;  // the same bits on both ranks
    }
    CHECK(bad_a == 0);
    CHECK(bad_b == 0);
    CHECK(bad_all == 0);
    CHECK(a == a_in);  // the send buffer is untouched
    CHECK(t.words() == w + w + 2 * w);  // each reduce w (sent or received), allreduce w each way
    CHECK(t.msgs() == 4);
    CHECK(t.bytes_sent + t.bytes_recv == std::int64_t(sizeof(Z)) * t.words());
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

TEST_CASE("a node-shared region: every rank's writes are seen by all, counted as broadcasts, kept for reuse") {
    const Comm c = Comm::borrow(MPI_COMM_WORLD).dup();
    const int n = c.size(), me = c.rank();
    // MPICH told to treat every other rank as remote (./scripts/test --network) shares nothing.
    const char* nolocal = std::getenv("MPIR_CVAR_NOLOCAL");
    const bool remote = nolocal != nullptr && std::string(nolocal) == "1" && n > 1;
    int same = 0;
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(c.get(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &same);
    MPI_Comm_free(&node);
    CHECK(c.shares_node() == (same == n));
    CHECK(c.shares_node() == c.shares_node());  // cached: no second collective needed
    if (remote) CHECK_FALSE(c.shares_node());
    if (!c.shares_node()) return;

    // Rank r owns elements [r·w, (r+1)·w) of 1000 + 7 (a last rank's part may be shorter).
    const std::int64_t total = 1000 + 7 * n, w = (total + n - 1) / n;
    const std::int64_t before = cala::memory_stats().current_bytes;
    const void* first = nullptr;
    for (int round = 0; round < 2; ++round) {
        cala::reset_traffic();
        cala::detail::SharedRegion region(c, total - round, sizeof(double));  // the second fits the first
        if (round == 0) first = region.data();
        else CHECK(region.data() == first);  // the window is kept on the communicator
        CHECK(cala::memory_stats().current_bytes - before == 8 * cala::detail::SharedRegion::share(total - round, n));
        auto* all = static_cast<double*>(region.data());
        std::vector<std::int64_t> words(static_cast<std::size_t>(n));
        for (int r = 0; r < n; ++r)
            words[static_cast<std::size_t>(r)] = std::max<std::int64_t>(0, std::min(total - round, (r + 1) * w) - r * w);
        for (std::int64_t i = me * w; i < std::min(total - round, (me + 1) * w); ++i) all[i] = 10.0 * i + round;
        region.publish(words, sizeof(double));
        bool seen = true;
        for (std::int64_t i = 0; i < total - round; ++i) seen = seen && all[i] == 10.0 * i + round;
        CHECK(seen);
        const auto t = cala::traffic();
        std::int64_t moved = 0, msgs = 0;
        for (std::int64_t x : words) moved += n > 1 ? x : 0, msgs += n > 1 && x > 0 ? 1 : 0;
        CHECK(t.words() == moved);
        CHECK(t.msgs() == msgs);
        CHECK(t.words_sent == (n > 1 ? words[static_cast<std::size_t>(me)] : 0));
        region.release();
        CHECK(cala::memory_stats().current_bytes == before);
    }
}

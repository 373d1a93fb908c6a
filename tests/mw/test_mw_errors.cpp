// Bad input to mw::gemm: cala::Error on every rank naming the worker or the argument, before
// any communication that could hang; C untouched; a good call works afterwards.
// (run as: mpiexec.mpich -n N test_mw_errors, N in {3, 5})

#include <doctest/doctest.h>

#include <functional>

#include "cala/mw.hpp"
#include "../support/helpers.hpp"

using namespace cala;

namespace {

const Comm& world() {
    static const Comm c = Comm::borrow(MPI_COMM_WORLD);
    return c;
}

bool everywhere(bool ok) {
    int v = ok ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return v == 1;
}


struct Operands {
    index_t m = 20, n = 24, k = 12;
    std::vector<double> a, b, c, c0;
    Operands() : a(m * k, 1.0), b(k * n, 2.0), c(m * n, 3.0), c0(c) {}
    std::string call(const mw::Options& o, const Comm& comm = world(), index_t ldc = 20) {
        return test::error_message(
            [&] { mw::gemm<double>(m, n, k, a.data(), m, b.data(), k, c.data(), ldc, comm, o); });
    }
};

mw::Platform platform(std::int64_t mem) {
    mw::Platform p{8, {}};
    for (int i = 0; i < world().size() - 1; ++i) p.workers.push_back({1e-4, 1e-4, mem});
    return p;
}

}  // namespace

TEST_CASE("a worker whose memory cannot hold one step is named, on every rank") {
    Operands x;
    mw::Options o;
    o.platform = platform(21);
    o.platform->workers[1].m = 4;

    const std::string msg = x.call(o);

    CHECK(msg ==
          "mw::gemm: worker 1 (rank 2) has memory for 4 blocks of 8x8, but one step of the maximum "
          "re-use layout "
          "needs 5 (mu^2 + 4 mu with mu = 1)");
    CHECK(everywhere(x.c == x.c0));
}

TEST_CASE("a memory budget too small for one step is named, with q given or chosen") {
    Operands x;
    mw::Options o;
    o.q = 16;
    o.memory_bytes.assign(world().size() - 1, 1 << 20);
    o.memory_bytes.back() = 4 * 16 * 16 * 8;  // 4 blocks of 16 x 16 doubles
    const int last = world().size() - 1;

    CHECK(x.call(o) ==
          "mw::gemm: worker " + std::to_string(last - 1) + " (rank " + std::to_string(last) +
              ") has memory for 4 blocks of 16x16 (memory_bytes 8192), but one step of the maximum "
              "re-use layout needs 5 (mu^2 + 4 mu with mu = 1)");
    o.q = 0;  // chosen on the master: 32 for these sizes, so 8 KiB holds 1 block
    CHECK(x.call(o).rfind("mw::gemm: worker " + std::to_string(last - 1) + " (rank " +
                              std::to_string(last) +
                              ") has memory for 1 blocks of 32x32 (memory_bytes 8192)",
                          0) == 0);
    CHECK(everywhere(x.c == x.c0));
}

TEST_CASE("no workers, a platform of the wrong size, bad emulation, a bad leading dimension") {
    Operands x;
    mw::Options o;
    o.platform = platform(21);
    const Comm alone = world().split(world().rank(), 0);
    mw::Options wrong = o;
    wrong.platform->workers.pop_back();
    mw::Options emu = o;
    emu.emulation.compute_slowdown.assign(world().size() - 1, 1.0);
    emu.emulation.compute_slowdown[0] = 0.5;

    CHECK(x.call(o, alone) ==
          "mw::gemm: no workers: the communicator has 1 rank (the master only)");
    CHECK(x.call(wrong) == "mw::gemm: the platform describes " +
                               std::to_string(world().size() - 2) +
                               " workers but the communicator has " +
                               std::to_string(world().size() - 1) + " ranks besides the master");
    CHECK(x.call(emu) ==
          "mw::gemm: emulation.compute_slowdown of worker 0 (rank 1) is 0.5, must be >= 1");
    // Only the master holds C: its bad ldc is reported on every rank.
    CHECK(x.call(o, world(), 19) == "mw::gemm: ldc is 19, must be >= max(1, m = 20)");
    CHECK(everywhere(x.c == x.c0));
}

TEST_CASE("after the errors, a good call works") {
    Operands x;
    mw::Options o;
    o.platform = platform(21);

    CHECK(x.call(o).empty());

    // Every element of C: 3 + sum over k of 1·2.
    bool ok = true;
    if (world().rank() == 0)
        for (double v : x.c) ok = ok && v == 3 + 2.0 * x.k;
    CHECK(everywhere(ok));
}

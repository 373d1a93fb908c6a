// mw::gemm on 1 master + 2 or 4 workers: every strategy gives the sequential product; the
// one-port rule and the workers' memory limits hold (tracked by the run, asserted here); the
// traffic of Hom is the model's, message for message.
// (run as: mpiexec.mpich -n N test_mw, N in {3, 5})

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

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

// A heterogeneous platform for the world's workers: memories 5, 12, 21, 32 ... blocks (mu = 1,
// 2, 3, 4), links and speeds differing by up to 3x.
mw::Platform platform(index_t q) {
    mw::Platform p{q, {}};
    const std::int64_t mem[] = {12, 21, 5, 32};
    for (int i = 0; i < world().size() - 1; ++i)
        p.workers.push_back({1e-4 * (1 + i % 3), 2e-4 * (1 + (i + 1) % 3), mem[i % 4]});
    return p;
}

template <class T>
struct Problem {
    index_t m, n, k, lda, ldb, ldc;
    std::vector<T> a, b, c, c0;
    Problem(index_t m_, index_t n_, index_t k_, int master)
        : m(m_), n(n_), k(k_), lda(m_ + 3), ldb(k_ + 1), ldc(m_ + 2) {
        if (world().rank() != master) return;
        a.resize(lda * k), b.resize(ldb * n), c.resize(ldc * n);
        for (auto* v : {&a, &b, &c})
            for (auto& x : *v) x = test::random_value<T>(test::rng());
        c0 = c;
    }
    // Error of the master's C against the sequential C0 + A·B (scaled by eps·(k+2)·|A||B|).
    double error() const {
        if (a.empty()) return 0;
        auto pack = [](const std::vector<T>& x, index_t rows, index_t cols, index_t ld) {
            std::vector<T> y(rows * cols);
            for (index_t j = 0; j < cols; ++j)
                for (index_t i = 0; i < rows; ++i) y[i + j * rows] = x[i + j * ld];
            return y;
        };
        const auto ref = test::reference_gemm(Op::N, Op::N, m, n, k, T(1), pack(a, m, k, lda), m,
                                              pack(b, k, n, ldb), k, T(1), pack(c0, m, n, ldc));
        return test::gemm_error(pack(c, m, n, ldc), ref, k);
    }
    mw::Report run(const mw::Options& o) {
        return mw::gemm<T>(m, n, k, a.empty() ? nullptr : a.data(), lda,
                           b.empty() ? nullptr : b.data(), ldb, c.empty() ? nullptr : c.data(), ldc,
                           world(), o);
    }
};

// The invariants every run must keep, checked on the master with the run's own tracking.
bool invariants_hold(const mw::Report& rep, const mw::Platform& p, int master) {
    if (world().rank() != master) return rep.blocks_peak.size() == 1;
    bool ok = rep.max_port_transfers == 1 && rep.blocks_peak.size() == p.workers.size();
    for (std::size_t i = 0; i < p.workers.size() && ok; ++i)
        ok = rep.blocks_peak[i] <= p.workers[i].m;
    for (int r : rep.enrolled_ranks) ok = ok && rep.blocks_peak[r < master ? r : r - 1] > 0;
    return ok && !rep.enrolled_ranks.empty() && rep.predicted_makespan_s > 0;
}

}  // namespace

TEST_CASE_TEMPLATE(
    "every strategy gives the sequential product and keeps the one-port and memory rules", T, float,
    double) {
    for (mw::Strategy s : mw::all_strategies) {
        CAPTURE(mw::to_string(s));
        Problem<T> pb(70, 90, 50,
                      0);  // 16 x 16 blocks: 5 x 6 blocks of C, 4 along k, partial edges
        mw::Options o;
        o.strategy = s;
        o.platform = platform(16);

        const mw::Report rep = pb.run(o);

        CHECK(everywhere(pb.error() < 4));
        CHECK(everywhere(invariants_hold(rep, *o.platform, 0)));
    }
}

TEST_CASE("the traffic of Hom is the model's, on the master and summed over the workers") {
    Problem<double> pb(64, 96, 40, 0);  // 4 x 6 blocks of C, t = 3 (the last one 8 wide)
    mw::Options o;
    o.strategy = mw::Strategy::Hom;
    o.platform = mw::Platform{16, {}};
    for (int i = 0; i < world().size() - 1; ++i)
        o.platform->workers.push_back({1e-4, 4e-4, 12});  // mu = 2

    const mw::Report rep = pb.run(o);

    // Closed form, independent of the library: K = ceil(r/mu)·ceil(s/mu) chunks of t steps; every
    // C block goes out and back once; step blocks: each chunk gets k·(rows + cols) words in
    // t·(ni + nj) blocks; TASK (6 words) per chunk and STOP per worker; READY_C, READY_STEP
    // per step, READY_RESULT per chunk and DONE per worker come back (1 word each).
    const std::int64_t m = 64, n = 96, k = 40, r = 4, s = 6, t = 3, mu = 2, p = world().size() - 1;
    const std::int64_t R = (r + mu - 1) / mu, S = (s + mu - 1) / mu, K = R * S;
    Traffic want;
    want.msgs_sent = K * 1 + r * s + t * (s * R + r * S) + p;
    want.words_sent = 6 * K + m * n + k * (m * S + n * R) + 6 * p;
    want.msgs_recv = K * (2 + t) + r * s + p;
    want.words_recv = K * (2 + t) + m * n + p;
    if (world().rank() == 0) {
        CHECK(rep.traffic.msgs_sent == want.msgs_sent);
        CHECK(rep.traffic.words_sent == want.words_sent);
        CHECK(rep.traffic.msgs_recv == want.msgs_recv);
        CHECK(rep.traffic.words_recv == want.words_recv);
        CHECK(rep.model.msgs_sent == want.msgs_sent);
        CHECK(rep.model.words_sent == want.words_sent);
        CHECK(rep.model.msgs_recv == want.msgs_recv);
        CHECK(rep.model.words_recv == want.words_recv);
        CHECK(rep.model.data_words_sent == m * n + k * (m * S + n * R));
    }
    // What the workers sent and received is what the master received and sent.
    std::int64_t w[4] = {0, 0, 0, 0};
    if (world().rank() != 0) {
        w[0] = rep.traffic.words_sent, w[1] = rep.traffic.words_recv;
        w[2] = rep.traffic.msgs_sent, w[3] = rep.traffic.msgs_recv;
    }
    MPI_Allreduce(MPI_IN_PLACE, w, 4, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECK(w[0] == want.words_recv);
    CHECK(w[1] == want.words_sent);
    CHECK(w[2] == want.msgs_recv);
    CHECK(w[3] == want.msgs_sent);
    CHECK(everywhere(pb.error() < 4));
    CHECK(everywhere(invariants_hold(rep, *o.platform, 0)));
}

TEST_CASE(
    "a discovered platform, emulated heterogeneity, q from the BLAS rate, another master rank") {
    const int master = world().size() - 1;
    Problem<double> pb(100, 130, 70, master);
    mw::Options o;
    o.master = master;
    o.q = 0;
    o.memory_bytes = {std::int64_t(1) << 22};  // 4 MiB: 512 blocks of 32 x 32 ... 8 of 256 x 256
    o.emulation.compute_slowdown.assign(world().size() - 1, 1.0);
    o.emulation.compute_slowdown[0] = 2;
    o.emulation.link_slowdown.assign(world().size() - 1, 1.0);
    o.emulation.link_slowdown.back() = 3;
    o.poll_interval_s = 20e-6;

    const mw::Report rep = pb.run(o);

    const bool ok =
        world().rank() != master ||
        (rep.platform.q >= 32 && rep.platform.workers.size() == std::size_t(world().size() - 1) &&
         std::all_of(rep.platform.workers.begin(), rep.platform.workers.end(),
                     [&](const mw::Worker& w) {
                         return w.c > 0 && w.w > 0 &&
                                w.m ==
                                    (std::int64_t(1) << 22) / (rep.platform.q * rep.platform.q * 8);
                     }) &&
         rep.discovery_s > 0 && rep.master_cpu_s >= 0);
    CHECK(everywhere(ok));
    CHECK(everywhere(pb.error() < 4));
    CHECK(everywhere(invariants_hold(rep, rep.platform, master)));
}

TEST_CASE("complex<double>, Het, and sizes smaller than one block") {
    for (auto [m, n, k] : {std::array<index_t, 3>{5, 3, 7}, std::array<index_t, 3>{33, 1, 17}}) {
        Problem<std::complex<double>> pb(m, n, k, 0);
        mw::Options o;
        o.platform = platform(16);

        const mw::Report rep = pb.run(o);

        CHECK(everywhere(pb.error() < 4));
        CHECK(everywhere(invariants_hold(rep, *o.platform, 0)));
    }
}

TEST_CASE("an empty product moves nothing and leaves C alone") {
    for (auto [m, n, k] : {std::array<index_t, 3>{0, 5, 5}, std::array<index_t, 3>{5, 5, 0}}) {
        Problem<double> pb(m, n, k, 0);
        mw::Options o;
        o.platform = platform(16);
        const Traffic before = traffic();

        pb.run(o);

        CHECK(everywhere(pb.c == pb.c0));
        CHECK(everywhere((traffic() - before).msgs() == 0));
    }
}

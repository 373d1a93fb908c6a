// The shim's route choice for p?symm_/p?syrk_ (lib/scalapack/sym_route.cpp, hidden in the
// library, built into this test): deterministic, the lowest prediction wins, forced routes and
// their fallbacks, Upper on 2DBC. No MPI. Prints the model's choice for P = 2, 6, 8, 12.

#include <doctest/doctest.h>

#include <cstdio>

#include "scalapack/sym_route.hpp"

namespace {

using cala::BlockCyclic;
using cala::index_t;
using cala::MachineModel;
using cala::Op;
using cala::Side;
using cala::Uplo;
using namespace cala::scalapack;

// The squarest p x q with p <= q, as cala::Grid2D and Cblacs_gridinit callers pick.
std::pair<int, int> squarest(int nranks) {
    int p = 1;
    for (int d = 1; d * d <= nranks; ++d)
        if (nranks % d == 0) p = d;
    return {p, nranks / p};
}

SymProblem symm_problem(int nranks, index_t m, index_t n, index_t nb, Side side = Side::Left,
                        Uplo uplo = Uplo::Lower, bool beta_zero = false) {
    const auto [p, q] = squarest(nranks);
    const index_t ka = side == Side::Left ? m : n;
    SymProblem s;
    s.side = side, s.uplo = uplo, s.beta_zero = beta_zero;
    s.a = BlockCyclic(ka, ka, nb, nb, p, q);
    s.b = s.c = BlockCyclic(m, n, nb, nb, p, q);
    return s;
}

SymProblem syrk_problem(int nranks, index_t n, index_t k, index_t nb, Op op = Op::N, Uplo uplo = Uplo::Lower) {
    const auto [p, q] = squarest(nranks);
    SymProblem s;
    s.rank_k = true, s.uplo = uplo, s.op = op;
    s.a = op == Op::N ? BlockCyclic(n, k, nb, nb, p, q) : BlockCyclic(k, n, nb, nb, p, q);
    s.c = BlockCyclic(n, n, nb, nb, p, q);
    return s;
}

std::size_t argmin(const SymDecision& d) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < d.candidates.size(); ++i)
        if (d.candidates[i].seconds < d.candidates[best].seconds) best = i;
    return best;
}

const MachineModel kMachine{};  // the planner's default constants (no environment)

}  // namespace

TEST_CASE("CALA_SHIM_SYMMETRIC's values") {
    bool bad = true;
    CHECK(parse_symmetric_force(nullptr, &bad) == SymForce::Auto);
    CHECK_FALSE(bad);
    CHECK(parse_symmetric_force("", &bad) == SymForce::Auto);
    CHECK(parse_symmetric_force("auto", &bad) == SymForce::Auto);
    CHECK(parse_symmetric_force("2dbc", &bad) == SymForce::TwoD);
    CHECK(parse_symmetric_force("sbc", &bad) == SymForce::Sbc);
    CHECK(parse_symmetric_force("tbc", &bad) == SymForce::Tbc);
    CHECK_FALSE(bad);
    CHECK(parse_symmetric_force("TBC", &bad) == SymForce::Auto);
    CHECK(bad);
}

TEST_CASE("the decision is deterministic and picks the lowest prediction, 2DBC on ties") {
    for (const SymProblem& p : {symm_problem(6, 200, 120, 8), symm_problem(8, 96, 300, 16, Side::Right),
                                syrk_problem(12, 256, 4096, 32), syrk_problem(6, 90, 40, 6, Op::T),
                                symm_problem(12, 512, 2048, 64, Side::Left, Uplo::Lower, true)}) {
        const SymDecision d1 = decide_symmetric(p, SymForce::Auto, kMachine);
        const SymDecision d2 = decide_symmetric(p, SymForce::Auto, kMachine);

        REQUIRE(d1.candidates.size() >= 2);  // every count above fits a pattern
        CHECK(d1.candidates.size() == d2.candidates.size());
        for (std::size_t i = 0; i < d1.candidates.size(); ++i)
            CHECK(d1.candidates[i].seconds == d2.candidates[i].seconds);
        CHECK(d1.chosen == d2.chosen);
        CHECK(d1.chosen == argmin(d1));
        CHECK(d1.describe() == d2.describe());
    }
}

TEST_CASE("the symmetric route is chosen when its prediction is lower") {
    // SYRK with k >> n on 12 ranks: 2DBC 3 x 4 broadcasts op(A) over 6-rank row sets, TBC c = 3
    // over 4; moving A once and C (n x n, small) twice costs less than the saving.
    const SymProblem p = syrk_problem(12, 512, 8192, 32);

    const SymDecision d = decide_symmetric(p, SymForce::Auto, kMachine);

    REQUIRE(d.pick().layout.has_value());
    CHECK(d.pick().layout->kind == cala::SymmetricKind::TBC);
    CHECK(d.pick().seconds < d.candidates[0].seconds);
    MESSAGE(d.describe());

    // and with words made free (bandwidth huge, latency zero), the flop balance decides alone
    const MachineModel flops_only{0.0, 1e-30, kMachine.seconds_per_flop};
    const SymDecision f = decide_symmetric(p, SymForce::Auto, flops_only);
    CHECK(f.chosen == argmin(f));
}

TEST_CASE("2DBC stays when it is predicted cheaper") {
    // SYRK on 8 ranks, n = k = 4096: the model puts 2 x 4 in place just below SBC r = 4 with its
    // three redistributions (A there, C there and back).
    const SymProblem p = syrk_problem(8, 4096, 4096, 256);

    const SymDecision d = decide_symmetric(p, SymForce::Auto, kMachine);

    REQUIRE(d.candidates.size() == 2);  // 2dbc, SBC r = 4
    CHECK_FALSE(d.pick().layout.has_value());
    CHECK(d.candidates[0].seconds < d.candidates[1].seconds);
    MESSAGE(d.describe());
}

TEST_CASE("forced routes, and their fallbacks to 2DBC") {
    const SymProblem six = symm_problem(6, 100, 60, 4), eight = symm_problem(8, 100, 60, 4);

    const SymDecision sbc6 = decide_symmetric(six, SymForce::Sbc, kMachine);
    const SymDecision tbc6 = decide_symmetric(six, SymForce::Tbc, kMachine);
    const SymDecision sbc8 = decide_symmetric(eight, SymForce::Sbc, kMachine);
    const SymDecision tbc8 = decide_symmetric(eight, SymForce::Tbc, kMachine);
    const SymDecision two8 = decide_symmetric(eight, SymForce::TwoD, kMachine);
    const SymDecision upper = decide_symmetric(symm_problem(6, 100, 60, 4, Side::Left, Uplo::Upper), SymForce::Tbc,
                                               kMachine);
    const SymDecision four = decide_symmetric(syrk_problem(4, 100, 60, 4), SymForce::Auto, kMachine);

    REQUIRE(sbc6.pick().layout.has_value());
    CHECK(sbc6.pick().layout->kind == cala::SymmetricKind::SBCExtended);
    CHECK(sbc6.pick().layout->param == 4);
    REQUIRE(tbc6.pick().layout.has_value());
    CHECK(tbc6.pick().layout->kind == cala::SymmetricKind::TBC);
    CHECK(tbc6.pick().layout->param == 2);
    REQUIRE(sbc8.pick().layout.has_value());
    CHECK(sbc8.pick().layout->kind == cala::SymmetricKind::SBC);
    CHECK(sbc8.pick().name() == "sbc r=4");
    CHECK_FALSE(tbc8.pick().layout.has_value());
    CHECK(tbc8.note.find("forced tbc does not fit") != std::string::npos);
    CHECK(tbc8.describe().find("route=2dbc (tbc)") == 0);
    CHECK_FALSE(two8.pick().layout.has_value());
    CHECK(two8.candidates.size() == 2);  // still predicted, for the log
    CHECK_FALSE(upper.pick().layout.has_value());
    CHECK(upper.candidates.size() == 1);
    CHECK(upper.note.find("UPLO = U") != std::string::npos);
    CHECK(four.candidates.size() == 1);  // 4 ranks fit no pattern
    CHECK(four.note.find("no symmetric pattern fits 4 ranks") != std::string::npos);
}

TEST_CASE("route costs: the phases the shim runs, words equal on both sides of each redistribute") {
    const SymProblem p = syrk_problem(6, 50, 30, 4, Op::T);
    const SymDecision d = decide_symmetric(p, SymForce::Tbc, kMachine);
    REQUIRE(d.pick().layout.has_value());

    std::int64_t sent = 0, recv = 0;
    for (int r = 0; r < 6; ++r) {
        const std::vector<cala::Cost> ph = route_phases(p, d.pick().layout, r);
        REQUIRE(ph.size() == 5);  // op(A) -> rows like C's, -> paired, C -> lower, syrk, lower -> C
        for (std::size_t i = 0; i < ph.size(); ++i)
            if (i != 3) sent += ph[i].words - ph[i].words_recv, recv += ph[i].words_recv;
        CHECK(route_cost(p, d.pick().layout, r).words ==
              ph[0].words + ph[1].words + ph[2].words + ph[3].words + ph[4].words);
    }

    CHECK(sent == recv);
    CHECK(recv > 0);
}

TEST_CASE("the model's choice for P = 2, 6, 8, 12 (printed)") {
    std::printf("| call | P | n | 2dbc s | best pattern | its s | chosen |\n|---|---|---|---|---|---|---|\n");
    for (const bool rank_k : {false, true})
        for (const int nranks : {2, 6, 8, 12})
            for (const index_t n : {1024, 4096, 16384}) {
                const SymProblem p = rank_k ? syrk_problem(nranks, n, n, 256) : symm_problem(nranks, n, n, 256);

                const SymDecision d = decide_symmetric(p, SymForce::Auto, kMachine);

                CHECK(d.chosen == argmin(d));
                std::size_t best = 1;
                for (std::size_t i = 2; i < d.candidates.size(); ++i)
                    if (d.candidates[i].seconds < d.candidates[best].seconds) best = i;
                std::printf("| %s | %d | %lld | %.4g | %s | %.4g | %s |\n", rank_k ? "syrk" : "symm", nranks,
                            static_cast<long long>(n), d.candidates[0].seconds, d.candidates[best].name().c_str(),
                            d.candidates[best].seconds, d.pick().name().c_str());
            }
}

// cala::stencil on 1, 2, 4, 6 ranks: bit-for-bit against the sequential reference for every
// rank grid, preset, boundary kind and depth (step counts the depth does not divide), and
// measured traffic and work equal to the model.
// (run as: mpiexec.mpich -n N test_stencil, CALA_TEST_NPROCS=N)

#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <type_traits>
#include <random>
#include <string>
#include <vector>

#include "cala/comm.hpp"
#include "cala/stencil.hpp"
#include "stencil_reference.hpp"

namespace {

using cala::Boundary;
using cala::index_t;
using cala::StencilDomain;

int world_size() {
    int s = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    return s;
}

bool all_ranks(bool ok) {
    int v = ok ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return v == 1;
}

// Fresh each call: random on rank 0, broadcast.
std::uint64_t fresh_seed() {
    std::uint64_t s = std::random_device{}() * 0x100000001b3ull + std::random_device{}();
    MPI_Bcast(&s, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    return s;
}

// Rank grids of `size` ranks in `dim` dimensions (all for 2D; a spread of them for 3D).
std::vector<std::array<int, 3>> rank_grids(int size, int dim) {
    std::vector<std::array<int, 3>> out;
    for (int a = 1; a <= size; ++a)
        for (int b = 1; a * b <= size; ++b) {
            if (size % (a * b) != 0) continue;
            const int c = size / (a * b);
            if (dim == 2 && c == 1) out.push_back({a, b, 1});
            if (dim == 3) out.push_back({a, b, c});
        }
    if (dim == 3 && out.size() > 4) {  // keep the spread: first, last and two in between
        const std::size_t n = out.size();
        out = {out[0], out[n / 3], out[2 * n / 3], out[n - 1]};
    }
    return out;
}

// Dirichlet everywhere, periodic everywhere, and mixed (x and z periodic, y Dirichlet; the
// transposed mix is what the transposed rank grids see). float runs the mixed kind only.
template <class T>
std::vector<std::array<Boundary, 3>> boundary_kinds() {
    const Boundary D = Boundary::Dirichlet, P = Boundary::Periodic;
    if (std::is_same_v<T, float>) return {{P, D, P}};
    return {{D, D, D}, {P, P, P}, {P, D, P}};
}

template <class T>
std::vector<cala::Stencil<T>> stencils(int dim) {
    std::mt19937_64 g(12345);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<T> star(1 + 2 * dim * 2), box(dim == 2 ? 25 : 125);
    for (auto& c : star) c = static_cast<T>(u(g) / 8);
    for (auto& c : box) c = static_cast<T>(u(g) / 25);
    if (dim == 2)
        return {cala::Stencil<T>::five_point(), cala::Stencil<T>::nine_point(), cala::Stencil<T>::star(2, 2, star),
                cala::Stencil<T>::box(2, 2, box)};
    return {cala::Stencil<T>::seven_point(), cala::Stencil<T>::twenty_seven_point(), cala::Stencil<T>::star(3, 2, star)};
}

// Small blocks, and (large) 2D blocks of 80 x 100 points or more, whose cycles of 2 steps sweep
// every step's interior while the halo travels (cycles of 3 and 4 only step 1's: their shells
// would exceed half the block).
StencilDomain domain(int dim, std::array<int, 3> p, std::array<Boundary, 3> bc, bool large = false) {
    if (large) return StencilDomain::make_2d(241, 203, p[0], p[1], bc[0], bc[1]);
    return dim == 2 ? StencilDomain::make_2d(23, 19, p[0], p[1], bc[0], bc[1])
                    : StencilDomain::make_3d(13, 11, 10, p[0], p[1], p[2], bc[0], bc[1], bc[2]);
}

index_t min_local_extent(const StencilDomain& d) {
    index_t m = d.min_extent(0);
    for (int i = 1; i < d.dim; ++i) m = std::min(m, d.min_extent(i));
    return m;
}

// Every owned point equals the reference, bit for bit.
template <class T>
bool matches(const cala::StencilField<T>& u, const std::vector<T>& ref) {
    const auto& g = u.grid();
    const auto& dom = g.domain();
    for (index_t k = 0; k < g.n_loc(2); ++k)
        for (index_t j = 0; j < g.n_loc(1); ++j)
            for (index_t i = 0; i < g.n_loc(0); ++i) {
                const index_t gi = g.lo(0) + i, gj = g.lo(1) + j, gk = g.lo(2) + k;
                const T a = u.at(gi, gj, gk), b = ref[gi + dom.n[0] * (gj + dom.n[1] * gk)];
                if (std::memcmp(&a, &b, sizeof(T)) != 0) return false;
            }
    return true;
}

template <class T>
void sweep_everything(int dim, bool large = false) {
    const std::int64_t steps = 5;  // not divided by 2, 3, 4
    const std::uint64_t seed = fresh_seed();
    auto f = [seed](index_t i, index_t j, index_t k) { return cala::test::field_value<T>(seed, i, j, k); };
    const auto sts = stencils<T>(dim);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    // Failures are collected locally and reduced once per rank grid (oversubscribed runs pay
    // milliseconds per synchronization); each rank prints its own on stderr.
    for (const auto& bc : boundary_kinds<T>()) {
        // The reference depends on neither the rank grid nor the depth.
        std::vector<std::vector<T>> refs;
        for (const auto& st : sts)
            refs.push_back(cala::test::reference_sweep(domain(dim, {1, 1, 1}, bc, large), st, seed, steps));
        for (const auto& p : rank_grids(world_size(), dim)) {
            const StencilDomain dom = domain(dim, p, bc, large);
            const cala::StencilGrid grid(cala::Comm::borrow(MPI_COMM_WORLD), dom);
            cala::StencilField<T> u(grid, static_cast<int>(std::min<index_t>(8, min_local_extent(dom))));
            int failures = 0;
            for (std::size_t si = 0; si < sts.size(); ++si) {
                const auto& st = sts[si];
                for (int s : {1, 2, 3, 4}) {
                    if (s * st.radius() > u.halo()) continue;
                    u.fill(f);
                    const bool overlap = s != 3;  // also the path that waits before the interior

                    cala::reset_traffic();
                    const cala::StencilStats stats = cala::stencil(u, st, steps, {.depth = s, .overlap = overlap});
                    const cala::Traffic tr = cala::traffic();

                    const cala::StencilCost m = cala::stencil_cost(dom, grid.coords(), st.shape(), s, steps);
                    const bool bits = matches(u, refs[si]);
                    const bool traffic = tr.msgs() == m.msgs && tr.words() == m.words && tr.msgs_sent == m.msgs_sent &&
                                         tr.words_sent == m.words_sent;
                    const bool work = stats.exchanges == m.exchanges && stats.updates == m.updates &&
                                      stats.redundant_updates == m.redundant_updates;
                    if (!(bits && traffic && work)) {
                        ++failures;
                        std::fprintf(stderr,
                                     "rank %d: %dD grid %dx%dx%d boundary %d%d%d stencil %zu depth %d: bits %d, "
                                     "traffic %d (msgs %lld vs model %lld, words %lld vs %lld), work %d\n",
                                     rank, dim, p[0], p[1], p[2], static_cast<int>(bc[0]), static_cast<int>(bc[1]),
                                     static_cast<int>(bc[2]), si, s, bits, traffic, static_cast<long long>(tr.msgs()),
                                     static_cast<long long>(m.msgs), static_cast<long long>(tr.words()),
                                     static_cast<long long>(m.words), work);
                    }
                }
            }
            CAPTURE(p[0]);
            CAPTURE(p[1]);
            CAPTURE(p[2]);
            CHECK(all_ranks(failures == 0));
        }
    }
}

}  // namespace

TEST_CASE_TEMPLATE("2D stencils match the sequential reference bit for bit, traffic == model", T, float, double) {
    sweep_everything<T>(2);
}

TEST_CASE("2D blocks large enough to sweep every step's interior during the exchange: bits, traffic == model") {
    sweep_everything<double>(2, true);
}

TEST_CASE_TEMPLATE("3D stencils match the sequential reference bit for bit, traffic == model", T, float, double) {
    sweep_everything<T>(3);
}

// 8 steps at depth s = 1, 2, 4, 8 on every rank: the counters equal the model, messages fall
// exactly 8:4:2:1 (faces only, one exchange per s steps), and the result is the reference's.
template <class T>
void messages_fall_by_the_depth(int dim) {
    const auto grids = rank_grids(world_size(), dim);
    const std::array<int, 3> p = grids[grids.size() / 2];
    const Boundary P = Boundary::Periodic, D = Boundary::Dirichlet;
    // Odd extents, periodic x and y (z Dirichlet in 3D); every rank owns >= 8 points along each.
    const StencilDomain dom = dim == 2 ? StencilDomain::make_2d(51, 49, p[0], p[1], P, P)
                                       : StencilDomain::make_3d(49, 51, 53, p[0], p[1], p[2], P, P, D);
    const cala::StencilGrid grid(cala::Comm::borrow(MPI_COMM_WORLD), dom);
    const std::int64_t steps = 8;
    const std::uint64_t seed = fresh_seed();
    auto f = [seed](index_t i, index_t j, index_t k) { return cala::test::field_value<T>(seed, i, j, k); };
    cala::StencilField<T> u(grid, 8);
    const auto sts = dim == 2 ? std::vector{cala::Stencil<T>::five_point(), cala::Stencil<T>::nine_point()}
                              : std::vector{cala::Stencil<T>::seven_point(), cala::Stencil<T>::twenty_seven_point()};
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    bool ok = true;
    for (const auto& st : sts) {
        const auto ref = cala::test::reference_sweep(dom, st, seed, steps);
        std::int64_t msgs1 = -1, model1 = -1;
        for (int s : {1, 2, 4, 8}) {
            u.fill(f);
            cala::reset_traffic();
            const cala::StencilStats stats = cala::stencil(u, st, steps, {.depth = s});
            const cala::Traffic tr = cala::traffic();
            const cala::StencilCost m = cala::stencil_cost(dom, grid.coords(), st.shape(), s, steps);
            if (s == 1) {
                msgs1 = tr.msgs();
                model1 = m.msgs;
            }
            // Every face neighbour that is another rank: one message each way per exchange.
            int faces = 0;
            for (int d = 0; d < dim; ++d)
                for (int side : {-1, 1}) {
                    std::array<int, 3> o{0, 0, 0};
                    o[d] = side;
                    const int nbr = grid.neighbor(o);
                    faces += nbr >= 0 && nbr != rank;
                }
            const bool here = tr.msgs() == m.msgs && tr.words() == m.words && tr.msgs() * s == msgs1 &&
                              m.msgs * s == model1 && m.msgs == 2 * faces * (steps / s) &&
                              stats.exchanges == steps / s && matches(u, ref);
            if (!here)
                std::fprintf(stderr, "rank %d: %dD grid %dx%dx%d, %zu points, s = %d: msgs %lld (model %lld, s = 1: %lld)\n",
                             rank, dim, p[0], p[1], p[2], st.points().size(), s, static_cast<long long>(tr.msgs()),
                             static_cast<long long>(m.msgs), static_cast<long long>(msgs1));
            ok = ok && here;
        }
    }
    CAPTURE(p[0]);
    CAPTURE(p[1]);
    CAPTURE(p[2]);
    CHECK(all_ranks(ok));
}

TEST_CASE("messages per step fall 8:4:2:1 at s = 1, 2, 4, 8, counters == model, 2D and 3D") {
    messages_fall_by_the_depth<double>(2);
    messages_fall_by_the_depth<double>(3);
}

TEST_CASE("gather collects the field, and a second call continues the first") {
    const auto grids = rank_grids(world_size(), 2);
    const std::array<int, 3> p = grids.back();
    const StencilDomain dom = StencilDomain::make_2d(29, 17, p[0], p[1], Boundary::Periodic, Boundary::Dirichlet);
    const cala::StencilGrid grid(cala::Comm::borrow(MPI_COMM_WORLD), dom);
    const std::uint64_t seed = fresh_seed();
    const auto st = cala::Stencil<double>::nine_point();
    const auto ref = cala::test::reference_sweep(dom, st, seed, 9);
    cala::StencilField<double> u(grid, 2);
    u.fill([seed](index_t i, index_t j, index_t k) { return cala::test::field_value<double>(seed, i, j, k); });

    cala::stencil(u, st, 4, {.depth = 2});
    cala::stencil(u, st, 5, {.depth = 1});
    const std::vector<double> all = u.gather(0);

    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK(all_ranks(rank != 0 || std::memcmp(all.data(), ref.data(), sizeof(double) * ref.size()) == 0));
    CHECK(all_ranks(rank == 0 || all.empty()));
}

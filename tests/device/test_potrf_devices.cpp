// cala::potrf on more than one rank with one device named (CholeskyOptions::devices, HostDevice
// memory here): the local arrays go to the device and the resident Cholesky factors them there
// (lib/cholesky/potrf.cpp, potrf_resident; with Repl and a grid, the layered one). Against the
// sequential reference, MPI traffic == resident_potrf_cost on every rank; info of a matrix that
// is not positive definite on every rank; a device too small for the local array: the 2D engine
// (its traffic == potrf_cost), the same factor. (run as: mpiexec.mpich -n N test_potrf_devices,
// N in {2, 4})

#include <doctest/doctest.h>

#include <functional>

#include "cala/cholesky.hpp"
#include "cala/device.hpp"
#include "cala/resident.hpp"
#include "support/cholesky.hpp"
#include "support/helpers.hpp"

using namespace cala;

namespace {

int routes[2];  // cases that ran resident, and on the 2D engine with device updates

template <class T>
void run_case(const Grid2D& g, index_t n, index_t nb, Uplo uplo, std::int64_t cap, index_t bad = -1,
              Shape3D layers = {}) {
    const BlockCyclic l(n, n, nb, nb, g.p(), g.q(), 0, g.q() - 1);
    std::vector<T> spd;
    if (g.comm().rank() == 0) spd = test::make_spd(std::vector<T>(static_cast<std::size_t>(n * n)), n, 0, n, bad);
    DistMatrix<T> a(g, l);
    scatter(spd.data(), n, a.view());
    // layers: the replicated-diagonal 2.5D variant on that grid (passed on to the resident Cholesky).
    const CholeskyOptions opts{.variant = layers.c > 1 ? CholeskyVariant::Repl : CholeskyVariant::Auto,
                               .grid3d = layers, .devices = "host", .max_device_bytes = cap};
    reset_traffic();
    reset_device_traffic();
    const index_t info = potrf(uplo, a.view(), opts);
    const Traffic t = traffic();
    // The 2D engine's updates go through device_gemm (tiles counted); the resident route moves
    // whole local arrays, not tiles.
    const bool resident = test::all_ranks(device_traffic_total().h2d == 0, g);
    ++routes[resident ? 0 : 1];
    const Cost model = resident ? resident_potrf_cost(uplo, l, resident_potrf_options(opts), g.row(), g.col(), sizeof(T),
                                                      is_complex_v<T>, g.order())
                                : potrf_cost(uplo, l, g.order(), opts, g.comm().rank(), sizeof(T), is_complex_v<T>);
    const auto f = gather(a.view());
    double err = 0;
    bool untouched = true;
    if (g.comm().rank() == 0 && bad < 0) {
        err = test::factor_error(spd, f, n, 0, n, uplo);
        untouched = test::rest_untouched(spd, f, n, 0, n, uplo);
    }
    CAPTURE(g.p());
    CAPTURE(g.q());
    CAPTURE(n);
    CAPTURE(uplo_char(uplo));
    CAPTURE(cap);
    CAPTURE(bad);
    CAPTURE(resident);
    CAPTURE(t.words());
    CAPTURE(model.words);
    CHECK(test::all_ranks(info == (bad < 0 ? 0 : bad + 1), g));
    CHECK(test::all_ranks(err < 30.0, g));
    CHECK(test::all_ranks(untouched, g));
    CHECK(test::all_ranks(t.words() == model.words && t.msgs() == model.msgs, g));
    if (cap == 0) CHECK(resident);  // 1 GiB: everything fits
}

}  // namespace

TEST_CASE_TEMPLATE("potrf with one device on several ranks: resident where it fits, 2D where not", T, double,
                   std::complex<float>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    routes[0] = routes[1] = 0;
    // 3 MiB: a 1024 x 512 local array of 8-byte elements does not fit, a 2D update's tiles do.
    constexpr std::int64_t kSmall = std::int64_t{3} << 20;
    for (int p = 1; p <= world.size(); ++p) {
        if (world.size() % p != 0) continue;
        const Grid2D g(world, p, world.size() / p);
        for (Uplo uplo : {Uplo::Lower, Uplo::Upper}) {
            for (index_t n : {1, 23, 64}) run_case<T>(g, n, 4, uplo, 0);
            run_case<T>(g, 1024, 32, uplo, kSmall);
        }
        run_case<T>(g, 29, 4, Uplo::Lower, 0, 17);
        run_case<T>(g, 1024, 32, Uplo::Upper, kSmall, 600);
        if (world.size() > 1)  // Repl on 1 x 1 x P: the layered resident Cholesky
            for (Uplo uplo : {Uplo::Lower, Uplo::Upper}) run_case<T>(g, 37, 4, uplo, 0, -1, {1, 1, world.size()});
    }
    CHECK(routes[0] > 0);
    if (world.size() == 2) CHECK(routes[1] > 0);  // 1 x 2 and 2 x 1: the local array exceeds 3 MiB
}

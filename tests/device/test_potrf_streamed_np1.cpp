// cala::potrf with one device on a 1 x 1 grid (run as: mpiexec.mpich -n 1): the streamed
// Cholesky, not the per-step device_gemm path (no device_gemm tile moves, while a list of two
// devices still moves tiles); the factor against A (‖A − L·Lᴴ‖ / (n·‖A‖·eps) < 30), the rest of
// the parent bitwise untouched, a submatrix view, info of a matrix that is not positive definite,
// a device cap too small for the triangle (cala::Error, A untouched).

#include <doctest/doctest.h>

#include <complex>
#include <cstring>
#include <vector>

#include "cala/cala.hpp"
#include "cala/device.hpp"
#include "support/cholesky.hpp"
#include "device/potrf_streamed.hpp"
#include "support/helpers.hpp"

using namespace cala;

namespace {

template <class T>
std::vector<T> local_copy(const DistMatrix<T>& a) {
    return std::vector<T>(a.data(), a.data() + a.ld() * a.n_loc());
}

template <class T>
void run(const Grid2D& grid, index_t n, index_t off, Uplo uplo, const CholeskyOptions& o, index_t bad = -1) {
    const index_t pn = n + off;
    DistMatrix<T> parent(grid, pn, pn, 16, 16);
    test::randomize(parent.view());
    const std::vector<T> spd = test::make_spd(local_copy(parent), parent.ld(), off, n, bad);
    std::copy(spd.begin(), spd.end(), parent.data());
    const MatrixRef<T> a = parent.view().sub(off, off, n, n);
    reset_device_traffic();

    const index_t info = potrf(uplo, a, o);

    const std::vector<T> f = local_copy(parent);
    CAPTURE(n);
    CAPTURE(off);
    CAPTURE(uplo_char(uplo));
    CHECK(info == bad + 1);
    CHECK(device_traffic_total().h2d == 0);  // not one device_gemm: the streamed engine ran
    if (bad < 0) {
        CHECK(test::factor_error(spd, f, parent.ld(), off, n, uplo) < 30.0);
        CHECK(test::rest_untouched(spd, f, parent.ld(), off, n, uplo));
    }
}

}  // namespace

TEST_CASE_TEMPLATE("cala::potrf on one device of a 1 x 1 grid streams the triangle", T, float, double,
                   std::complex<float>, std::complex<double>) {
    const Grid2D grid(Comm::borrow(MPI_COMM_WORLD), 1, 1);
    const CholeskyOptions o{.devices = "host"};
    for (const Uplo uplo : {Uplo::Lower, Uplo::Upper}) {
        run<T>(grid, 600, 0, uplo, o);  // blocks of 256: 256, 256, 88
        run<T>(grid, 97, 5, uplo, o);
        run<T>(grid, 1, 0, uplo, o);
        run<T>(grid, 300, 0, uplo, o, 270);
    }
}

TEST_CASE("cala::potrf: two devices of a 1 x 1 grid keep the per-step device_gemm path") {
    const Grid2D grid(Comm::borrow(MPI_COMM_WORLD), 1, 1);
    DistMatrix<double> a(grid, 300, 300, 32, 32);
    test::randomize(a.view());
    const std::vector<double> spd = test::make_spd(local_copy(a), a.ld(), 0, 300, -1);
    std::copy(spd.begin(), spd.end(), a.data());
    reset_device_traffic();

    const index_t info = potrf(Uplo::Lower, a.view(), {.devices = "host,host"});

    CHECK(info == 0);
    CHECK(device_traffic_total().h2d > 0);
    CHECK(test::factor_error(spd, local_copy(a), a.ld(), 0, 300, Uplo::Lower) < 30.0);
}

TEST_CASE("cala::potrf: a device cap below the triangle is a cala::Error, A untouched") {
    const Grid2D grid(Comm::borrow(MPI_COMM_WORLD), 1, 1);
    const index_t n = 200;
    DistMatrix<double> a(grid, n, n, 32, 32);
    test::randomize(a.view());
    const std::vector<double> before = local_copy(a);
    const std::int64_t need = device::streamed_potrf_model(n, 256, sizeof(double)).device_bytes;

    const std::string msg = test::error_message([&] {
        potrf(Uplo::Lower, a.view(), {.devices = "host", .max_device_bytes = need - 1});
    });

    CHECK(msg.find("potrf_streamed") != std::string::npos);
    CHECK(std::memcmp(before.data(), a.data(), before.size() * sizeof(double)) == 0);
}

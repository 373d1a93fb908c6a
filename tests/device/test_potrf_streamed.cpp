// The streamed Cholesky on HostDevice (no MPI, no GPU): lower and upper, the four types, n = 0
// and 1, sizes nb does not divide, nb > n; the factor against a sequential reference (n·eps),
// everything outside the triangle bitwise untouched, info of a matrix that is not positive
// definite, a budget too small (cala::Error, the matrix untouched), elements moved == the model
// as counted by a device that watches the copies.

#include <doctest/doctest.h>

#include <complex>
#include <memory>
#include <string>
#include <vector>

#include "kernels/blas.hpp"
#include "potrf_streamed_case.hpp"

using cala::index_t;
using cala::Op;
namespace dev = cala::device;

namespace {

template <class T>
void check_case(index_t n, index_t nb, bool lower, unsigned seed) {
    cala::test::StreamedCase<T> c(n, seed);
    const std::vector<T> a0 = c.a;
    std::vector<T> ref = c.a;
    const index_t ref_info = cala::test::reference_potrf(lower, n, ref, c.ld);
    dev::HostDevice host(std::int64_t{1} << 28, 1);
    cala::test::Counting d(host);
    dev::StreamedPotrfReport rep;

    const index_t info = dev::potrf_streamed<T>(d, lower, n, c.a.data(), c.ld, nb, &rep);

    const dev::StreamedPotrfReport model = dev::streamed_potrf_model(n, nb, sizeof(T));
    CAPTURE(n);
    CAPTURE(nb);
    CAPTURE(lower);
    CHECK(ref_info == 0);
    CHECK(info == 0);
    const double err = cala::test::triangle_error(lower, n, c.a, ref, c.ld);
    CHECK(err < 4.0 * double(n + 1) * double(cala::eps<T>()));
    CHECK(cala::test::outside_untouched(lower, n, c.a, a0, c.ld));
    CHECK(rep == model);
    CHECK(d.h2d == model.h2d_elems);
    CHECK(d.d2h == model.d2h_elems);
    CHECK(d.calls == model.device_calls);
    CHECK(d.peak_bytes() == model.device_bytes);
    CHECK(d.used_bytes() == 0);
}

}  // namespace

TEST_CASE_TEMPLATE("potrf_streamed on HostDevice matches the sequential reference; moves == model", T, float, double,
                   std::complex<float>, std::complex<double>) {
    struct Shape {
        index_t n, nb;
    };
    for (const Shape s : {Shape{0, 8}, Shape{1, 8}, Shape{7, 8}, Shape{8, 8}, Shape{37, 8}, Shape{40, 8},
                          Shape{45, 16}, Shape{20, 64}, Shape{64, 13}})
        for (const bool lower : {true, false}) check_case<T>(s.n, s.nb, lower, unsigned(s.n * 7 + s.nb));
}

TEST_CASE("streamed_potrf_model: the triangle by blocks, one move each way") {
    const dev::StreamedPotrfReport m = dev::streamed_potrf_model(10, 4, 8);  // blocks of 4, 4, 2

    CHECK(m.blocks == 3);
    CHECK(m.h2d_elems == 10 * 4 + 6 * 4 + 2 * 2);
    CHECK(m.d2h_elems == m.h2d_elems);
    CHECK(m.device_bytes == 8 * m.h2d_elems);
    CHECK(m.device_calls == (0 + 1 + 1) + (2 + 1 + 1) + (2 + 1 + 0));
}

TEST_CASE_TEMPLATE("potrf_streamed: a matrix that is not positive definite gives LAPACK's info", T, float, double,
                   std::complex<float>, std::complex<double>) {
    const index_t n = 45, nb = 8;
    for (const index_t bad : {index_t{0}, index_t{5}, index_t{7}, index_t{8}, index_t{30}, n - 1})
        for (const bool lower : {true, false}) {
            cala::test::StreamedCase<T> c(n, 11, bad);
            std::vector<T> ref = c.a, lapack = c.a;
            const index_t ref_info = cala::test::reference_potrf(lower, n, ref, c.ld);
            const index_t lapack_info = cala::kernels::potrf<T>(lower, n, lapack.data(), c.ld);
            dev::HostDevice d(std::int64_t{1} << 24, 1);

            const index_t info = dev::potrf_streamed<T>(d, lower, n, c.a.data(), c.ld, nb);

            CAPTURE(bad);
            CAPTURE(lower);
            CHECK(ref_info == bad + 1);
            CHECK(info == ref_info);
            CHECK(info == lapack_info);
            CHECK(d.used_bytes() == 0);
        }
}

TEST_CASE("potrf_streamed: a budget too small is a cala::Error before anything is written") {
    const index_t n = 50, nb = 16;
    cala::test::StreamedCase<double> c(n, 3);
    const std::vector<double> a0 = c.a;
    const std::int64_t need = dev::streamed_potrf_model(n, nb, sizeof(double)).device_bytes;
    dev::HostDevice d(need - 8, 1);

    std::string msg;
    try {
        dev::potrf_streamed<double>(d, true, n, c.a.data(), c.ld, nb);
    } catch (const cala::Error& e) {
        msg = e.what();
    }

    CHECK(msg.find("potrf_streamed") != std::string::npos);
    CHECK(msg.find(std::to_string(need)) != std::string::npos);
    CHECK(std::memcmp(c.a.data(), a0.data(), a0.size() * sizeof(double)) == 0);
    CHECK(d.used_bytes() == 0);
    CHECK(d.peak_bytes() == 0);
    dev::HostDevice enough(need, 1);
    CHECK(dev::potrf_streamed<double>(enough, true, n, c.a.data(), c.ld, nb) == 0);
}

TEST_CASE("potrf_streamed: bad arguments are a cala::Error") {
    std::vector<double> a(16, 1.0);
    dev::HostDevice d(1 << 20, 1);
    CHECK_THROWS_AS(dev::potrf_streamed<double>(d, true, -1, a.data(), 4), cala::Error);
    CHECK_THROWS_AS(dev::potrf_streamed<double>(d, true, 4, a.data(), 3), cala::Error);
    CHECK_THROWS_AS(dev::potrf_streamed<double>(d, true, 4, a.data(), 4, -2), cala::Error);
    CHECK(a == std::vector<double>(16, 1.0));
}

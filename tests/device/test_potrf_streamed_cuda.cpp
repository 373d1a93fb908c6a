// The streamed Cholesky on a GPU (CudaDevice: cuBLAS herk/gemm/trsm, cuSOLVER potrf, three
// streams) against the same engine on HostDevice, on the same inputs: lower and upper, the four
// types, n = 0, 1, sizes nb does not divide, nb > n, several blocks of 64 and one size past the
// default block; info of a matrix that is not positive definite (equal to the host's, which is
// LAPACK's); a cap too small (cala::Error, the matrix untouched); elements moved == the model,
// the cap never exceeded. Exits 77 (meson: skipped) without a GPU.

#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <complex>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_device.hpp"
#include "potrf_streamed_case.hpp"

using cala::index_t;
namespace dev = cala::device;

namespace {

template <class T>
void against_host(index_t n, index_t nb, bool lower, index_t bad = -1) {
    cala::test::StreamedCase<T> c(n, unsigned(n * 5 + nb), bad);
    const std::vector<T> a0 = c.a;
    std::vector<T> h = c.a;
    dev::HostDevice host(std::int64_t{1} << 31, 0);
    cala::cuda::CudaDevice gpu(0, 0);
    cala::test::Counting counted(gpu);
    dev::StreamedPotrfReport rep;

    const index_t host_info = dev::potrf_streamed<T>(host, lower, n, h.data(), c.ld, nb);
    const index_t info = dev::potrf_streamed<T>(counted, lower, n, c.a.data(), c.ld, nb, &rep);

    const dev::StreamedPotrfReport model = dev::streamed_potrf_model(n, nb, sizeof(T));
    CAPTURE(n);
    CAPTURE(nb);
    CAPTURE(lower);
    CAPTURE(bad);
    CHECK(info == host_info);
    CHECK(info == bad + 1);
    CHECK(rep == model);
    CHECK(counted.h2d == model.h2d_elems);
    CHECK(counted.d2h == model.d2h_elems);
    CHECK(counted.calls == model.device_calls);
    CHECK(gpu.peak_bytes() <= gpu.budget_bytes());
    CHECK(gpu.used_bytes() == 0);
    if (bad < 0) {
        CHECK(cala::test::triangle_error(lower, n, c.a, h, c.ld) < 8.0 * double(n + 1) * double(cala::eps<T>()));
        CHECK(cala::test::outside_untouched(lower, n, c.a, a0, c.ld));
    }
}

}  // namespace

TEST_CASE_TEMPLATE("potrf_streamed on CudaDevice matches HostDevice; moves == model", T, float, double,
                   std::complex<float>, std::complex<double>) {
    struct Shape {
        index_t n, nb;
    };
    for (const Shape s : {Shape{0, 64}, Shape{1, 64}, Shape{63, 64}, Shape{64, 64}, Shape{300, 64}, Shape{257, 100},
                          Shape{100, 512}, Shape{1500, 1024}})
        for (const bool lower : {true, false}) against_host<T>(s.n, s.nb, lower);
}

TEST_CASE_TEMPLATE("potrf_streamed on CudaDevice: info of a matrix that is not positive definite", T, double,
                   std::complex<float>) {
    for (const index_t bad : {index_t{0}, index_t{70}, index_t{128}, index_t{299}})
        for (const bool lower : {true, false}) against_host<T>(300, 64, lower, bad);
}

TEST_CASE("potrf_streamed on CudaDevice: a cap too small is a cala::Error, the matrix untouched") {
    const index_t n = 500, nb = 128;
    cala::test::StreamedCase<double> c(n, 9);
    const std::vector<double> a0 = c.a;
    const std::int64_t need = dev::streamed_potrf_model(n, nb, sizeof(double)).device_bytes;
    cala::cuda::CudaDevice gpu(0, need / 2);

    std::string msg;
    try {
        dev::potrf_streamed<double>(gpu, true, n, c.a.data(), c.ld, nb);
    } catch (const cala::Error& e) {
        msg = e.what();
    }

    CHECK(msg.find("potrf_streamed") != std::string::npos);
    CHECK(std::memcmp(c.a.data(), a0.data(), a0.size() * sizeof(double)) == 0);
    CHECK(gpu.used_bytes() == 0);
}

int main(int argc, char** argv) {
    if (cala::cuda::device_count() == 0) {
        std::printf("test_potrf_streamed_cuda: no CUDA device, skipped\n");
        return 77;
    }
    doctest::Context ctx(argc, argv);
    return ctx.run();
}

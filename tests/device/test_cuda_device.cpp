// CudaDevice against the host backend on the same inputs; exits 77 (meson: skipped) without a GPU.

#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "cala/device.hpp"
#include "cuda_device.hpp"

using cala::index_t;
using cala::Op;

namespace {
double run_both(const std::string& devices, std::int64_t cap, index_t m, index_t n, index_t k, Op oa, Op ob,
                cala::DeviceGemmReport* rep) {
    std::mt19937 g(3);
    std::uniform_real_distribution<double> u(-1, 1);
    const index_t lda = oa == Op::N ? m : k, ldb = ob == Op::N ? k : n;
    std::vector<double> a(lda * (oa == Op::N ? k : m)), b(ldb * (ob == Op::N ? n : k)), c(m * n);
    for (auto* v : {&a, &b, &c})
        for (auto& x : *v) x = u(g);
    auto host = c;
    cala::device_gemm<double>(oa, ob, m, n, k, 1.5, a.data(), lda, b.data(), ldb, 0.5, host.data(), m,
                              {.devices = "host", .tile = 64});
    cala::device_gemm<double>(oa, ob, m, n, k, 1.5, a.data(), lda, b.data(), ldb, 0.5, c.data(), m,
                              {.devices = devices, .max_device_bytes = cap, .tile = 64, .report = rep});
    double e = 0;
    for (std::size_t i = 0; i < c.size(); ++i) e = std::max(e, std::abs(c[i] - host[i]));
    return e;
}
}  // namespace

TEST_CASE("CudaDevice matches HostDevice in regimes (a) and (c), one GPU listed once and twice") {
    for (const char* devs : {"0", "0,0"})
        for (std::int64_t cap : {std::int64_t{0}, std::int64_t{40} * 64 * 64 * 8}) {
            CAPTURE(devs);
            CAPTURE(cap);
            cala::DeviceGemmReport rep;
            CHECK(run_both(devs, cap, 300, 250, 270, Op::N, Op::T, &rep) < 1e-10);
            for (const auto& d : rep.devices) CHECK(d.peak_bytes <= d.budget_bytes);
        }
}

int main(int argc, char** argv) {
    if (cala::cuda::device_count() == 0) {
        std::fprintf(stderr, "test_cuda_device: no CUDA device, skipped\n");
        return 77;
    }
    doctest::Context ctx(argc, argv);
    return ctx.run();
}

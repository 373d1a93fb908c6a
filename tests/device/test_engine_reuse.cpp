// The chunked engine on a host device that behaves like CudaDevice's pool (a TileCache with
// tile identity, invalidation on writes): results vs a naive product, h2d + reused == the
// equation-(1) model, tiles really reused where the plan reloads them, live and physical bytes
// under the cap. What CudaDevice adds to HostDevice, minus the streams, tested without a GPU.

#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "device/chunked.hpp"
#include "device/device.hpp"
#include "device/tile_cache.hpp"

using cala::index_t;
using cala::Op;
namespace dev = cala::device;

namespace {

/// HostDevice's copies and gemm, memory from a TileCache over new[]/delete[].
class CachingHost final : public dev::Device {
public:
    explicit CachingHost(std::int64_t budget)
        : inner_(budget),
          pool_(budget, [this](std::int64_t b) { return alloc(b); }, [this](void* p, std::int64_t b) { free(p, b); },
                "caching-host") {}
    std::string name() const override { return "caching-host"; }
    std::int64_t budget_bytes() const override { return pool_.budget_bytes(); }
    std::int64_t used_bytes() const override { return pool_.live_bytes(); }
    std::int64_t peak_bytes() const override { return pool_.peak_bytes(); }
    void reset_peak() override { pool_.reset_peak(); }
    void* allocate(std::int64_t bytes) override { return pool_.acquire(bytes); }
    void release(void* p, std::int64_t) noexcept override { pool_.release(p); }
    void copy_to_device(const dev::Copy2D& c) override {
        pool_.invalidate(c.dst);
        inner_.copy_to_device(c);
    }
    void copy_to_host(const dev::Copy2D& c) override { inner_.copy_to_host(c); }
    void copy_from_peer(const dev::Copy2D& c, Device& from) override {
        pool_.invalidate(c.dst);
        inner_.copy_from_peer(c, from);
    }
    void gemm(dev::Scalar s, Op oa, Op ob, index_t m, index_t n, index_t k, const void* alpha, const void* a,
              index_t lda, const void* b, index_t ldb, const void* beta, void* c, index_t ldc) override {
        pool_.invalidate(c);
        inner_.gemm(s, oa, ob, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    }
    void synchronize() override {}
    void* load(const dev::Copy2D& src, std::int64_t bytes, bool* moved) override {
        bool hit = false;
        void* p = pool_.acquire(bytes, dev::TileId{src.src, src.ld_src, src.rows, src.cols, src.elem}, hit);
        if (!hit) {
            dev::Copy2D c = src;
            c.dst = p;
            inner_.copy_to_device(c);
        }
        *moved = !hit;
        return p;
    }
    void begin_host_ranges(const std::vector<std::pair<const void*, std::int64_t>>&) override { pool_.forget(); }
    std::int64_t max_physical = 0;

private:
    void* alloc(std::int64_t b) {
        physical_ += b;
        max_physical = std::max(max_physical, physical_);
        return new char[static_cast<std::size_t>(b)];
    }
    void free(void* p, std::int64_t b) {
        physical_ -= b;
        delete[] static_cast<char*>(p);
    }
    dev::HostDevice inner_;
    dev::TileCache pool_;
    std::int64_t physical_ = 0;
};

struct Result {
    double error = 0;
    std::vector<cala::DeviceTraffic> traffic, model;
};

Result run(int g, index_t m, index_t n, index_t k, std::int64_t cap, const cala::DeviceGemmOptions& o, bool beta_nonzero,
           std::vector<std::unique_ptr<CachingHost>>& devs) {
    std::mt19937 rng(9);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> a(m * k), b(n * k), c(m * n), ref(m * n);  // op(B) = B^T: B is n x k
    for (auto* v : {&a, &b, &c})
        for (auto& x : *v) x = u(rng);
    const double alpha = 1.5, beta = beta_nonzero ? -0.5 : 0.0;
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < m; ++i) {
            double s = 0;
            for (index_t l = 0; l < k; ++l) s += a[i + l * m] * b[j + l * n];
            ref[i + j * m] = alpha * s + beta * c[i + j * m];
        }
    devs.clear();
    std::vector<dev::Device*> raw;
    for (int d = 0; d < g; ++d) {
        devs.push_back(std::make_unique<CachingHost>(cap));
        raw.push_back(devs.back().get());
    }
    const auto lp = dev::plan_local(m, n, k, sizeof(double), o, raw);
    Result r;
    dev::chunked_gemm<double>(raw, lp.plan, Op::N, Op::T, m, n, k, alpha, a.data(), m, b.data(), n, beta, c.data(), m,
                              r.traffic);
    for (std::size_t i = 0; i < c.size(); ++i) r.error = std::max(r.error, std::abs(c[i] - ref[i]));
    r.model = dev::model_traffic(lp.shape, lp.plan, beta_nonzero);
    return r;
}

}  // namespace

TEST_CASE("engine on a caching device: A tiles reloaded per block column are found resident") {
    // b = Mt, d = Kt, c = 1: every block column reloads all of A, and with l >= 1 the next
    // column's A is loaded while the current one is live, so it is shared, not copied.
    const index_t t = 8, m = 45, n = 61, k = 53;  // 6 x 8 tiles of C, 7 of k
    for (int g = 1; g <= 3; ++g)
        for (int la = 0; la <= 2; ++la) {
            CAPTURE(g);
            CAPTURE(la);
            std::vector<std::unique_ptr<CachingHost>> devs;
            const std::int64_t cap = 200 * t * t * 8;
            const auto r = run(g, m, n, k, cap, {.devices = "", .tile = t, .b = 6, .c = g, .d = 7, .lookahead = la,
                                                 .regime = 'c'},
                               la % 2 == 1, devs);
            CHECK(r.error < 1e-12 * k);
            std::int64_t reused = 0;
            for (int d = 0; d < g; ++d) {
                CAPTURE(d);
                CHECK(r.traffic[d].h2d + r.traffic[d].reused == r.model[d].h2d);
                CHECK(r.traffic[d].d2d == r.model[d].d2d);
                CHECK(r.traffic[d].d2h == r.model[d].d2h);
                CHECK(devs[d]->peak_bytes() <= cap);
                CHECK(devs[d]->max_physical <= cap);
                reused += r.traffic[d].reused;
            }
            CHECK(reused > 0);
        }
}

TEST_CASE("engine on a caching device under tight caps: model kept, cap kept, results right") {
    const index_t t = 8, m = 45, n = 61, k = 53;
    for (int g = 1; g <= 3; ++g)
        for (std::int64_t tiles : {12, 20, 40, 90, 400}) {
            CAPTURE(g);
            CAPTURE(tiles);
            std::vector<std::unique_ptr<CachingHost>> devs;
            const std::int64_t cap = tiles * t * t * 8;
            const auto r = run(g, m, n, k, cap, {.devices = "", .tile = t}, true, devs);
            CHECK(r.error < 1e-12 * k);
            for (int d = 0; d < g; ++d) {
                CHECK(r.traffic[d].h2d + r.traffic[d].reused == r.model[d].h2d);
                CHECK(r.traffic[d].d2d == r.model[d].d2d);
                CHECK(r.traffic[d].d2h == r.model[d].d2h);
                CHECK(devs[d]->max_physical <= cap);
            }
        }
}

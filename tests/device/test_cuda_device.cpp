// CudaDevice against the host backend on the same inputs: G = 1, 2, 3 (one GPU listed up to
// three times), memory caps forcing regimes (a), (b), (c), sizes the tile does not divide; tiles
// moved == model (h2d + reused on the GPU, whose pool may find a tile resident), the cap never
// exceeded; the pool's LRU eviction and tile reuse; peer copies without a host synchronization.
// Exits 77 (meson: skipped) without a GPU.

#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cala/device.hpp"
#include "cuda_device.hpp"
#include "device/accumulate.hpp"

using cala::index_t;
using cala::Op;

namespace {

std::string list(const char* one, int g) {
    std::string s = one;
    for (int i = 1; i < g; ++i) s += std::string(",") + one;
    return s;
}

struct Inputs {
    index_t m, n, k, lda, ldb, ldc;
    Op oa, ob;
    std::vector<double> a, b, c;
    Inputs(Op oa_, Op ob_, index_t m_, index_t n_, index_t k_, unsigned seed) : m(m_), n(n_), k(k_), oa(oa_), ob(ob_) {
        std::mt19937 g(seed);
        std::uniform_real_distribution<double> u(-1, 1);
        lda = (oa == Op::N ? m : k) + 3, ldb = (ob == Op::N ? k : n) + 1, ldc = m + 2;
        a.resize(lda * (oa == Op::N ? k : m)), b.resize(ldb * (ob == Op::N ? n : k)), c.resize(ldc * n);
        for (auto* v : {&a, &b, &c})
            for (auto& x : *v) x = u(g);
    }
    std::vector<double> run(const cala::DeviceGemmOptions& o, double alpha, double beta) const {
        auto out = c;
        cala::device_gemm<double>(oa, ob, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, out.data(), ldc, o);
        return out;
    }
};

double rel_diff(const std::vector<double>& x, const std::vector<double>& y) {
    double e = 0, r = 1;
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (std::isnan(x[i]) != std::isnan(y[i])) return INFINITY;
        e = std::max(e, std::abs(x[i] - y[i]));
        r = std::max(r, std::abs(y[i]));
    }
    return e / r;
}

/// Same product on g CUDA devices and on g host devices, same cap and plan: results agree, tiles
/// moved agree with each other and with the model, peaks stay under the cap.
cala::DeviceGemmReport compare(const Inputs& in, cala::DeviceGemmOptions o, int g, double alpha, double beta) {
    cala::DeviceGemmReport cuda_rep, host_rep;
    o.devices = list("0", g), o.report = &cuda_rep;
    const auto on_gpu = in.run(o, alpha, beta);
    o.devices = list("host", g), o.report = &host_rep;
    const auto on_host = in.run(o, alpha, beta);

    CHECK(rel_diff(on_gpu, on_host) < 1e-12 * static_cast<double>(in.k));
    CHECK(cuda_rep.regime == host_rep.regime);
    CHECK(cuda_rep.b == host_rep.b);
    CHECK(cuda_rep.d == host_rep.d);
    CHECK(cuda_rep.k_split == host_rep.k_split);
    const index_t t = cuda_rep.tile;
    const auto shape = cala::device::chunked_shape(in.m, in.n, in.k, t, cuda_rep.k_split, g);
    const cala::device::ChunkedPlan plan{t, cuda_rep.b, cuda_rep.c, cuda_rep.d, static_cast<int>(cuda_rep.lookahead),
                                         cuda_rep.regime, cuda_rep.stream_c, cuda_rep.k_split};
    const auto model = cala::device::model_traffic(shape, plan, beta != 0.0);
    REQUIRE(cuda_rep.devices.size() == static_cast<std::size_t>(g));
    for (int d = 0; d < g; ++d) {
        CAPTURE(d);
        const auto& x = cuda_rep.devices[d];
        CHECK(x.h2d + x.reused == model[d].h2d);
        CHECK(host_rep.devices[d].h2d == model[d].h2d);
        CHECK(x.d2d == model[d].d2d);
        CHECK(x.d2h == model[d].d2h);
        CHECK(x.peak_bytes <= x.budget_bytes);
        CHECK(x.peak_bytes <= cala::device::needed_bytes(shape, plan, sizeof(double)));
    }
    return cuda_rep;
}

}  // namespace

TEST_CASE("CudaDevice == HostDevice on 1, 2, 3 devices, all transposes, sizes the tile does not divide") {
    for (int g = 1; g <= 3; ++g)
        for (Op oa : {Op::N, Op::T})
            for (Op ob : {Op::N, Op::T}) {
                CAPTURE(g);
                compare(Inputs(oa, ob, 300, 250, 270, 7), {.devices = "", .tile = 64}, g, 1.5, -0.5);
            }
}

TEST_CASE("CudaDevice == HostDevice under caps forcing regimes (a), (b), (c); C larger than the GPUs") {
    const index_t t = 32, m = 45 * 4, n = 61 * 4, k = 53 * 4;  // 6 x 8 tiles of C, 7 of k
    for (int g = 1; g <= 3; ++g) {
        const cala::device::ChunkedShape shape{6, 8, 7, g};
        std::map<char, std::int64_t> first;
        for (std::int64_t mem = 1; mem <= 400; ++mem) {
            try {
                const auto p = cala::device::plan_chunked(shape, t, mem, {});
                if (!first.count(p.regime)) first[p.regime] = mem;
            } catch (const cala::Error&) {
            }
        }
        CAPTURE(g);
        REQUIRE(first.count('c'));
        for (auto [regime, mem] : first) {
            CAPTURE(regime);
            compare(Inputs(Op::N, Op::T, m, n, k, 11), {.devices = "", .max_device_bytes = mem * t * t * 8, .tile = t}, g, 1.0, 0.25);
        }
        compare(Inputs(Op::T, Op::N, m, n, k, 5),
                {.devices = "", .max_device_bytes = 60 * t * t * 8, .tile = t, .b = 2, .c = 3, .d = 2, .lookahead = 1, .regime = 'b'},
                g, -1.0, 1.0);
    }
}

TEST_CASE("half-depth slabs on the GPU == on the host: forced, and chosen where C exceeds the cap") {
    for (int g = 1; g <= 3; ++g)
        for (Op oa : {Op::N, Op::T})
            for (Op ob : {Op::N, Op::T}) {
                CAPTURE(g);
                compare(Inputs(oa, ob, 300, 250, 270, 13), {.devices = "", .tile = 64, .k_split = 2}, g, 1.5, -0.5);
            }
    // 16 x 16 x 16 tiles of 32 under a cap of 64 tiles: the planner takes half depth (b x c = 48).
    Inputs in(Op::N, Op::N, 512, 512, 512, 17);
    const auto rep = compare(in, {.devices = "", .max_device_bytes = 64 * 32 * 32 * 8, .tile = 32}, 1, 1.0, 0.0);
    CHECK(rep.k_split == 2);
    CHECK(rep.b * rep.c == 48);
}

TEST_CASE("lookahead 0, 1, 2 on the GPU streams; beta == 0 does not read C") {
    for (int la = 0; la <= 2; ++la)
        for (int g = 1; g <= 3; ++g) {
            CAPTURE(la);
            CAPTURE(g);
            Inputs in(Op::N, Op::N, 500, 430, 310, 3);
            std::fill(in.c.begin(), in.c.end(), std::nan(""));
            compare(in, {.devices = "", .tile = 70, .b = 3, .c = 2, .d = 2, .lookahead = la, .regime = 'c'}, g, 2.0, 0.0);
        }
}

TEST_CASE("Accumulator on the GPU == on the host: C resident across updates, same tiles moved") {
    // Three updates along k (300, 300, 123) with tile 128: C (333 x 250) stays on the GPU(s).
    for (int g = 1; g <= 2; ++g) {
        const Inputs in(Op::N, Op::T, 333, 250, 723, 77 + g);
        std::vector<double> out[2];
        cala::DeviceTraffic moved[2];
        const char* kinds[2] = {"0", "host"};
        for (int r = 0; r < 2; ++r) {
            out[r] = in.c;
            cala::reset_device_traffic();
            cala::device::Accumulator<double> acc(in.m, in.n, out[r].data(), in.ldc, {.devices = list(kinds[r], g), .tile = 128});
            index_t k0 = 0;
            for (index_t w : {300, 300, 123}) {
                acc.update(Op::N, Op::T, w, 1.25, in.a.data() + k0 * in.lda, in.lda, in.b.data() + k0 * in.ldb, in.ldb,
                           k0 == 0 ? -0.5 : 1.0);
                CHECK(acc.holds_c());
                k0 += w;
            }
            acc.finish();
            moved[r] = cala::device_traffic_total();
        }
        CAPTURE(g);
        CHECK(rel_diff(out[0], out[1]) < 1e-12 * static_cast<double>(in.k));
        CHECK(moved[0].h2d + moved[0].reused == moved[1].h2d);
        CHECK(moved[0].d2h == moved[1].d2h);
        CHECK(moved[1].d2h == 3 * 2);  // 3 x 2 tiles of C, back once
    }
}

TEST_CASE("CudaDevice pool: resident tiles are reused, least recently released evicted, cap kept") {
    const index_t t = 64;
    const std::int64_t tile_bytes = t * t * 8;
    cala::cuda::CudaDevice dev(0, 3 * tile_bytes);
    std::vector<double> host(t * t * 4), back(t * t);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<double>(i);
    auto src = [&](int i) { return cala::device::Copy2D{nullptr, t, host.data() + i * t * t, t, t, t, 8}; };
    bool moved = false;

    void* p0 = dev.load(src(0), tile_bytes, &moved);
    CHECK(moved);
    void* p1 = dev.load(src(1), tile_bytes, &moved);
    void* p2 = dev.load(src(2), tile_bytes, &moved);
    dev.release(p0, tile_bytes), dev.release(p1, tile_bytes), dev.release(p2, tile_bytes);
    void* again = dev.load(src(1), tile_bytes, &moved);  // resident: no copy
    CHECK_FALSE(moved);
    CHECK(again == p1);
    CHECK(dev.tiles_reused() == 1);
    dev.load(src(3), tile_bytes, &moved);  // evicts tile 0, the least recently released
    CHECK(moved);
    CHECK(dev.evictions() == 1);
    dev.load(src(2), tile_bytes, &moved);
    CHECK_FALSE(moved);
    CHECK_THROWS_AS(dev.allocate(tile_bytes), cala::device::DeviceMemoryError);
    CHECK(dev.physical_bytes() <= dev.budget_bytes());
    dev.copy_to_host({back.data(), t, again, t, t, t, 8});
    dev.synchronize();

    CHECK(std::equal(back.begin(), back.end(), host.begin() + t * t));
}

TEST_CASE("peer copies wait for the source's load without a host synchronization") {
    const index_t t = 256;
    const std::int64_t bytes = t * t * 8;
    cala::cuda::CudaDevice d0(0, bytes), d1(0, 8 * bytes);  // d0 holds one tile
    std::vector<double> host(t * t), back(t * t, 0.0);
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = 1.0 / static_cast<double>(i + 1);
    bool moved = false;

    void* src = d0.load({nullptr, t, host.data(), t, t, t, 8}, bytes, &moved);
    void* dst = d1.allocate(bytes);
    d1.copy_from_peer({dst, t, src, t, t, t, 8}, d0);
    d0.release(src, bytes);
    void* reuse = d0.allocate(bytes);  // the same block: this write must wait for the copy
    CHECK(reuse == src);
    std::vector<double> zeros(t * t, 0.0);
    d0.copy_to_device({reuse, t, zeros.data(), t, t, t, 8});
    d1.copy_to_host({back.data(), t, dst, t, t, t, 8});
    d1.synchronize();
    d0.synchronize();

    CHECK(back == host);
}

int main(int argc, char** argv) {
    if (cala::cuda::device_count() == 0) {
        std::fprintf(stderr, "test_cuda_device: no CUDA device, skipped\n");
        return 77;
    }
    doctest::Context ctx(argc, argv);
    return ctx.run();
}

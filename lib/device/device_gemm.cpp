// device_gemm_chunked (the engine under cala::device_gemm for one kind of device) -> plan_chunked -> chunked_gemm
//   -> Device::gemm (HostDevice: kernels::gemm | cuBLAS); the device traffic totals

#include <algorithm>
#include <cstdlib>
#include <complex>
#include <optional>
#include <sstream>
#include <utility>

#include "cala/device.hpp"
#include "device/chunked.hpp"
#include "kernels/blas.hpp"

namespace cala {

namespace {
DeviceTraffic g_total;
}  // namespace

DeviceTraffic device_traffic_total() noexcept { return g_total; }

bool uses_node(const std::string& devices) {
    std::string spec = devices;
    if (spec.empty()) {
        const char* env = std::getenv("CALA_DEVICES");
        spec = env && *env ? env : "host";
    }
    std::stringstream ss(spec);
    std::string item;
    bool cpu = false, host = false, cuda = false;
    while (std::getline(ss, item, ',')) {
        if (item == "cpu") cpu = true;
        else if (item == "host") host = true;
        else cuda = true;
    }
    return cpu || (host && cuda);
}
void reset_device_traffic() noexcept { g_total = {}; }

namespace device {
void add_device_traffic(const DeviceGemmReport& rep) noexcept {
    for (const auto& d : rep.devices)
        g_total.h2d += d.h2d, g_total.d2d += d.d2d, g_total.d2h += d.d2h, g_total.reused += d.reused;
}
}  // namespace device

namespace device {
LocalPlan plan_local(index_t m, index_t n, index_t k, std::size_t elem_size, const DeviceGemmOptions& opts,
                     std::span<Device* const> devs) {
    index_t pref = 0;  // the devices' preferred tile, the smallest when they differ
    for (auto* d : devs) pref = pref == 0 ? d->preferred_tile() : std::min(pref, d->preferred_tile());
    const index_t t = std::min(opts.tile > 0 ? opts.tile : std::max<index_t>(pref, 1), std::max({m, n, k}));
    if (opts.k_split < 0 || (opts.k_split > 0 && t % opts.k_split != 0))
        throw Error("device_gemm: k_split " + std::to_string(opts.k_split) + " must be 0 or divide the tile " +
                    std::to_string(t));
    const int g = static_cast<int>(devs.size());
    auto slabs = [&](index_t split) {  // slabs of t x t / split that fit every device
        std::int64_t mem = -1;
        for (auto* d : devs) {
            const std::int64_t n_slabs = d->budget_bytes() / (static_cast<std::int64_t>(elem_size) * t * (t / split));
            mem = mem < 0 ? n_slabs : std::min(mem, n_slabs);
        }
        return mem;
    };
    auto planned = [&](index_t split) {
        const ChunkedShape shape = chunked_shape(m, n, k, t, split, g);
        return LocalPlan{shape, split == 2 ? plan_half_depth(shape, t, slabs(2), opts)
                                           : plan_chunked(shape, t, slabs(split), opts, split)};
    };
    if (opts.k_split > 0) return planned(opts.k_split);
    // The planner's choice: whole tiles, unless half-depth slabs move > 5% fewer bytes (or the
    // same bytes with the lookahead whole tiles had to drop), or only half-depth slabs fit.
    std::optional<LocalPlan> whole;
    std::string why;
    try {
        whole = planned(1);
    } catch (const Error& e) {
        why = e.what();
    }
    if (t % 2 != 0 || opts.stream_c == 1 || (whole && whole->plan.regime == 'a')) {
        if (!whole) throw Error(why);
        return *whole;
    }
    try {
        LocalPlan half = planned(2);
        if (!whole) return half;
        const auto bw = model_bytes(whole->shape, whole->plan, false, elem_size);
        const auto bh = model_bytes(half.shape, half.plan, false, elem_size);
        if (20 * bh < 19 * bw || (bh <= bw && whole->plan.lookahead == 0 && half.plan.lookahead > 0)) return half;
    } catch (const Error&) {
        if (!whole) throw Error(why);
    }
    return *whole;
}
}  // namespace device

namespace device {

template <class T>
void device_gemm_chunked(Op op_a, Op op_b, index_t m, index_t n, index_t k, T alpha, const T* a, index_t lda,
                         const T* b, index_t ldb, T beta, T* c, index_t ldc, const DeviceGemmOptions& opts) {
    auto devs = make_devices(opts.devices, opts.max_device_bytes);
    std::vector<Device*> raw;
    for (auto& d : devs) raw.push_back(d.get());
    DeviceGemmReport rep;
    rep.devices.assign(devs.size(), DeviceTraffic{});
    if (m == 0 || n == 0 || k == 0 || alpha == T{0}) {
        if (m > 0 && n > 0) kernels::scale(m, n, beta, c, ldc);
        if (opts.report) *opts.report = rep;
        return;
    }
    const auto [shape, plan] = plan_local(m, n, k, sizeof(T), opts, raw);
    for (auto* d : raw) d->reset_peak();
    chunked_gemm<T>(raw, plan, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, rep.devices);
    rep.tile = plan.tile, rep.b = plan.b, rep.c = plan.c, rep.d = plan.d, rep.lookahead = plan.lookahead;
    rep.regime = plan.regime;
    rep.stream_c = plan.stream_c;
    rep.k_split = plan.split;
    add_device_traffic(rep);
    for (std::size_t g = 0; g < raw.size(); ++g) {
        rep.devices[g].peak_bytes = raw[g]->peak_bytes();
        rep.devices[g].budget_bytes = raw[g]->budget_bytes();
    }
    if (opts.report) *opts.report = std::move(rep);
}

#define CALA_INST(T)                                                                                    \
    template void device_gemm_chunked<T>(Op, Op, index_t, index_t, index_t, T, const T*, index_t, const T*, \
                                         index_t, T, T*, index_t, const DeviceGemmOptions&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace device

}  // namespace cala

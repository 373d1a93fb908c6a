// Accumulator: C's tiles on the devices across local updates (accumulate.hpp).

#include "device/accumulate.hpp"

#include <algorithm>
#include <complex>

#include "kernels/blas.hpp"

namespace cala::device {

std::optional<LocalPlan> accumulate_plan(index_t m, index_t n, index_t k, std::size_t elem_size,
                                         const DeviceGemmOptions& opts, std::span<Device* const> devs) {
    if (devs.empty() || m == 0 || n == 0 || k == 0) return std::nullopt;
    index_t pref = 0;
    for (auto* d : devs) pref = pref == 0 ? d->preferred_tile() : std::min(pref, d->preferred_tile());
    DeviceGemmOptions o = opts;
    o.tile = std::min(opts.tile > 0 ? opts.tile : std::max<index_t>(pref, 1), std::max(m, n));
    o.b = (m + o.tile - 1) / o.tile, o.c = (n + o.tile - 1) / o.tile;
    o.stream_c = 0;
    try {
        return plan_local(m, n, k, elem_size, o, devs);
    } catch (const Error&) {  // C and the inputs do not fit: one device_gemm per update
        return std::nullopt;
    }
}

template <class T>
Accumulator<T>::Accumulator(index_t m, index_t n, T* c, index_t ldc, const DeviceGemmOptions& opts)
    : m_(m), n_(n), ldc_(ldc), c_(c), opts_(opts) {
    opts_.report = nullptr;
    if (uses_node(opts_.devices))
        throw Error("Accumulator: '" + opts_.devices + "' names a node's units (the node runtime), not devices");
    devs_ = make_devices(opts_.devices, opts_.max_device_bytes);
    for (auto& d : devs_) raw_.push_back(d.get());
    rc_.tiles.resize(raw_.size());
}

template <class T>
Accumulator<T>::~Accumulator() {
    release();
}

template <class T>
void Accumulator<T>::release() noexcept {
    for (std::size_t g = 0; g < raw_.size(); ++g) {
        try {
            raw_[g]->synchronize();
        } catch (...) {  // a destructor does not throw; the tiles are released all the same
        }
        const std::int64_t bytes = static_cast<std::int64_t>(sizeof(T)) * rc_.tile * rc_.tile;
        for (auto& [ij, p] : rc_.tiles[g]) raw_[g]->release(p, bytes);
        rc_.tiles[g].clear();
    }
    held_ = false;
}

template <class T>
void Accumulator<T>::update(Op op_a, Op op_b, index_t k, T alpha, const T* a, index_t lda, const T* b, index_t ldb,
                            T beta) {
    if (m_ == 0 || n_ == 0) return;
    const auto lp = k == 0 || alpha == T{0} ? std::nullopt : accumulate_plan(m_, n_, k, sizeof(T), opts_, raw_);
    DeviceGemmReport rep;
    rep.devices.assign(raw_.size(), DeviceTraffic{});
    if (!lp || (held_ && lp->plan.tile != rc_.tile)) {
        finish();  // C back in host memory, then the update as device_gemm runs it
        if (k == 0 || alpha == T{0}) {
            kernels::scale(m_, n_, beta, c_, ldc_);
            return;
        }
        const auto [shape, plan] = plan_local(m_, n_, k, sizeof(T), opts_, raw_);
        chunked_gemm<T>(raw_, plan, op_a, op_b, m_, n_, k, alpha, a, lda, b, ldb, beta, c_, ldc_, rep.devices);
    } else {
        rc_.tile = lp->plan.tile;
        held_ = true;
        chunked_gemm<T>(raw_, lp->plan, op_a, op_b, m_, n_, k, alpha, a, lda, b, ldb, beta, c_, ldc_, rep.devices,
                        &rc_);
    }
    add_device_traffic(rep);
}

template <class T>
void Accumulator<T>::finish() {
    if (!held_) return;
    const index_t t = rc_.tile;
    DeviceGemmReport rep;
    rep.devices.assign(raw_.size(), DeviceTraffic{});
    for (std::size_t g = 0; g < raw_.size(); ++g)
        for (const auto& [ij, p] : rc_.tiles[g]) {
            const auto [i, j] = ij;
            const index_t rows = std::min(t, m_ - i * t), cols = std::min(t, n_ - j * t);
            raw_[g]->copy_to_host(Copy2D{c_ + i * t + j * t * ldc_, ldc_, p, t, rows, cols, sizeof(T)});
            ++rep.devices[g].d2h;
        }
    for (auto* d : raw_) d->synchronize();  // C is back in host memory (errors surface here)
    add_device_traffic(rep);
    release();
}

#define CALA_INST(T) template class Accumulator<T>;
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala::device

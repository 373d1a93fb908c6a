#pragma once
// The in-core reference of a device run (cala-bench gemm --resident and gemm --devices): the
// whole product on rank 0's device, operands already in its memory (CudaDevice: one cublas?gemm;
// HostDevice: kernels::gemm), timed on the host clock around gemm + synchronize.

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cala/comm.hpp"
#include "cala/resident.hpp"
#include "common.hpp"
#include "device/device.hpp"

#ifdef CALA_HAVE_CUDA
#include "reference.hpp"  // cuda::device_name (no CUDA type in it)
#endif

namespace cala::bench {

// The device's name for the JSON line: the GPU's own name where the build knows CUDA.
inline std::string device_name(const ResidentDevice& d) {
#ifdef CALA_HAVE_CUDA
    if (d.is_cuda()) return cuda::device_name(d.ordinal());
#endif
    return d.is_cuda() ? d.name() : "host memory standing for device memory (HostDevice)";
}

/// The in-core reference on one device: whole A (m x k), B (k x n), C (m x n) in its memory,
/// filled from host column chunks; C := A·B by the device's gemm, timed on the host clock.
template <class T>
class IncoreReference {
public:
    IncoreReference(device::Device& dev, index_t m, index_t n, index_t k, std::uint64_t seed)
        : dev_(dev), m_(m), n_(n), k_(k) {
        const std::int64_t e = sizeof(T);
        a_ = Buf{dev, m * k * e}, b_ = Buf{dev, k * n * e}, c_ = Buf{dev, m * n * e};
        fill(a_.p, m, k, seed ^ 11), fill(b_.p, k, n, seed ^ 12);
    }
    /// Seconds of `runs` calls after one warm-up.
    std::vector<double> time(int runs) {
        const T one = T(1), zero = T(0);
        std::vector<double> t;
        for (int r = -1; r < runs; ++r) {
            const double t0 = MPI_Wtime();
            dev_.gemm(device::scalar_of<T>(), Op::N, Op::N, m_, n_, k_, &one, a_.p, m_, b_.p, k_, &zero, c_.p, m_);
            dev_.synchronize();
            if (r >= 0) t.push_back(MPI_Wtime() - t0);
        }
        return t;
    }

private:
    struct Buf {
        device::Device* dev = nullptr;
        void* p = nullptr;
        std::int64_t bytes = 0;
        Buf() = default;
        Buf(device::Device& d, std::int64_t b) : dev(&d), p(d.allocate(b)), bytes(b) {}
        Buf(Buf&& o) noexcept : dev(o.dev), p(std::exchange(o.p, nullptr)), bytes(o.bytes) {}
        Buf& operator=(Buf&& o) noexcept {
            std::swap(dev, o.dev), std::swap(p, o.p), std::swap(bytes, o.bytes);
            return *this;
        }
        ~Buf() {
            if (p) dev->release(p, bytes);
        }
    };
    void fill(void* dst, index_t rows, index_t cols, std::uint64_t seed) {
        const index_t chunk = std::max<index_t>(1, (index_t{1} << 22) / rows);  // 4 Mi elements per copy
        std::vector<T> host(static_cast<std::size_t>(rows * std::min(chunk, cols)));
        for (index_t j0 = 0; j0 < cols; j0 += chunk) {
            const index_t w = std::min(chunk, cols - j0);
#pragma omp parallel for schedule(static)
            for (index_t j = 0; j < w; ++j)
                for (index_t i = 0; i < rows; ++i) host[j * rows + i] = element<T>(seed, i, j0 + j);
            dev_.copy_to_device({static_cast<T*>(dst) + j0 * rows, rows, host.data(), rows, rows, w, sizeof(T)});
            dev_.synchronize();  // before the host chunk is rewritten
        }
    }
    device::Device& dev_;
    index_t m_, n_, k_;
    Buf a_, b_, c_;
};

// Rank 0 times the reference; every rank gets the times (an allocation that does not fit is a
// cala::Error on every rank).
template <class T>
std::vector<double> measure_device_reference(const ResidentDevice& dev, index_t m, index_t n, index_t k, int runs,
                                             std::uint64_t seed, const Comm& comm, const std::string& what) {
    std::vector<double> t;
    std::string err;
    if (comm.rank() == 0) {
        try {
            IncoreReference<T> ref(*dev.get(), m, n, k, seed);
            t = ref.time(runs);
        } catch (const Error& e) {
            err = "cala-bench " + what + ": the in-core reference on rank 0's device (" + dev.name() +
                  "): " + e.what();
        }
    }
    comm.agree(err, 0, what.c_str());
    t.resize(static_cast<std::size_t>(runs));
    MPI_Bcast(t.data(), runs, MPI_DOUBLE, 0, comm.get());
    return t;
}

/// The reference's fields of a device run's JSON line, and efficiency = cala's median rate / the
/// reference's median rate (efficiency_best: best over best). target: the ratio for one
/// rank on one device (reported with ranks == 1 on a CUDA device only).
inline void add_device_efficiency(nlohmann::ordered_json& j, double flops, const Times& cala, const std::vector<double>& ref_t,
                                  const std::string& name, const std::string& ref_device, bool cuda, int ranks,
                                  double target) {
    const double ref_best = *std::min_element(ref_t.begin(), ref_t.end()), ref_median = median_of(ref_t);
    std::vector<double> samples;
    for (double t : ref_t) samples.push_back(flops / t / 1e9);
    const double rate = flops / cala.best() / 1e9, rate_median = flops / cala.median() / 1e9;
    const double ref_rate = flops / ref_median / 1e9, ref_rate_best = flops / ref_best / 1e9;
    j["device_name"] = name;
    j["reference"] = cuda ? "cublas_incore" : "host_device_incore";
    j["reference_device"] = ref_device;
    j["reference_time_s"] = ref_best;
    j["reference_time_median_s"] = ref_median;
    j["reference_gflops"] = ref_rate;
    j["reference_gflops_best"] = ref_rate_best;
    j["reference_gflops_samples"] = samples;
    j["efficiency"] = rate_median / ref_rate;
    j["efficiency_best"] = rate / ref_rate_best;
    if (cuda && ranks == 1) {
        j["target_efficiency"] = target;
        j["met_target"] = rate_median / ref_rate >= target;
    }
}

}  // namespace cala::bench

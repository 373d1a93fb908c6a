// The unit options every algorithm's local updates share (options.hpp).

#include "node/options.hpp"

#include <mpi.h>

#include <cstdlib>
#include <mutex>
#include <set>
#include <sstream>

#include "cala/node.hpp"
#include "comm/traffic.hpp"
#include "core/check.hpp"
#include "device/device.hpp"
#include "matrix/redistribute_impl.hpp"
#include "node/runtime.hpp"

namespace cala::node::detail {

std::vector<std::string> split_list(const std::string& spec) {
    std::vector<std::string> out;
    std::stringstream ss(spec);
    std::string item;
    while (std::getline(ss, item, ',')) out.push_back(item);
    return out;
}

std::string resolve_devices(const std::string& devices) {
    if (!devices.empty()) return devices;
    const char* env = std::getenv("CALA_DEVICES");
    return env != nullptr ? env : "";
}

bool local_devices(const std::string& devices, std::int64_t max_device_bytes, const std::vector<double>& speeds,
                   const std::string& strategy, DeviceGemmOptions& out) {
    const std::string list = resolve_devices(devices);
    if (list.empty()) return false;
    out.devices = list;
    out.max_device_bytes = max_device_bytes;
    out.speeds = speeds;
    out.strategy = strategy;
    return true;
}

std::string units_error(const std::string& devices, const std::vector<double>& speeds, const std::string& strategy,
                        const char* what) {
    const std::string list = resolve_devices(devices);
    if (list.empty() || !uses_node(list)) return {};
    try {
        check_units(list, speeds, what);
    } catch (const Error& x) {
        return x.what();
    }
    try {
        if (!strategy.empty()) parse_strategy(strategy);
    } catch (const Error& x) {
        return std::string(what) + ": " + x.what();
    }
    return {};
}

std::string devices_error(const std::string& devices, std::int64_t max_device_bytes, const char* what) {
    static std::mutex mu;
    static std::set<std::string> opened;  // CUDA entries that opened once in this process
    for (const std::string& e : split_list(resolve_devices(devices))) {
        if (e == "cpu" || e == "host" || e.empty()) continue;  // no device to open (bad names: units_error)
        {
            std::lock_guard<std::mutex> lock(mu);
            if (opened.count(e)) continue;
        }
        try {
            device::make_devices(e, max_device_bytes);
        } catch (const Error& x) {
            return std::string(what) + ": " + x.what();
        }
        std::lock_guard<std::mutex> lock(mu);
        opened.insert(e);
    }
    return {};
}

std::uint64_t fingerprint_units(std::uint64_t h, const std::string& devices, const std::vector<double>& speeds,
                                const std::string& strategy) {
    using cala::detail::fingerprint;
    const std::string list = resolve_devices(devices);
    h = fingerprint(h, list.data(), list.size());
    h = fingerprint(h, speeds.data(), speeds.size() * sizeof(double));
    return fingerprint(h, strategy.data(), strategy.size());
}

namespace {
// device_gemm's nominal tile, smaller where three tiles of doubles pass the cap.
index_t calibration_tile(std::int64_t cap) {
    index_t t = 256;
    while (cap > 0 && t > 1 && 3 * std::int64_t{8} * t * t > cap) --t;
    return t;
}
}  // namespace

std::int64_t calibration_workspace(const DeviceGemmOptions& dev) {
    const std::string list = resolve_devices(dev.devices);
    if (list.empty() || !uses_node(list) || speeds_given(dev.speeds)) return 0;
    if (("," + list + ",").find(",host,") == std::string::npos) return 0;
    const index_t t = calibration_tile(dev.max_device_bytes);
    return 3 * std::int64_t{8} * t * t;
}

std::vector<double> agree_speeds(const Comm& comm, const std::string& devices, std::int64_t max_device_bytes,
                                 const std::vector<double>& speeds, const char* what) {
    const std::string list = resolve_devices(devices);
    if (list.empty() || !uses_node(list) || speeds_given(speeds)) return speeds;
    NodeOptions co;
    co.units = list;
    co.max_device_bytes = max_device_bytes;
    co.tile = calibration_tile(max_device_bytes);
    std::vector<double> secs;
    std::string err;
    try {
        secs = calibration_seconds(co);
    } catch (const Error& x) {
        err = std::string(what) + ": " + x.what();
    }
    comm.agree(err, 0, what);
    if (comm.size() > 1) {
        CALA_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, secs.data(), static_cast<int>(secs.size()), MPI_DOUBLE, MPI_MIN,
                                     comm.get()));
        cala::detail::count_control();
    }
    return speeds_of(secs);
}

}  // namespace cala::node::detail

// The unit options every algorithm's local updates share (options.hpp).

#include "node/options.hpp"

#include <cstdlib>

#include "cala/node.hpp"
#include "matrix/redistribute_impl.hpp"

namespace cala::node::detail {

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

std::uint64_t fingerprint_units(std::uint64_t h, const std::string& devices, const std::vector<double>& speeds,
                                const std::string& strategy) {
    using cala::detail::fingerprint;
    const std::string list = resolve_devices(devices);
    h = fingerprint(h, list.data(), list.size());
    h = fingerprint(h, speeds.data(), speeds.size() * sizeof(double));
    return fingerprint(h, strategy.data(), strategy.size());
}

}  // namespace cala::node::detail

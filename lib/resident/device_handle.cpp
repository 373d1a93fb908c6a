// ResidentDevice: one device of the device layer (HostDevice, or CudaDevice through the factory
// libcala_cuda registers), shared by the matrices that live on it.

#include <atomic>
#include <cstdlib>

#include "cala/resident.hpp"
#include "core/check.hpp"
#include "device/device.hpp"

namespace cala {

struct ResidentDevice::State {
    std::unique_ptr<device::Device> dev;
    bool cuda = false;
    int ordinal = -1;
    int serial = 0;  // HostDevices opened by this process, this one's number
};

ResidentDevice ResidentDevice::open(const std::string& spec, std::int64_t cap_bytes) {
    if (cap_bytes < 0) throw Error(detail::cat("ResidentDevice: cap_bytes is ", cap_bytes, ", must be >= 0"));
    if (spec.empty() || spec.find(',') != std::string::npos)
        throw Error("ResidentDevice: spec '" + spec + "' must name one device: 'host' or a CUDA ordinal");
    static std::atomic<int> host_serial{0};
    auto s = std::make_shared<State>();
    auto devs = device::make_devices(spec, cap_bytes);  // names the entry on a bad spec
    s->dev = std::move(devs.front());
    if (spec != "host") {
        s->cuda = true;
        s->ordinal = static_cast<int>(std::strtol(spec.c_str(), nullptr, 10));
    } else {
        s->serial = ++host_serial;
    }
    ResidentDevice d;
    d.s_ = std::move(s);
    return d;
}

bool ResidentDevice::is_cuda() const noexcept { return s_ && s_->cuda; }
int ResidentDevice::ordinal() const noexcept { return s_ ? s_->ordinal : -1; }
std::string ResidentDevice::name() const {
    if (!s_) return "host memory";
    return s_->cuda ? detail::cat("cuda:", s_->ordinal) : detail::cat("host#", s_->serial);
}
std::int64_t ResidentDevice::budget_bytes() const noexcept { return s_ ? s_->dev->budget_bytes() : 0; }
std::int64_t ResidentDevice::used_bytes() const noexcept { return s_ ? s_->dev->used_bytes() : 0; }
std::int64_t ResidentDevice::peak_bytes() const noexcept { return s_ ? s_->dev->peak_bytes() : 0; }
device::Device* ResidentDevice::get() const noexcept { return s_ ? s_->dev.get() : nullptr; }

}  // namespace cala

#pragma once
// Internal: the unit options an algorithm's local updates share. GemmOptions and CholeskyOptions
// both carry devices, max_device_bytes, unit_speeds and node_strategy; they are resolved,
// checked and fingerprinted here, once for every algorithm. A list naming more than one kind of
// unit ("cpu,host", "cpu,0,1") runs each local update on the node (cala/node.hpp) through
// cala::device_gemm; a list of one kind of device ("host", "0,1") on the chunked engine.

#include <cstdint>
#include <string>
#include <vector>

#include "cala/comm.hpp"
#include "cala/device.hpp"

namespace cala::node::detail {

/// The items of a comma-separated list ("cpu,host,0" -> cpu, host, 0; "" -> none).
std::vector<std::string> split_list(const std::string& spec);

/// `devices`, else CALA_DEVICES, else "" (the rank's cores through BLIS).
std::string resolve_devices(const std::string& devices);

/// The options of the local updates' device_gemm calls; false (out untouched) when the resolved
/// list is empty.
bool local_devices(const std::string& devices, std::int64_t max_device_bytes, const std::vector<double>& speeds,
                   const std::string& strategy, DeviceGemmOptions& out);

/// "" when fine, else the message (starting with `what`) for a resolved list naming more than
/// one kind of unit whose units, speeds or strategy are bad. Local: the caller agrees it over
/// its ranks before any communication.
std::string units_error(const std::string& devices, const std::vector<double>& speeds, const std::string& strategy,
                        const char* what);

/// "" when every CUDA device the resolved list names opens on this rank (a success is
/// remembered for the process), else the message, starting with `what`. Local: the caller adds
/// it to the error it agrees over its ranks before any communication, so that a device one rank
/// cannot open is a cala::Error on every rank rather than a throw in one rank's local update
/// while the others wait in a broadcast.
std::string devices_error(const std::string& devices, std::int64_t max_device_bytes, const char* what);

/// h folded with what every rank must pass alike: the resolved list, the speeds, the strategy.
std::uint64_t fingerprint_units(std::uint64_t h, const std::string& devices, const std::vector<double>& speeds,
                                const std::string& strategy);

/// The speeds every rank's node allocates with: `speeds` when given (or CALA_UNIT_SPEEDS is set,
/// or the resolved list does not run on the node), else each unit's calibration (node::calibrate
/// at the node's nominal tile, cached per process) with the fastest time of each unit over comm
/// (one allreduce, control traffic like argument agreement), so that every rank has the same.
/// A rank whose calibration fails (a unit that cannot run it): cala::Error on every rank,
/// starting with `what`. Collective over comm when it calibrates; every rank decides alike (the
/// list and speeds are in the fingerprint already agreed). Call it after the argument agreement.
std::vector<double> agree_speeds(const Comm& comm, const std::string& devices, std::int64_t max_device_bytes,
                                 const std::vector<double>& speeds, const char* what);

/// Host workspace bytes agree_speeds' calibration holds (three tiles of doubles on one "host"
/// unit at a time) when it calibrates for these options, else 0.
std::int64_t calibration_workspace(const DeviceGemmOptions& dev);

}  // namespace cala::node::detail

#pragma once
// Internal: add to this rank's traffic counters (convention in cala/comm.hpp).

#include <cstdint>

namespace cala::detail {
void count_sent(std::int64_t words, std::int64_t bytes) noexcept;
void count_recv(std::int64_t words, std::int64_t bytes) noexcept;
void count_control() noexcept;
/// Live handle counts (cala::live_handles): +1 when cala creates one, -1 when it releases it.
void count_comm(int delta) noexcept;
void count_request(int delta) noexcept;
void count_datatype(int delta) noexcept;
}  // namespace cala::detail

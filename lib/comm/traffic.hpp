#pragma once
// Internal: add to this rank's traffic counters (convention in cala/comm.hpp).

#include <cstdint>

namespace cala::detail {
void count_sent(std::int64_t words, std::int64_t bytes) noexcept;
void count_recv(std::int64_t words, std::int64_t bytes) noexcept;
void count_control() noexcept;
}  // namespace cala::detail

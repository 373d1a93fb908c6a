#include "cala/comm.hpp"
#include "comm/traffic.hpp"

namespace cala {

namespace {
Traffic g_traffic;
Handles g_handles;
}

Traffic& Traffic::operator+=(const Traffic& o) noexcept {
    msgs_sent += o.msgs_sent;
    msgs_recv += o.msgs_recv;
    words_sent += o.words_sent;
    words_recv += o.words_recv;
    bytes_sent += o.bytes_sent;
    bytes_recv += o.bytes_recv;
    control_msgs += o.control_msgs;
    return *this;
}

Traffic operator-(Traffic a, const Traffic& b) noexcept {
    a.msgs_sent -= b.msgs_sent;
    a.msgs_recv -= b.msgs_recv;
    a.words_sent -= b.words_sent;
    a.words_recv -= b.words_recv;
    a.bytes_sent -= b.bytes_sent;
    a.bytes_recv -= b.bytes_recv;
    a.control_msgs -= b.control_msgs;
    return a;
}

Traffic traffic() noexcept { return g_traffic; }
void reset_traffic() noexcept { g_traffic = {}; }
Handles live_handles() noexcept { return g_handles; }

namespace detail {

void count_sent(std::int64_t words, std::int64_t bytes) noexcept {
    if (words == 0) return;
    g_traffic.msgs_sent += 1;
    g_traffic.words_sent += words;
    g_traffic.bytes_sent += bytes;
}

void count_recv(std::int64_t words, std::int64_t bytes) noexcept {
    if (words == 0) return;
    g_traffic.msgs_recv += 1;
    g_traffic.words_recv += words;
    g_traffic.bytes_recv += bytes;
}

void count_control() noexcept { g_traffic.control_msgs += 1; }

void count_comm(int delta) noexcept { g_handles.comms += delta; }
void count_request(int delta) noexcept { g_handles.requests += delta; }
void count_datatype(int delta) noexcept { g_handles.datatypes += delta; }

}  // namespace detail
}  // namespace cala

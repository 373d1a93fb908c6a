// Node-shared slots (node_slots.hpp): a header of one cache line per counter,
// then the slots, each rounded up to whole cache lines.

#include "comm/node_slots.hpp"

#include <sched.h>

#include <atomic>
#include <cstring>

#include "comm/traffic.hpp"

namespace cala::detail {

namespace {

constexpr std::int64_t kLine = 64, kHeader = 2 * NodeSlots::kSlots * kLine;

std::int64_t slot_bytes(std::int64_t elems, std::int64_t elem_bytes) {
    return (elems * elem_bytes + kLine - 1) / kLine * kLine;
}

// Waits until ready() holds: spinning first, then yielding the core (ranks may outnumber cores).
template <class F>
void wait_until(F ready) {
    for (int i = 0; !ready(); ++i)
        if (i >= 64) sched_yield();
}

// The region in 8-byte words.
std::int64_t region_words(std::int64_t slot_elems, std::int64_t elem_bytes) {
    return (kHeader + NodeSlots::kSlots * slot_bytes(slot_elems, elem_bytes)) / 8;
}

}  // namespace

std::int64_t NodeSlots::share_bytes(std::int64_t slot_elems, std::int64_t elem_bytes, int ranks) {
    return SharedRegion::share(region_words(slot_elems, elem_bytes), ranks) * 8;
}

NodeSlots::NodeSlots(const Comm& comm, std::int64_t slot_elems, std::int64_t elem_bytes)
    : comm_(comm), region_(comm, region_words(slot_elems, elem_bytes), 8),
      slot_bytes_(slot_bytes(slot_elems, elem_bytes)) {
    if (!region_.ok()) return;
    // The mapping may be an earlier call's: its counters start again from zero, on every rank.
    if (comm_.rank() == 0) std::memset(region_.data(), 0, kHeader);
    region_.publish({}, 0);
}

std::int64_t* NodeSlots::seq(int s) const noexcept {
    return reinterpret_cast<std::int64_t*>(static_cast<char*>(region_.data()) + 2 * s * kLine);
}

std::int64_t* NodeSlots::readers(int s) const noexcept {
    return reinterpret_cast<std::int64_t*>(static_cast<char*>(region_.data()) + (2 * s + 1) * kLine);
}

void* NodeSlots::slot(index_t l) const noexcept {
    return static_cast<char*>(region_.data()) + kHeader + (l % kSlots) * slot_bytes_;
}

void NodeSlots::claim(index_t l) {
    const int s = static_cast<int>(l % kSlots);
    if (!used_[s]) return;
    std::atomic_ref<std::int64_t> r(*readers(s));
    const std::int64_t all = comm_.size();
    wait_until([&] { return r.load(std::memory_order_acquire) == all; });
    r.store(0, std::memory_order_relaxed);
}

void NodeSlots::publish(index_t l, std::initializer_list<std::int64_t> words, std::int64_t word_bytes) {
    const int s = static_cast<int>(l % kSlots);
    std::atomic_ref<std::int64_t>(*seq(s)).store(l + 1, std::memory_order_release);
    for (std::int64_t w : words) count_sent(w, w * word_bytes);
}

void NodeSlots::await(index_t l, std::initializer_list<std::int64_t> words, std::int64_t word_bytes) {
    const int s = static_cast<int>(l % kSlots);
    std::atomic_ref<std::int64_t> q(*seq(s));
    wait_until([&] { return q.load(std::memory_order_acquire) == l + 1; });
    for (std::int64_t w : words) count_recv(w, w * word_bytes);
}

void NodeSlots::done(index_t l) {
    const int s = static_cast<int>(l % kSlots);
    used_[s] = true;
    std::atomic_ref<std::int64_t>(*readers(s)).fetch_add(1, std::memory_order_release);
}

void NodeSlots::finish() { region_.release(); }

}  // namespace cala::detail

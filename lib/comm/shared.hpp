#pragma once
// Internal: memory that every rank of a communicator maps, when they all run on one node
// (POSIX shared memory, shared.cpp says why not an MPI window). A gather of a 1D-distributed operand then needs no message: each rank
// writes its own part in place, and every rank reads all of it.
//
//   rank 0 writes rows 0..63, 128..191; rank 1 writes 64..127, 192..255   (one copy each)
//   region.publish(...)   every write above is visible to every rank below (a barrier)
//   each rank multiplies from the whole region                            (no copy at all)
//   region.release()      no rank writes into it again before every rank is done reading
//
// Traffic is counted as the broadcasts it replaces (cala/comm.hpp's convention): the owner of a
// part "sends" one message of its words, every other rank "receives" it.

#include <cstdint>
#include <span>

#include "cala/comm.hpp"

namespace cala::detail {

/// Comm::shares_node: collective over comm the first time it is asked for a communicator; then
/// cached on it (an attribute).
bool on_one_node(const Comm& comm);

/// `count` elements of `elem_bytes` mapped by every rank of comm (comm.shares_node() must hold);
/// collective, every rank passes the same size. The mapping is kept on the communicator for later
/// regions that fit in it (while it is within the workspace cache limit, cala/memory.hpp) and
/// unmapped when the communicator is freed. memory_stats counts this rank's share,
/// share(count, size) elements, while the region is held. Where the memory cannot be had
/// (/dev/shm full), ok() is false on every rank and nothing is counted.
class SharedRegion {
public:
    SharedRegion(const Comm& comm, std::int64_t count, std::int64_t elem_bytes);
    SharedRegion(const SharedRegion&) = delete;
    SharedRegion& operator=(const SharedRegion&) = delete;
    ~SharedRegion();

    bool ok() const noexcept { return held_; }
    void* data() const noexcept { return base_; }
    /// The elements of a region of `count` that memory_stats charges each of `ranks` ranks.
    static std::int64_t share(std::int64_t count, int ranks) noexcept { return (count + ranks - 1) / ranks; }

    /// Collective: every rank's writes so far are visible to every rank afterwards. Counts, for
    /// each rank r with words[r] > 0, one message of words[r] words of `word_bytes` sent by r and
    /// received by every other rank.
    void publish(std::span<const std::int64_t> words, std::int64_t word_bytes);
    /// Collective: every rank is done with the region (it may be written again).
    void release();

private:
    const Comm* comm_;
    void* base_ = nullptr;
    std::int64_t counted_ = 0;
    bool held_ = false;
};

}  // namespace cala::detail

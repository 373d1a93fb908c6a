#pragma once
// Internal: broadcasts replaced by memory every rank of a communicator maps, when the ranks share
// a node (comm/shared.hpp). MPICH moves a broadcast between ranks of one node as two copies (into
// its shared cells, out of them), each done inside MPI calls: the receiver's while it polls, the
// sender's at the broadcast and at its own polls. Here the root of piece l copies it once into
// slot l mod 4 and raises the slot's sequence number; every rank reads it in the slot, where it
// is. A rank is done with a slot when it says so (done); the root of the slot's next piece waits
// until all ranks are (four slots: a step of slack to a slower rank beyond the three panels the
// Cholesky engine holds). Traffic is counted as the broadcast it replaces. Users: the panels of
// cala::potrf and cala::getrf on 1 x q grids (CholeskyOptions / LuOptions node_shared_memory).
//
//   1 x 2, pieces 0..4 (roots 0, 1, 0, 1, 0):
//     rank 0: claim(0), copy piece 0 into slot 0, publish(0)   seq[0] = 1
//     rank 1: await(0) (seq[0] == 1), reads slot 0, ... done(0): readers[0] = 1
//     rank 0 at piece 4 (slot 0 again): claim(4) waits until readers[0] == 2 (rank 1 done too)

#include <cstdint>
#include <initializer_list>

#include "cala/comm.hpp"
#include "cala/types.hpp"
#include "comm/shared.hpp"

namespace cala::detail {

class NodeSlots {
public:
    static constexpr int kSlots = 4;

    /// Collective over comm (its ranks share a node; every rank passes the same sizes): three
    /// slots of slot_elems elements. ok() is false on every rank where the memory cannot be had.
    NodeSlots(const Comm& comm, std::int64_t slot_elems, std::int64_t elem_bytes);
    bool ok() const noexcept { return region_.ok(); }
    /// What memory_stats charges each of `ranks` ranks for slots of slot_elems elements.
    static std::int64_t share_bytes(std::int64_t slot_elems, std::int64_t elem_bytes, int ranks);

    void* slot(index_t l) const noexcept;
    /// The root of piece l, before writing its slot: every rank is done with what it held.
    void claim(index_t l);
    /// The root: piece l is in its slot; it stands for one broadcast of each of `words` (elements
    /// of word_bytes), counted so.
    void publish(index_t l, std::initializer_list<std::int64_t> words, std::int64_t word_bytes);
    /// Any other rank: returns once piece l is in its slot (counted as publish counts).
    void await(index_t l, std::initializer_list<std::int64_t> words, std::int64_t word_bytes);
    /// This rank no longer reads piece l's slot (every rank says so once per piece, the root too).
    void done(index_t l);
    /// Collective: every rank is done with every slot (the memory may serve another call).
    void finish();

private:
    std::int64_t* seq(int s) const noexcept;
    std::int64_t* readers(int s) const noexcept;
    const Comm& comm_;
    SharedRegion region_;
    std::int64_t slot_bytes_ = 0;
    bool used_[kSlots] = {};  // the slot held a published piece of this call
};

}  // namespace cala::detail

#pragma once
// Internal: cala::potrf's panels through memory that every rank of a 1 x q grid maps, when the
// ranks share a node (CholeskyOptions::node_shared_memory; comm/shared.hpp). MPICH moves a
// broadcast between ranks of one node as two copies (into its shared cells, out of them), each
// done inside MPI calls: the receiver's while it polls between GEMM chunks, the sender's at the
// broadcast and at those polls. Here the owner of panel l copies its solved tiles once into
// slot l mod 4 and raises the slot's sequence number; every rank multiplies from the slot as it
// is. A rank is done with a slot when it retires the panel; the owner of the slot's next panel
// waits until all q ranks are (four slots: the engine holds three panels, and the fourth lets
// the owner of panel l + 1 go on while a slower rank still updates with panel l - 2). Traffic
// is counted as the row broadcast it replaces.
//
//   1 x 2, panels 0..4 (owners 0, 1, 0, 1, 0):
//     rank 0: claim(0), copy panel 0 into slot 0, publish(0)   seq[0] = 1
//     rank 1: await(0) (seq[0] == 1), multiplies from slot 0, ... retire: done[0] = 1
//     rank 0 at panel 4 (slot 0 again): claim(4) waits until done[0] == 2 (rank 1 retired it too)

#include <cstdint>

#include "cala/comm.hpp"
#include "cala/types.hpp"
#include "comm/shared.hpp"

namespace cala::detail {

class NodePanels {
public:
    static constexpr int kSlots = 4;  // one more than the engine's panels in flight: a step of slack

    /// Collective over comm (its ranks share a node; every rank passes the same sizes): three
    /// slots of slot_elems elements. ok() is false on every rank where the memory cannot be had.
    NodePanels(const Comm& comm, std::int64_t slot_elems, std::int64_t elem_bytes);
    bool ok() const noexcept { return region_.ok(); }
    /// What memory_stats charges each of `ranks` ranks for slots of slot_elems elements.
    static std::int64_t share_bytes(std::int64_t slot_elems, std::int64_t elem_bytes, int ranks);

    void* slot(index_t l) const noexcept;
    /// The owner of panel l, before writing its slot: every rank is done with what it held.
    void claim(index_t l);
    /// The owner: panel l (words elements of word_bytes) is in its slot.
    void publish(index_t l, std::int64_t words, std::int64_t word_bytes);
    /// Any other rank: returns once panel l is in its slot.
    void await(index_t l, std::int64_t words, std::int64_t word_bytes);
    /// This rank no longer reads panel l's slot.
    void done(index_t l);
    /// Collective: every rank is done with every slot (the memory may serve another call).
    void finish();

private:
    std::int64_t* seq(int s) const noexcept;
    std::int64_t* readers(int s) const noexcept;
    const Comm& comm_;
    SharedRegion region_;
    std::int64_t slot_bytes_ = 0;
    bool used_[kSlots] = {};  // the slot held a published panel of this call
};

}  // namespace cala::detail

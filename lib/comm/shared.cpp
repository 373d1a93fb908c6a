#include "comm/shared.hpp"

#include <atomic>

#include "cala/memory.hpp"
#include "comm/traffic.hpp"
#include "core/check.hpp"
#include "core/workspace.hpp"

namespace cala::detail {

namespace {

// What a communicator carries (an attribute): whether its ranks share a node, and its window.
struct NodeState {
    int one_node = -1;  // -1: not asked yet
    MPI_Win win = MPI_WIN_NULL;
    std::int64_t capacity = 0;
    void* base = nullptr;

    void free_window() noexcept {
        if (win == MPI_WIN_NULL) return;
        MPI_Win_unlock_all(win);
        MPI_Win_free(&win);
        win = MPI_WIN_NULL, capacity = 0, base = nullptr;
    }
};

// Runs when the communicator is freed (or at MPI_Finalize for MPI_COMM_SELF's): collective
// there as MPI_Win_free needs, since every rank frees the communicator.
int delete_state(MPI_Comm, int, void* value, void*) {
    auto* s = static_cast<NodeState*>(value);
    s->free_window();
    delete s;
    return MPI_SUCCESS;
}

NodeState& state_of(const Comm& comm) {
    static const int key = [] {
        int k = MPI_KEYVAL_INVALID;
        CALA_CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &k, nullptr));
        return k;
    }();
    void* value = nullptr;
    int found = 0;
    CALA_CHECK_MPI(MPI_Comm_get_attr(comm.get(), key, &value, &found));
    if (found != 0) return *static_cast<NodeState*>(value);
    auto* s = new NodeState;
    CALA_CHECK_MPI(MPI_Comm_set_attr(comm.get(), key, s));
    return *s;
}

}  // namespace

bool on_one_node(const Comm& comm) {
    NodeState& s = state_of(comm);
    if (s.one_node < 0) {
        MPI_Comm node = MPI_COMM_NULL;
        CALA_CHECK_MPI(MPI_Comm_split_type(comm.get(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
        int size = 0;
        MPI_Comm_size(node, &size);
        MPI_Comm_free(&node);
        // Every rank's own node holds all ranks, or none does: the same answer everywhere.
        s.one_node = size == comm.size() ? 1 : 0;
    }
    return s.one_node == 1;
}

SharedRegion::SharedRegion(const Comm& comm, std::int64_t count, std::int64_t elem_bytes) : comm_(&comm) {
    NodeState& s = state_of(comm);
    const std::int64_t bytes = count * elem_bytes;
    if (s.capacity < bytes) {
        s.free_window();
        // One contiguous allocation, by rank 0: every rank maps it at its own address.
        void* mine = nullptr;
        MPI_Win win = MPI_WIN_NULL;
        CALA_CHECK_MPI(MPI_Win_allocate_shared(comm.rank() == 0 ? static_cast<MPI_Aint>(bytes) : 0, 1,
                                               MPI_INFO_NULL, comm.get(), &mine, &win));
        MPI_Aint size = 0;
        int unit = 0;
        CALA_CHECK_MPI(MPI_Win_shared_query(win, 0, &size, &unit, &s.base));
        CALA_CHECK_MPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
        s.win = win, s.capacity = bytes;
    }
    base_ = s.base;
    counted_ = share(count, comm.size()) * elem_bytes;
    count_workspace(counted_);
    held_ = true;
}

SharedRegion::~SharedRegion() {
    if (held_) count_workspace(-counted_);
}

void SharedRegion::publish(std::span<const std::int64_t> words, std::int64_t word_bytes) {
    NodeState& s = state_of(*comm_);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    CALA_CHECK_MPI(MPI_Win_sync(s.win));
    comm_->barrier();
    CALA_CHECK_MPI(MPI_Win_sync(s.win));
    if (comm_->size() == 1) return;
    for (int r = 0; r < static_cast<int>(words.size()); ++r) {
        const std::int64_t w = words[static_cast<std::size_t>(r)];
        if (w == 0) continue;
        if (r == comm_->rank()) count_sent(w, w * word_bytes);
        else count_recv(w, w * word_bytes);
    }
}

void SharedRegion::release() {
    if (!held_) return;
    // The barrier, which also agrees whether to keep the window: not one beyond what any rank's
    // workspace cache may keep (MPI_Win_free is collective, so every rank decides alike).
    NodeState& s = state_of(*comm_);
    int drop = s.capacity > workspace_cache_limit() ? 1 : 0;
    CALA_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &drop, 1, MPI_INT, MPI_MAX, comm_->get()));
    count_workspace(-counted_);
    held_ = false;
    if (drop != 0) s.free_window();
}

}  // namespace cala::detail

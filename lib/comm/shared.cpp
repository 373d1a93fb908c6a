// The node-shared region (comm/shared.hpp) in POSIX shared memory: rank 0 of the communicator
// creates a /dev/shm object and reserves its pages (posix_fallocate, so that a full /dev/shm is
// an error here and not a SIGBUS later), every rank maps it, rank 0 unlinks the name once all
// have. Not an MPI window: a window is freed collectively (MPI_Win_free synchronizes), but a
// communicator, where the mapping is kept, is freed by each rank alone and at different times
// (the ScaLAPACK shim frees a cached grid when a later call on other ranks evicts it). munmap is
// local.

#include "comm/shared.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "cala/memory.hpp"
#include "comm/traffic.hpp"
#include "core/check.hpp"
#include "core/workspace.hpp"

namespace cala::detail {

namespace {

// What a communicator carries (an attribute): whether its ranks share a node, and its mapping.
struct NodeState {
    int one_node = -1;  // -1: not asked yet
    void* base = nullptr;
    std::int64_t capacity = 0;

    void unmap() noexcept {
        if (base != nullptr) munmap(base, static_cast<std::size_t>(capacity));
        base = nullptr, capacity = 0;
    }
};

int delete_state(MPI_Comm, int, void* value, void*) {
    auto* s = static_cast<NodeState*>(value);
    s->unmap();
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

std::string errno_text(const char* what, int err) { return std::string(what) + ": " + std::strerror(err); }

// Maps `bytes` of new shared memory on every rank of comm; collective. On failure on any rank
// every rank gets nullptr (and nothing stays mapped or named).
void* map_shared(const Comm& comm, std::int64_t bytes) {
    static std::atomic<unsigned> serial{0};
    struct {
        char name[56];
        int err;
    } made{};
    int fd = -1;
    if (comm.rank() == 0) {
        std::snprintf(made.name, sizeof made.name, "/cala-%ld-%u", static_cast<long>(getpid()), serial++);
        fd = shm_open(made.name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0) made.err = errno;
        else if (const int e = posix_fallocate(fd, 0, static_cast<off_t>(bytes)); e != 0) made.err = e;
    }
    CALA_CHECK_MPI(MPI_Bcast(&made, sizeof made, MPI_BYTE, 0, comm.get()));
    count_control();
    std::string local;
    if (made.err != 0) local = errno_text("shm_open/posix_fallocate", made.err);
    if (local.empty() && comm.rank() != 0 && (fd = shm_open(made.name, O_RDWR, 0)) < 0) local = errno_text("shm_open", errno);
    void* p = nullptr;
    if (local.empty()) {
        p = mmap(nullptr, static_cast<std::size_t>(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) local = errno_text("mmap", errno), p = nullptr;
    }
    if (fd >= 0) close(fd);
    // Every rank has opened it (or failed): the name can go; the memory lives while mapped.
    int failed = local.empty() ? 0 : 1;
    CALA_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm.get()));
    count_control();
    if (comm.rank() == 0 && made.err == 0) shm_unlink(made.name);
    if (failed != 0 && p != nullptr) munmap(p, static_cast<std::size_t>(bytes)), p = nullptr;
    return p;
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
    if (s.capacity < bytes) {  // the same decision on every rank: same sizes, same history
        s.unmap();
        s.base = map_shared(comm, bytes);
        if (s.base == nullptr) return;  // !ok(): the caller takes another path
        s.capacity = bytes;
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
    std::atomic_thread_fence(std::memory_order_seq_cst);
    comm_->barrier();  // MPI_Barrier synchronizes memory: the writes before are seen after
    std::atomic_thread_fence(std::memory_order_seq_cst);
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
    // The barrier, which also agrees whether to keep the mapping: not one beyond what any rank's
    // workspace cache may keep (the decision must be the same everywhere: sizes stay in step).
    NodeState& s = state_of(*comm_);
    int drop = s.capacity > workspace_cache_limit() ? 1 : 0;
    CALA_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &drop, 1, MPI_INT, MPI_MAX, comm_->get()));
    count_workspace(-counted_);
    held_ = false;
    if (drop != 0) s.unmap();
}

}  // namespace cala::detail

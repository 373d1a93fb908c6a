// Resident SUMMA's panel transport: MPI staged through host slots, or NCCL from device memory.
// Both count traffic by the convention of cala/comm.hpp (an ibcast of w words over s > 1 ranks:
// the root sends one message of w words, every other rank receives one).

#include "resident/transport.hpp"

#include <mpi.h>
#include <unistd.h>

#include <functional>

#include "comm/traffic.hpp"
#include "core/check.hpp"
#include "resident/stage.hpp"

namespace cala::detail {

namespace {
DeviceBcastFactory& bcast_factory() {
    static DeviceBcastFactory f;
    return f;
}
}  // namespace

void register_device_bcast(DeviceBcastFactory f) { bcast_factory() = std::move(f); }
bool device_bcast_available() noexcept { return static_cast<bool>(bcast_factory()); }

bool choose_nccl(const Grid2D& g, const ResidentDevice& d, PanelTransport t, const char* what, std::string& reason) {
    const int size = g.comm().size();
    if (!d.is_cuda()) {
        reason = cat(what, " on a HostDevice: panels staged through host memory over MPI");
        return false;
    }
    if (size == 1) {
        reason = "one rank: no panel travels";
        return false;
    }
    if (t == PanelTransport::Staged) {
        reason = "transport Staged requested";
        return false;
    }
    if (!device_bcast_available()) {
        reason = "libcala_cuda has no NCCL: panels staged through host memory over MPI";
        return false;
    }
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    const std::uint64_t mine[2] = {std::hash<std::string>{}(host), static_cast<std::uint64_t>(d.ordinal())};
    std::vector<std::uint64_t> all(2 * static_cast<std::size_t>(size));
    CALA_CHECK_MPI(MPI_Allgather(mine, 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, g.comm().get()));
    count_control();
    for (int r = 0; r < size; ++r)
        for (int s = r + 1; s < size; ++s)
            if (all[2 * r] == all[2 * s] && all[2 * r + 1] == all[2 * s + 1]) {
                reason = cat("ranks ", r, " and ", s, " share CUDA device ", all[2 * r + 1],
                             " (NCCL refuses two ranks on one GPU): panels staged through host memory over MPI");
                return false;
            }
    reason = "every rank has a CUDA device of its own: ncclBroadcast from device memory";
    return true;
}

template <class T>
PanelMover<T>::PanelMover(device::Device& dev, const Grid2D& grid, bool nccl, int ordinal) : dev_(dev), grid_(grid) {
    if (!nccl) return;
    if (!bcast_factory()) throw Error("resident gemm: NCCL transport requested but libcala_cuda has no NCCL");
    row_ = bcast_factory()(grid.row_comm(), ordinal);
    col_ = bcast_factory()(grid.col_comm(), ordinal);
}

// A mark on each communicator the step's pieces use (-1 on the other: nothing to wait for).
template <class T>
void PanelMover<T>::mark(Step& step, const std::vector<Piece<T>>& pieces) {
    bool row = false, col = false;
    for (const auto& p : pieces) (p.along_row ? row : col) = true;
    step.row_mark = row ? row_->mark() : -1;
    step.col_mark = col ? col_->mark() : -1;
}

template <class T>
void PanelMover<T>::post(std::vector<Piece<T>> pieces) {
    Step step;
    // The roots' pieces are written, and the slots this step overwrites are no longer read.
    dev_.synchronize();
    if (row_) {
        for (const auto& p : pieces) {
            const Comm& c = comm_of(p);
            if (c.size() < 2 || p.count == 0) continue;
            (p.along_row ? row_ : col_)->bcast(p.dev, p.count, device::scalar_of<T>(), p.root);
            const std::int64_t bytes = p.count * static_cast<std::int64_t>(sizeof(T));
            if (mine(p)) count_sent(p.count, bytes);
            else count_recv(p.count, bytes);
        }
        mark(step, pieces);
    } else {
        bool copied = false;
        for (const auto& p : pieces)
            if (mine(p) && p.count > 0 && comm_of(p).size() > 1) {
                dev_.copy_to_host(copy2d(p.host, p.count, static_cast<const T*>(p.dev), p.count, p.count, index_t{1}));
                copied = true;
            }
        if (copied) dev_.synchronize();
        for (const auto& p : pieces)
            if (p.count > 0) step.reqs.push_back(comm_of(p).ibcast(p.host, p.count, p.root));
    }
    step.pieces = std::move(pieces);
    steps_.push_back(std::move(step));
}

template <class T>
void PanelMover<T>::post_sum(std::vector<Piece<T>> pieces) {
    Step step;
    dev_.synchronize();  // the partial sums are written, and the slots are no longer read
    if (row_) {
        for (const auto& p : pieces) {
            if (comm_of(p).size() < 2 || p.count == 0) continue;
            (p.along_row ? row_ : col_)->reduce(p.dev, p.count, device::scalar_of<T>(), p.root);
            const std::int64_t bytes = p.count * static_cast<std::int64_t>(sizeof(T));
            if (mine(p)) count_recv(p.count, bytes);
            else count_sent(p.count, bytes);
        }
        mark(step, pieces);
    } else {
        bool copied = false;
        for (const auto& p : pieces)
            if (p.count > 0 && comm_of(p).size() > 1) {
                dev_.copy_to_host(copy2d(p.host, p.count, static_cast<const T*>(p.dev), p.count, p.count, index_t{1}));
                copied = true;
            }
        if (copied) dev_.synchronize();
        for (const auto& p : pieces)
            if (p.count > 0 && comm_of(p).size() > 1)
                step.reqs.push_back(comm_of(p).ireduce_sum(p.host, p.host, p.count, p.root));
    }
    step.pieces = std::move(pieces);
    sums_.push_back(std::move(step));
}

template <class T>
void PanelMover<T>::wait(Step& step, bool sum) {
    if (row_) {
        row_->wait(step.row_mark);
        col_->wait(step.col_mark);
        return;
    }
    wait_all(step.reqs);
    for (const auto& p : step.pieces)
        if (mine(p) == sum && p.count > 0 && comm_of(p).size() > 1)  // a broadcast's receivers, a sum's root
            dev_.copy_to_device(copy2d(p.dev, p.count, static_cast<const T*>(p.host), p.count, p.count, index_t{1}));
}

template <class T>
void PanelMover<T>::wait_front() {
    wait(steps_.front(), false);
    steps_.pop_front();
}

template <class T>
void PanelMover<T>::wait_sum_front() {
    wait(sums_.front(), true);
    sums_.pop_front();
}

template <class T>
void PanelMover<T>::poll() {
    for (auto* q : {&steps_, &sums_})
        for (auto& s : *q) test_all(s.reqs);
}

#define CALA_INST(T) template class PanelMover<T>;
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::detail

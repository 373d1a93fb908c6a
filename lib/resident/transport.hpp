#pragma once
// Internal: how resident SUMMA's panels travel. A step posts its pieces (device memory, already
// written on their roots) and later waits for them to land in device memory on every rank:
//   staged: the root copies its piece to a host slot, MPI ibcast (Comm: counted), the others
//           copy the host slot to their device piece;
//   NCCL:   ncclBroadcast from device memory to device memory (counted here as an ibcast).
// Partial sums (A- and B-stationary SUMMA) travel the other way, summed onto the root's piece:
//   staged: every rank copies its piece to a host slot, MPI ireduce in place (Comm: counted),
//           the root copies the sum back to its device piece;
//   NCCL:   ncclReduce in place in device memory (counted here as an ireduce).
// NCCL lives in libcala_cuda (cuda/resident_nccl.cu), which registers a DeviceBcast factory at
// load; nothing here names CUDA.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cala/comm.hpp"
#include "cala/grid.hpp"
#include "cala/resident.hpp"
#include "device/device.hpp"

namespace cala::detail {

/// Broadcasts and sums of device memory over one communicator, in order on one stream.
class DeviceBcast {
public:
    virtual ~DeviceBcast() = default;
    /// Issues a broadcast of count elements of s at device address buf from root (asynchronous).
    virtual void bcast(void* buf, std::int64_t count, device::Scalar s, int root) = 0;
    /// Issues buf := the sum of every rank's buf on root, in place (asynchronous; elsewhere buf
    /// is only read).
    virtual void reduce(void* buf, std::int64_t count, device::Scalar s, int root) = 0;
    /// A mark after the broadcasts issued so far; wait(mark) returns once they are complete.
    virtual std::int64_t mark() = 0;
    virtual void wait(std::int64_t mark) = 0;
};

/// Makes a DeviceBcast over comm on CUDA device ordinal; collective over comm.
using DeviceBcastFactory = std::function<std::unique_ptr<DeviceBcast>(const Comm& comm, int ordinal)>;
void register_device_bcast(DeviceBcastFactory f);
bool device_bcast_available() noexcept;

/// Whether panels travel by NCCL: where every rank has a CUDA device of its own (NCCL refuses two
/// ranks on one GPU), libcala_cuda has NCCL and t is not Staged. The same answer on every rank
/// (one allgather, counted as control traffic); `reason` says why, naming the operands as `what`.
bool choose_nccl(const Grid2D& g, const ResidentDevice& d, PanelTransport t, const char* what, std::string& reason);

/// One piece of a step: count elements at device address dev, broadcast from `root` (or summed
/// onto it) over the grid's row communicator (along_row) or column communicator; host: its
/// staging slot (every rank's, for a sum).
template <class T>
struct Piece {
    T* dev;
    T* host;
    std::int64_t count;
    int root;
    bool along_row;
};

template <class T>
class PanelMover {
public:
    /// nccl: collective over the grid's row and column communicators (each makes a DeviceBcast).
    PanelMover(device::Device& dev, const Grid2D& grid, bool nccl, int ordinal);
    /// Posts one step's pieces (the roots' device pieces written by earlier device operations).
    void post(std::vector<Piece<T>> pieces);
    /// The oldest posted step has landed in device memory (device operations issued after this
    /// call see it).
    void wait_front();
    /// Posts one step's partial sums (every rank's device pieces written by earlier device
    /// operations), each summed onto its root's piece in place. Sums keep their own queue.
    void post_sum(std::vector<Piece<T>> pieces);
    /// The oldest posted sum has landed in the roots' device pieces (and every rank's pieces and
    /// host slots may be written again).
    void wait_sum_front();
    /// Sums posted and not yet waited for.
    std::size_t sums_pending() const noexcept { return sums_.size(); }
    /// Drives MPI progress on the posted steps and sums (staged).
    void poll();

private:
    struct Step {
        std::vector<Piece<T>> pieces;
        std::vector<Request> reqs;
        std::int64_t row_mark = -1, col_mark = -1;
    };
    bool mine(const Piece<T>& p) const noexcept { return p.root == (p.along_row ? grid_.col() : grid_.row()); }
    const Comm& comm_of(const Piece<T>& p) const noexcept { return p.along_row ? grid_.row_comm() : grid_.col_comm(); }
    device::Device& dev_;
    Grid2D grid_;
    std::unique_ptr<DeviceBcast> row_, col_;  // NCCL; null: staged
    std::deque<Step> steps_, sums_;
    void wait(Step& step, bool sum);
    void mark(Step& step, const std::vector<Piece<T>>& pieces);
};

}  // namespace cala::detail

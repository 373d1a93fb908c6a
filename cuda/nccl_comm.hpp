#pragma once
// NCCL for panels that live in device memory (issue 8: "panels broadcast over MPI from host
// memory; over NCCL when they live on devices"). Built only where nccl is found
// (CALA_HAVE_NCCL); no CUDA or NCCL type appears here.
//
// One GPU per rank. from_mpi is collective over the MPI communicator: rank 0 makes the NCCL
// unique id, MPI_Bcast carries it, every rank joins with ncclCommInitRank.

#include <cstdint>
#include <memory>

#include "cala/comm.hpp"
#include "device/device.hpp"

namespace cala::cuda::nccl {

class Comm {
public:
    /// Collective over comm: an NCCL communicator with the same ranks, on CUDA device ordinal.
    static Comm from_mpi(const cala::Comm& comm, int ordinal);
    ~Comm();
    Comm(Comm&&) noexcept;
    Comm& operator=(Comm&&) noexcept;
    Comm(const Comm&) = delete;
    Comm& operator=(const Comm&) = delete;

    int rank() const noexcept;
    int size() const noexcept;
    /// Broadcasts count elements of s at device address buf from root (collective; ordered on
    /// this communicator's stream; synchronize() waits for it).
    void bcast(void* buf, std::int64_t count, device::Scalar s, int root);
    void synchronize();

private:
    struct Impl;
    explicit Comm(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace cala::cuda::nccl

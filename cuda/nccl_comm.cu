// NCCL communicator from an MPI communicator, and the device-resident panel broadcast.

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <string>

#include "cuda_check.hpp"
#include "nccl_check.hpp"
#include "nccl_comm.hpp"

namespace cala::cuda::nccl {

struct Comm::Impl {
    int ordinal = 0, rank = 0, size = 0;
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
    ~Impl() {
        cudaSetDevice(ordinal);
        if (stream) cudaStreamSynchronize(stream);
        if (comm) ncclCommDestroy(comm);
        if (stream) cudaStreamDestroy(stream);
    }
};

Comm::Comm(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Comm::~Comm() = default;
Comm::Comm(Comm&&) noexcept = default;
Comm& Comm::operator=(Comm&&) noexcept = default;
int Comm::rank() const noexcept { return impl_->rank; }
int Comm::size() const noexcept { return impl_->size; }

Comm Comm::from_mpi(const cala::Comm& mpi, int ordinal) {
    auto im = std::make_unique<Impl>();
    im->ordinal = ordinal, im->rank = mpi.rank(), im->size = mpi.size();
    ncclUniqueId id{};
    if (mpi.rank() == 0) CALA_CHECK_NCCL(ncclGetUniqueId(&id));
    // The id travels over MPI before any NCCL call that could hang; a failure above on rank 0
    // throws there only, as NCCL itself would (the caller's MPI error handling applies).
    if (MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, mpi.get()) != MPI_SUCCESS)
        throw Error("nccl::Comm::from_mpi: MPI_Bcast of the NCCL unique id failed");
    CALA_CHECK_CUDA(cudaSetDevice(ordinal));
    CALA_CHECK_CUDA(cudaStreamCreateWithFlags(&im->stream, cudaStreamNonBlocking));
    CALA_CHECK_NCCL(ncclCommInitRank(&im->comm, mpi.size(), id, mpi.rank()));
    return Comm(std::move(im));
}

void Comm::bcast(void* buf, std::int64_t count, device::Scalar s, int root) {
    // Complex values travel as pairs of reals.
    ncclDataType_t t = ncclFloat64;
    std::size_t n = static_cast<std::size_t>(count);
    switch (s) {
    case device::Scalar::S: t = ncclFloat32; break;
    case device::Scalar::D: t = ncclFloat64; break;
    case device::Scalar::C: t = ncclFloat32, n *= 2; break;
    case device::Scalar::Z: t = ncclFloat64, n *= 2; break;
    }
    CALA_CHECK_CUDA(cudaSetDevice(impl_->ordinal));
    CALA_CHECK_NCCL(ncclBroadcast(buf, buf, n, t, root, impl_->comm, impl_->stream));
}

void Comm::synchronize() {
    CALA_CHECK_CUDA(cudaSetDevice(impl_->ordinal));
    CALA_CHECK_CUDA(cudaStreamSynchronize(impl_->stream));
}

}  // namespace cala::cuda::nccl

// The NCCL transport of resident SUMMA (lib/resident/transport.hpp): ncclBroadcast of device
// panels and ncclReduce of partial sums on one stream per communicator, with an event per mark
// so that a step waits for its own collectives only (the lookahead's later ones keep flowing). Registered at load; built only where
// nccl is found. (nccl_comm.cu's Comm has no marks; this one is the same join, with events.)

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <deque>
#include <string>
#include <utility>

#include "cuda_check.hpp"
#include "nccl_check.hpp"
#include "resident/transport.hpp"

namespace cala::cuda {

namespace {

// count elements of s as NCCL's reals: complex values travel as pairs of reals.
std::pair<ncclDataType_t, std::size_t> reals(std::int64_t count, device::Scalar s) {
    const std::size_t n = static_cast<std::size_t>(count);
    switch (s) {
    case device::Scalar::S: return {ncclFloat32, n};
    case device::Scalar::C: return {ncclFloat32, 2 * n};
    case device::Scalar::Z: return {ncclFloat64, 2 * n};
    default: return {ncclFloat64, n};
    }
}

class NcclBcast final : public detail::DeviceBcast {
public:
    NcclBcast(const Comm& mpi, int ordinal) : ordinal_(ordinal) {
        ncclUniqueId id{};
        if (mpi.rank() == 0) CALA_CHECK_NCCL(ncclGetUniqueId(&id));
        if (MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, mpi.get()) != MPI_SUCCESS)
            throw Error("resident gemm: MPI_Bcast of the NCCL unique id failed");
        CALA_CHECK_CUDA(cudaSetDevice(ordinal));
        CALA_CHECK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
        CALA_CHECK_NCCL(ncclCommInitRank(&comm_, mpi.size(), id, mpi.rank()));
    }
    ~NcclBcast() override {
        cudaSetDevice(ordinal_);
        if (stream_) cudaStreamSynchronize(stream_);
        for (auto e : events_) cudaEventDestroy(e);
        if (comm_) ncclCommDestroy(comm_);
        if (stream_) cudaStreamDestroy(stream_);
    }
    NcclBcast(const NcclBcast&) = delete;
    NcclBcast& operator=(const NcclBcast&) = delete;

    void bcast(void* buf, std::int64_t count, device::Scalar s, int root) override {
        const auto [t, n] = reals(count, s);
        CALA_CHECK_CUDA(cudaSetDevice(ordinal_));
        CALA_CHECK_NCCL(ncclBroadcast(buf, buf, n, t, root, comm_, stream_));
    }
    // A complex sum is the sum of the real and imaginary parts apart: pairs of reals again.
    void reduce(void* buf, std::int64_t count, device::Scalar s, int root) override {
        const auto [t, n] = reals(count, s);
        CALA_CHECK_CUDA(cudaSetDevice(ordinal_));
        CALA_CHECK_NCCL(ncclReduce(buf, buf, n, t, ncclSum, root, comm_, stream_));
    }
    std::int64_t mark() override {
        CALA_CHECK_CUDA(cudaSetDevice(ordinal_));
        cudaEvent_t e = nullptr;
        CALA_CHECK_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        events_.push_back(e);
        CALA_CHECK_CUDA(cudaEventRecord(e, stream_));
        return first_ + static_cast<std::int64_t>(events_.size()) - 1;
    }
    void wait(std::int64_t mark) override {
        CALA_CHECK_CUDA(cudaSetDevice(ordinal_));
        while (first_ <= mark && !events_.empty()) {  // marks complete in order
            CALA_CHECK_CUDA(cudaEventSynchronize(events_.front()));
            cudaEventDestroy(events_.front());
            events_.pop_front();
            ++first_;
        }
    }

private:
    int ordinal_;
    ncclComm_t comm_ = nullptr;
    cudaStream_t stream_ = nullptr;
    std::deque<cudaEvent_t> events_;
    std::int64_t first_ = 0;  // mark of events_.front()
};

const bool registered = [] {
    detail::register_device_bcast(
        [](const Comm& comm, int ordinal) { return std::make_unique<NcclBcast>(comm, ordinal); });
    return true;
}();

}  // namespace

}  // namespace cala::cuda

// NCCL broadcast of a device-resident panel, one GPU per rank (run as: mpiexec.mpich -n 2
// test_nccl). Exits 77 (meson: skipped) where fewer GPUs than ranks are visible: NCCL does not
// put two ranks on one GPU.

#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <mpi.h>

#include <complex>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_device.hpp"
#include "nccl_comm.hpp"

namespace {
int g_rank = 0, g_size = 1;

template <class T>
void bcast_case(cala::cuda::nccl::Comm& nc, cala::cuda::CudaDevice& dev, int root) {
    const cala::index_t rows = 300, cols = 7;  // a panel, rows the tile does not divide
    const std::int64_t bytes = rows * cols * static_cast<std::int64_t>(sizeof(T));
    std::vector<T> want(rows * cols), got(rows * cols, T{});
    for (std::size_t i = 0; i < want.size(); ++i) want[i] = T(static_cast<float>(i % 97) + 0.5f);
    void* buf = dev.allocate(bytes);
    if (g_rank == root) dev.copy_to_device({buf, rows, want.data(), rows, rows, cols, sizeof(T)});
    dev.synchronize();

    nc.bcast(buf, rows * cols, cala::device::scalar_of<T>(), root);
    nc.synchronize();

    dev.copy_to_host({got.data(), rows, buf, rows, rows, cols, sizeof(T)});
    dev.synchronize();
    dev.release(buf, bytes);
    int ok = got == want;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    CHECK(ok == 1);
}
}  // namespace

TEST_CASE("nccl::Comm::from_mpi and bcast of a device panel, every type, every root") {
    auto nc = cala::cuda::nccl::Comm::from_mpi(cala::Comm::borrow(MPI_COMM_WORLD), g_rank);
    cala::cuda::CudaDevice dev(g_rank, 0);
    CHECK(nc.rank() == g_rank);
    CHECK(nc.size() == g_size);
    for (int root = 0; root < g_size; ++root) {
        bcast_case<float>(nc, dev, root);
        bcast_case<double>(nc, dev, root);
        bcast_case<std::complex<float>>(nc, dev, root);
        bcast_case<std::complex<double>>(nc, dev, root);
    }
}

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    const char* want = std::getenv("CALA_TEST_NPROCS");
    if (want == nullptr || std::atoi(want) != g_size) {
        if (g_rank == 0) std::fprintf(stderr, "test_nccl: registered for CALA_TEST_NPROCS=%s ranks, world has %d\n",
                                      want ? want : "(unset)", g_size);
        MPI_Finalize();
        return 2;
    }
    if (cala::cuda::device_count() < g_size) {
        if (g_rank == 0)
            std::fprintf(stderr, "test_nccl: %d CUDA device(s) for %d ranks, skipped\n", cala::cuda::device_count(),
                         g_size);
        MPI_Finalize();
        return 77;
    }
    doctest::Context ctx(argc, argv);
    if (g_rank != 0) ctx.setOption("out", "/dev/null");
    int any = ctx.run() != 0;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any;
}

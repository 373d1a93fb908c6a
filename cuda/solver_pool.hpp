#pragma once
// cuSOLVER's handle, workspace and info words for one CudaDevice's potrf calls, kept in a
// process-wide pool per GPU once the device is gone (never freed, like the staging slots), so
// that cusolverDnCreate and the workspace's cudaMalloc are paid once per process, not per call.

#include <cusolverDn.h>

#include <cstddef>
#include <vector>

namespace cala::cuda {

struct Solver {
    int ordinal = 0;
    cusolverDnHandle_t h = nullptr;
    cusolverDnParams_t params = nullptr;
    void* work = nullptr;
    std::size_t work_bytes = 0;
    std::vector<char> host_work;
    int* info = nullptr;              // device: the last call's
    long long* first_info = nullptr;  // device: the first nonzero since take_info()
};

/// A solver of GPU ordinal (the current device), from the pool or made.
Solver* take_solver(int ordinal);
/// Back into the pool (the device is gone); never destroyed.
void give_solver(Solver* s) noexcept;

}  // namespace cala::cuda

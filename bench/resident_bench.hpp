#pragma once
// cala-bench gemm --resident: cala::gemm on device-resident operands (cala/resident.hpp) against
// the in-core product on one device, same run (bench/resident_bench.cpp).

#include <cstdint>
#include <functional>
#include <string>

#include "cala/cholesky.hpp"
#include "cala/gemm.hpp"
#include "cala/matrix.hpp"
#include "cala/types.hpp"

namespace cala::bench {

/// What `cala-bench gemm --resident DEV` runs (gemm_bench.cpp checks the options and fills it).
struct ResidentGemmArgs {
    std::string spec;                  ///< --resident: "host", or CUDA ordinals "0" | "0,1" (rank r: entry r mod count)
    std::string transport = "auto";    ///< --transport: auto | staged | nccl
    std::string type = "d", opa = "N", opb = "N";
    index_t m = 0, n = 0, k = 0, nb = 0, panel_width = 0;
    int lookahead = 1, runs = 5, threads = 1;
    std::string threads_from;
    double alpha = 1, beta = 1;
    double max_device_mb = 0;          ///< cap per rank's device, MiB (0: HostDevice sized to fit, CUDA its free memory)
    Variant variant = Variant::Auto;   ///< --variant
    Shape3D grid3d = {};               ///< --grid PxQxC: a forced 2.5D/3D grid (zero: 2D)
    index_t block_size = 0;            ///< --block-size: the 2.5D/3D layouts' block
    bool plan_grid = false;            ///< --plan: the host planner picks the grid (ResidentGemmOptions::plan_grid)
};

/// Runs the resident gemm on a p x q grid of MPI_COMM_WORLD and emits one JSON line (rank 0).
/// Collective over MPI_COMM_WORLD; a device that cannot be opened on any rank, or a reference
/// that does not fit rank 0's device, is a cala::Error on every rank.
void run_resident_gemm(const ResidentGemmArgs& args, int p, int q);

/// This rank's entry of a device list ("0,1": entry rank mod count).
std::string entry_of(const std::string& spec, int rank);

/// What `cala-bench potrf --resident DEV` runs (potrf_bench.cpp fills it; bench/resident_potrf.cpp).
struct ResidentPotrfArgs {
    std::string spec;                ///< --resident: "host", or CUDA ordinals (rank r: entry r mod count)
    std::string transport = "auto";  ///< --transport: auto | staged | nccl
    std::string type = "d", uplo = "L", threads_from;
    int lookahead = 1, runs = 5, threads = 1;
    double max_device_mb = 0;        ///< cap per rank's device, MiB (0: HostDevice sized to fit, CUDA its free memory)
    CholeskyVariant variant = CholeskyVariant::TwoD;  ///< --variant: 2D, or the layered Repl / ReplPart
    Shape3D grid3d = {};             ///< --grid PxQxH of the layered variants (zero: the planner's)
    index_t block_size = 0;          ///< --block-size: tiles of the layered layout (0: nb)
};

/// cala::potrf on a resident copy of a0 (Hermitian positive definite, on the grid of MPI_COMM_WORLD)
/// against the in-core potrf of the whole matrix on rank 0's device (cusolverDnXpotrf on a GPU,
/// the HostDevice's LAPACK potrf otherwise), same run; one JSON line (rank 0). `check` gives the
/// probe error of a factor. Collective over a0's grid.
template <class T>
void run_resident_potrf(const ResidentPotrfArgs& args, const DistMatrix<T>& a0,
                        const std::function<double(const DistMatrix<T>&)>& check);

}  // namespace cala::bench

#pragma once
// p?gemm_, p?potrf_, p?trsm_, p?syrk_ and p?herk_ on a GPU node: whether a call the shim computes runs resident on
// the rank's device (CALA_DEVICES), and the resident run itself.
//
// pgemm.cpp -> resident_route (this: the process's device, its measured rate, the model, one
// allreduce over the grid) -> ResidentMatrix::from_host + cala::gemm(ResidentMatrix...) + to_host
// (lib/resident) -> Device::gemm (CudaDevice: cuBLAS; HostDevice: BLIS)
//
// p?potrf_ the same way (ppotrf.cpp -> choose_potrf_route -> run_resident_potrf, resident_potrf.cpp:
// the triangle of sub(A)'s local array to the device, cala::potrf(ResidentMatrix) -> Device::potrf
// (cuSOLVER on a 1 x 1 grid) or the resident 2D Cholesky, the factored triangle back):
//   device = 2 x (the triangle's local part) bytes / copy rate
//            + resident_potrf_cost (flops / device rate, words and messages / the network)
//   cpu    = the planner's predicted seconds of cala::potrf on the caller's array (plan_potrf)
//
// p?trsm_ the same way (ptrxm.cpp -> choose_trsm_route -> run_resident_trsm: A's and B's local
// arrays to the device, cala::trsm(Side, ResidentMatrix...), B back):
//   device = (A + 2 B) local bytes / copy rate + resident_trsm_cost at the device's rates
//   cpu    = trsm_cost of the host cala::trsm at the CPU's (MachineModel::from_env)
//
// p?syrk_ and p?herk_ the same way (psyrk.cpp -> choose_herk_route -> run_resident_rank_k:
// op(sub(A)) and C's triangle to the device, cala::herk / syrk(ResidentMatrix...), the triangle
// back; complex p?syrk_ through Device::syrk, Aᵀ with complex alpha and beta):
//   device = (A + C's triangle, twice unless beta = 0) local bytes / copy rate
//            + resident_herk_cost (resident_syrk_cost)
//   cpu    = the CPU path's prediction (the shim's symmetric-layout route, sym_route.hpp)
//
// The device is opened once per process, on the first call that asks for it, and kept: rank r of
// MPI_COMM_WORLD takes entry r mod count of CALA_DEVICES ("0", "0,1", "host"), as cala-bench gemm
// --resident does. A device that cannot be opened (a bad ordinal, CUDA not built) leaves every
// call on the CPU path, with one line on that rank.
//
// The model, per rank, then the maximum over the grid (the same answer on every rank):
//   device = (A, B[, C] to the device + C back) bytes / copy rate
//            + resident_gemm_cost (flops / device rate, words and messages / the network)
//   cpu    = the planner's predicted seconds of cala::gemm on the caller's arrays (plan_gemm)
// The device rate and copy rate are measured once per process and type by a short gemm on the
// device (or CALA_SHIM_DEVICE_GFLOPS / CALA_SHIM_DEVICE_COPY_GBS). On a 1 x 1 grid the run is
// pipelined (run_pipelined): A's copy, then the larger of the other copies and the product. CALA_SHIM_DEVICE=always
// takes the device for every call the shim computes, never for none; model (the default)
// decides by the model. A device that cannot be opened on some rank sends the call to ScaLAPACK's
// own: the CPU path's cala::gemm reads CALA_DEVICES as its units too and would fail there.

#include <string>
#include <vector>

#include "cala/grid.hpp"
#include "cala/layout.hpp"
#include "cala/matrix.hpp"
#include "cala/resident.hpp"
#include "resident/triangle.hpp"

namespace cala::scalapack {

/// Where one p?gemm_ call runs.
struct DeviceRoute {
    bool resident = false;  ///< on the rank's device, through ResidentMatrix
    ResidentDevice dev;     ///< the rank's device (when resident)
    std::string where;      ///< "device cuda:0 (resident)" or "cpu"
    std::string reason;     ///< why, with the predicted seconds when the model decided
    bool same_ab = false;   ///< A and B are one local array with one layout on every rank
    bool pipelined = false; ///< a 1 x 1 grid: run_pipelined (unless CALA_SHIM_DEVICE_PIPELINE=0)
    bool asked = false;     ///< CALA_DEVICES is set (the route is worth a log note)
    /// Every rank of the grid opened its device. When asked and not usable, the CPU path is
    /// ScaLAPACK's own: cala::gemm would read the same CALA_DEVICES as its units and fail.
    bool usable = false;
};

/// The route of C := alpha·op(A)·op(B) + beta·C for operands with these layouts, the same on every
/// rank of the grid. Collective over the grid (one allreduce of three numbers) when CALA_DEVICES
/// is set; local otherwise. Never throws for a device that cannot be opened (not usable). `same_ab`: this rank sees A and B as one local array with one
/// layout; the route's same_ab is true only where every rank does.
template <class T>
DeviceRoute choose_route(const Grid2D& grid, Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b,
                         const BlockCyclic& c, bool beta_zero, bool same_ab);

/// The resident run: A, B (once when `same_ab`: the same local array and layout) and, unless
/// beta == 0, C copied onto `dev`; cala::gemm on them; C copied back into the caller's array.
/// Collective over the grid. A cala::Error (raised on every rank: an allocation past the device's
/// memory, the workspace) leaves the caller's C as it was.
template <class T>
void run_resident(const ResidentDevice& dev, Op op_a, Op op_b, T alpha, const MatrixRef<T>& a,
                  const MatrixRef<T>& b, T beta, const MatrixRef<T>& c, bool same_ab);

/// On a 1 x 1 grid: A copied to `dev` whole, then C in column slices (pipeline_slice wide), each
/// slice's op(B) (and C unless beta == 0) up, its product, and C's slice down, two slices in
/// flight, so that the copies overlap the products (resident_pipeline.cpp). Everything is
/// allocated before C is written: a device too small throws cala::Error with C untouched. Local.
template <class T>
void run_pipelined(const ResidentDevice& dev, Op op_a, Op op_b, T alpha, const MatrixRef<T>& a,
                   const MatrixRef<T>& b, T beta, const MatrixRef<T>& c);

/// The route of p?potrf_ on sub(A) with layout `a` (square nb x nb tiles from a block boundary, as
/// p?potrf_'s checks leave it), the same on every rank. Collective over the grid (one allreduce)
/// when CALA_DEVICES is set; local otherwise. Never throws for a device that cannot be opened.
template <class T>
DeviceRoute choose_potrf_route(const Grid2D& grid, Uplo uplo, const BlockCyclic& a);

/// The resident p?potrf_: the triangle `uplo` of A's local array (each local block column's rows
/// from its diagonal band on: Lower; up to it: Upper) copied onto `dev`, cala::potrf on it, and
/// only the factored triangle's entries copied back (the other triangle and everything outside A
/// never written). Returns cala::potrf's info (the same on every rank). Collective over A's grid.
/// A cala::Error (raised on every rank: the device's memory) leaves the caller's array as it was.
template <class T>
index_t run_resident_potrf(const ResidentDevice& dev, Uplo uplo, const MatrixRef<T>& a);

/// The route of p?trsm_ on sub(A) (k x k, layout `a`) and sub(B) (layout `b`), the same on every
/// rank. Collective over the grid (one allreduce) when CALA_DEVICES is set; local otherwise. The
/// model: A's and B's local arrays up, B back, plus resident_trsm_cost at the device's rate
/// (flops) and the network's (words and messages), against the host trsm_cost at the CPU's.
template <class T>
DeviceRoute choose_trsm_route(const Grid2D& grid, Side side, Uplo uplo, Op op, const BlockCyclic& a,
                              const BlockCyclic& b);

/// The resident p?trsm_: A's and B's local arrays copied onto `dev`, cala::trsm on them (one
/// Device::trsm on a 1 x 1 grid, else the resident 2D solves), B copied back. Collective over the
/// grid. A cala::Error (raised on every rank: the device's memory) leaves the caller's B as it was.
template <class T>
void run_resident_trsm(const ResidentDevice& dev, Side side, Uplo uplo, Op op, Diag diag, T alpha,
                       const MatrixRef<T>& a, const MatrixRef<T>& b);

/// The route of p?syrk_ and p?herk_: C's triangle := alpha·A·Aᴴ + beta·C (hermitian; else A·Aᵀ), A n x k
/// with layout `a` (op(sub(A)) as the CPU path has it), C square-tiled, the same on every rank.
/// Collective over the grid (one allreduce) when CALA_DEVICES is set; local otherwise. The model:
/// A's local array and C's triangle up (C's unless beta = 0), C's triangle back, plus
/// resident_herk_cost (resident_syrk_cost) at the device's rates, against `cpu_seconds` (the CPU path's prediction).
/// `moved_from`: sub(A)'s layout where A is op(sub(A)) transposed on the host first (op_moved),
/// whose redistribution the device's side then pays too (at the `CALA_MODEL_*` network).
template <class T>
DeviceRoute choose_herk_route(const Grid2D& grid, Uplo uplo, const BlockCyclic& a, const BlockCyclic& c,
                              bool beta_zero, double cpu_seconds, const BlockCyclic* moved_from = nullptr,
                              Op op_moved = Op::N, bool hermitian = true);

/// The resident p?syrk_ / p?herk_: A's local array and C's triangle (unless beta = 0) copied onto
/// `dev`, cala::herk (hermitian: real parts of alpha and beta) or cala::syrk on them, C's triangle
/// copied back (the other triangle never written). Collective over the grid. A cala::Error
/// (raised on every rank) leaves the caller's C as it was.
template <class T>
void run_resident_rank_k(const ResidentDevice& dev, Uplo uplo, bool hermitian, T alpha, const MatrixRef<T>& a, T beta,
                         const MatrixRef<T>& c);

/// The triangle `uplo` of a's local array (square nb x nb tiles from a block boundary: each local
/// block column's rows from its diagonal band on (Lower), or up to it (Upper)) into ra's local
/// array, and back: only the triangle's entries are written into the caller's array, the diagonal
/// band through a host slot. Local; completed on return.
template <class T>
void triangle_to_device(Uplo uplo, const MatrixRef<T>& a, const ResidentMatrix<T>& ra);
template <class T>
void triangle_to_host(Uplo uplo, const ResidentMatrix<T>& ra, const MatrixRef<T>& a);

/// Width of run_pipelined's slices of C for n columns: n / 16 rounded up, at least 256
/// (CALA_SHIM_DEVICE_SLICE, when set, instead: tests).
index_t pipeline_slice(index_t n);

}  // namespace cala::scalapack

#pragma once
// Device-resident distributed matrices (issue 30): DistMatrix's block-cyclic layout with the local
// array in the memory of the rank's device, and SUMMA on them.
//
// cala::gemm(ResidentMatrix...) -> resident planner (lib/resident/gemm.cpp: checks, variant,
//     transport, operand moves) -> resident_summa_c (lib/resident/summa_c.cpp) | resident_summa_a /
//     _b (summa_ab.cpp) -> panel transport (NCCL from device memory | MPI staged through host
//     memory; partial sums by ncclReduce | MPI ireduce staged) -> Device::gemm / add (CudaDevice:
//     cuBLAS; HostDevice: BLIS)
//
// cala::potrf(ResidentMatrix) -> checks, transport (lib/resident/potrf.cpp) -> one Device::potrf
//     on a 1 x 1 grid | resident 2D right-looking Cholesky with lookahead (potrf_2d.cpp) -> panel
//     transport -> Device::potrf / trsm / herk / gemm (CudaDevice: cuSOLVER, cuBLAS; HostDevice:
//     LAPACK, BLIS)
//
// cala::potrs(ResidentMatrix, ResidentMatrix) -> checks, transport, the host potrs's plan
//     (lib/resident/potrs.cpp) -> two Device::trsm on a 1 x 1 grid | the host potrs's 2D loops on
//     device tiles (potrs_2d.cpp, potrs_2d_trans.cpp) -> panel transport -> Device::trsm / gemm
//
// cala::herk / syrk(ResidentMatrix, ResidentMatrix) -> checks, the gemm planner's moves (lib/resident/
//     syrk.cpp) -> resident_summa_c with each group's product on C's triangle -> Device::gemm / herk / syrk
//
// cala::trsm(Side, ResidentMatrix, ResidentMatrix) -> checks, transport, the host trsm's plan
//     (lib/resident/trsm.cpp) -> one Device::trsm on a 1 x 1 grid | B transposed (right side),
//     the same 2D loops as potrs -> Device::trsm / gemm
//
// No CUDA type appears here: the device is cala::device::Device (lib/device/device.hpp), made
// by name ("host", or a CUDA ordinal with libcala_cuda loaded). In CI a HostDevice stands for
// device memory: counted host memory under a cap, reached only through the device's copies.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cala/cholesky.hpp"
#include "cala/gemm.hpp"
#include "cala/grid.hpp"
#include "cala/layout.hpp"
#include "cala/matrix.hpp"
#include "cala/model.hpp"

namespace cala::device {
class Device;
}

namespace cala {

/// The device a rank's resident matrices live on. Cheap to copy: copies share the device, which
/// lives as long as the last copy or matrix on it. Default-constructed: no device (plain host
/// memory, as a DistMatrix).
class ResidentDevice {
public:
    ResidentDevice() = default;
    /// "host": a HostDevice (host memory standing for device memory, capped at cap_bytes; 0:
    /// 1 GiB); "0", "1", ...: that CUDA device (needs libcala_cuda; cap 0: its free memory).
    /// Local. Throws cala::Error naming spec when it is neither, or CUDA is not loaded.
    static ResidentDevice open(const std::string& spec, std::int64_t cap_bytes = 0);

    bool on_device() const noexcept { return s_ != nullptr; }  ///< false: plain host memory
    bool is_cuda() const noexcept;
    int ordinal() const noexcept;  ///< CUDA ordinal; -1 for a HostDevice or no device
    /// "host memory", "host#2" (the second HostDevice this process opened), "cuda:0".
    std::string name() const;
    std::int64_t budget_bytes() const noexcept;  ///< 0 without a device
    std::int64_t used_bytes() const noexcept;
    std::int64_t peak_bytes() const noexcept;
    /// The device itself (internal layers); nullptr without one.
    device::Device* get() const noexcept;
    /// The same device (or both none).
    friend bool operator==(const ResidentDevice& a, const ResidentDevice& b) noexcept { return a.s_ == b.s_; }

private:
    struct State;
    std::shared_ptr<State> s_;
};

/// A distributed matrix whose local storage lives on a device: ScaLAPACK's local array (local
/// rows x local columns, column-major, leading dimension ld >= max(1, local rows)) allocated on
/// the rank's ResidentDevice (or, without one, in host memory). Move-only. data() is a device
/// address: read and write it through the device (or gather / scatter / redistribute).
template <class T>
class ResidentMatrix {
public:
    /// Collective over the grid: every rank allocates its local array zeroed on `dev`; a layout
    /// that does not fit the grid, or an allocation past the device's cap on any rank, is a
    /// cala::Error on every rank (nothing stays allocated).
    ResidentMatrix(const Grid2D& grid, const BlockCyclic& layout, const ResidentDevice& dev);
    ResidentMatrix(const Grid2D& grid, index_t m, index_t n, index_t mb, index_t nb, const ResidentDevice& dev,
                   int rsrc = 0, int csrc = 0);
    ~ResidentMatrix();
    ResidentMatrix(ResidentMatrix&& o) noexcept;
    ResidentMatrix& operator=(ResidentMatrix&& o) noexcept;
    ResidentMatrix(const ResidentMatrix&) = delete;
    ResidentMatrix& operator=(const ResidentMatrix&) = delete;

    const Grid2D& grid() const noexcept { return grid_; }
    const BlockCyclic& layout() const noexcept { return layout_; }
    const ResidentDevice& device() const noexcept { return dev_; }
    bool on_device() const noexcept { return dev_.on_device(); }
    index_t m() const noexcept { return layout_.m(); }
    index_t n() const noexcept { return layout_.n(); }
    index_t m_loc() const noexcept { return layout_.rows.local_size(grid_.row()); }
    index_t n_loc() const noexcept { return layout_.cols.local_size(grid_.col()); }
    index_t ld() const noexcept { return ld_; }
    T* data() const noexcept { return data_; }  ///< device address (nullptr: no local element)

    /// Local: every local element := value (completed on return).
    void fill(T value);
    /// Local: the local array to / from host memory (m_loc x n_loc, leading dimension ld_host >=
    /// max(1, m_loc)); completed on return.
    void to_host(T* host, index_t ld_host) const;
    void from_host(const T* host, index_t ld_host);
    /// A view of the local array when it lives in host memory (no device); cala::Error otherwise.
    MatrixRef<T> host_view() const;

private:
    Grid2D grid_;
    BlockCyclic layout_;
    ResidentDevice dev_;
    T* data_ = nullptr;
    index_t ld_ = 1;
    std::int64_t bytes_ = 0;
    void release() noexcept;
};

/// Collective over the grid: the whole matrix, column-major m x n with ld = max(1, m), on `root`
/// (host memory); an empty vector elsewhere. Staged through host memory.
template <class T>
std::vector<T> gather(const ResidentMatrix<T>& a, int root = 0);

/// Collective over the grid: a := global (m x n column-major, leading dimension ldg, host memory
/// on root).
template <class T>
void scatter(const T* global, index_t ldg, ResidentMatrix<T>& a, int root = 0);

/// Collective: dst := op(src) for any block-cyclic layouts, on the same grid or on two grids over
/// congruent communicators (a 2 x 2 and a 4 x 1 grid of the same ranks), each side on a device
/// or in host memory. Staged through host memory; traffic counted as redistribute's (isend /
/// irecv). Bad shapes or grids over other ranks: cala::Error on every rank.
template <class T>
void redistribute(Op op, const ResidentMatrix<T>& src, ResidentMatrix<T>& dst);
template <class T>
void redistribute(Op op, const MatrixRef<T>& src, ResidentMatrix<T>& dst);
template <class T>
void redistribute(Op op, const ResidentMatrix<T>& src, const MatrixRef<T>& dst);

/// How resident SUMMA moves its panels.
enum class PanelTransport {
    Auto,    ///< NCCL where every rank has its own CUDA device and NCCL is loaded, else Staged
    Staged,  ///< MPI broadcasts of host copies of the device panels
    Nccl,    ///< ncclBroadcast from device memory (cala::Error on every rank where it cannot serve)
};

const char* to_string(PanelTransport t) noexcept;

/// What a resident gemm did.
struct ResidentGemmReport {
    PanelTransport transport = PanelTransport::Staged;
    std::string reason;               ///< why that transport ("two ranks share CUDA device 0", ...)
    std::int64_t device_bytes = 0;    ///< device workspace of the call on this rank (moved operands, slots)
    Variant variant = Variant::StationaryC;  ///< the variant that ran (gemm; herk, syrk: C)
    Shape3D grid3d = {};  ///< the p x q x c grid a 2.5D / 3D gemm ran on; zero: 2D on C's grid
};

struct ResidentGemmOptions {
    /// Which operand stays (gemm only; herk and syrk keep C): Auto takes the variant that moves
    /// the fewest words in all (choose_gemm_variant, as the host's 2D planner), stationary C on
    /// one rank.
    Variant variant = Variant::Auto;
    /// Groups of panels in flight while the current one's local GEMM runs (>= 1); the A- and
    /// B-stationary variants keep as many groups of partial sums in flight, plus one.
    int lookahead = 1;
    /// Width of one step's panel along the looped dimension (k for stationary C, n for A, m for
    /// B), rounded up to whole blocks; 0: 512, or all of it on a 1 x 1 grid (one device gemm:
    /// nothing travels).
    index_t panel_width = 0;
    PanelTransport transport = PanelTransport::Auto;
    /// gemm only: 2.5D / 3D SUMMA on this p x q x c grid over C's ranks (p·q·c <= ranks; layer h
    /// on ranks h·p·q .. (h+1)·p·q − 1, further ranks idle), in the placements of the host's
    /// 2.5D path (cala::gemm with GemmOptions::grid3d: the same variant, block size and traffic),
    /// with the data on the device. Zero (the default): 2D on C's own grid, unless plan_grid.
    Shape3D grid3d = {};
    /// gemm only, grid3d zero: the host planner (cala::plan_gemm: its machine model, every
    /// variant, 2D on C's grid or any 2.5D / 3D grid within memory_limit_bytes) picks the grid,
    /// the variant and the block size. Its model is the host's (CPU flops): on a GPU it
    /// underrates the flops against the words, so it is not the default.
    bool plan_grid = false;
    /// Block size of the layered layouts of a 2.5D / 3D gemm (0: the planner's).
    index_t block_size = 0;
    /// The planner's workspace limit per rank in bytes (0: CALA_MAX_MEMORY_MB, else none); the
    /// device's free memory is checked apart (a cala::Error on every rank where it does not fit).
    std::int64_t memory_limit_bytes = 0;
    ResidentGemmReport* report = nullptr;  ///< filled when not null
};

/// C := alpha·op(A)·op(B) + beta·C, all three resident on one device per rank: 2D SUMMA with the
/// MPI path's lookahead, local products by the device's gemm on its streams. Stationary C: the
/// panels of op(A) along the process rows and of op(B) down the columns. Stationary A (B): the
/// panels of op(B) down the columns (of op(A) along the rows), the partial products summed along
/// the rows (down the columns) onto the owners of C's blocks (ncclReduce, or MPI ireduce staged
/// through host memory) and added into C on the device (Device::add).
///
/// With ResidentGemmOptions::grid3d (or plan_grid choosing one), 2.5D / 3D SUMMA: the operands
/// move into the layered placements (staged through host memory, replicated operands broadcast
/// along the fibers), every layer runs the 2D engine above on its p x q grid on the device, the
/// layers' partial products of stationary C are reduced over the fibers (staged) and the result
/// returns into C's layout (staged; beta applied there).
///
/// Collective over the grid of C; every rank passes the same ops, scalars, layouts and options.
/// Operands whose layouts do not line up with C's are redistributed on the device first (staged,
/// counted in traffic and in resident_gemm_cost).
/// @pre A, B, C on the same grid and, on each rank, on the same device; every rank on the same
///      kind of memory (CUDA, HostDevice, host); op(A) m x k, op(B) k x n, C m x n; the
///      workspace fits the device (otherwise cala::Error on every rank, C untouched)
/// @note beta == 0: C is not read. All three in host memory: cala::gemm on their host views.
template <class T>
void gemm(Op op_a, Op op_b, T alpha, const ResidentMatrix<T>& a, const ResidentMatrix<T>& b, T beta,
          ResidentMatrix<T>& c, const ResidentGemmOptions& opts = {});

/// Exact words and messages process (row, col) moves in the resident gemm above (either
/// transport: NCCL broadcasts and reductions count as MPI's): the 2D SUMMA model of cala::gemm
/// for the variant the resident gemm runs, on its panel path (one broadcast or reduction per
/// block of the looped dimension along rows and columns), plus the operand moves.
/// extra_bytes is the device workspace (moved operands and panel slots); no host workspace.
/// A 2.5D / 3D gemm (grid3d, or plan_grid choosing one): gemm_cost's words and messages of the
/// host's 2.5D path with the layer loop on the panel path, and extra_bytes the device's share
/// (the layer's A', B', partial C and slots); `order` is the order of C's grid (it numbers the
/// ranks of the layers).
Cost resident_gemm_cost(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
                        const ResidentGemmOptions& opts, int row, int col, std::size_t elem_size, bool is_complex,
                        GridOrder order = GridOrder::RowMajor);

/// C := alpha·A·Aᴴ + beta·C on the `uplo` triangle of C (real types: A·Aᵀ, syrk), A n x k and C
/// n x n with square tiles, both on the rank's device; alpha and beta real; the other strict
/// triangle of C is not touched. On a 1 x 1 grid one Device::herk of the whole local matrices
/// (CudaDevice: cublas?syrk / ?herk); else the resident stationary-C SUMMA with A and Aᴴ as its operands
/// (A moved into C's rows and Aᴴ into C's columns on the device where they do not line up, staged
/// and counted), each group's product restricted to C's triangle: Device::gemm on the tiles off
/// the diagonal, Device::herk on the diagonal tiles (CudaDevice: cublas?syrk / ?herk). alpha == 0
/// or k == 0: the triangle scaled by beta, A not read.
///
/// Collective over the grid of C; every rank passes the same arguments.
/// @pre C square with square tiles (rows and columns blocked alike), A with C's n rows, on the
///      same grid; on each rank A and C on one device, every rank on the same kind of memory; the
///      workspace fits the device (otherwise cala::Error on every rank, C untouched). Both in host
///      memory on every rank: cala::herk on their host views.
template <class T>
void herk(Uplo uplo, real_t<T> alpha, const ResidentMatrix<T>& a, real_t<T> beta, ResidentMatrix<T>& c,
          const ResidentGemmOptions& opts = {});

/// Exact words and messages process (row, col) moves in the resident herk above (alpha != 0, k >
/// 0): resident_gemm_cost's for C := A·Aᴴ (the same broadcasts and operand moves), the flops of
/// C's triangle (2·rows·w·k per tile column off the diagonal, w·(w+1)·k per diagonal tile; 4x
/// for complex types), and extra_bytes: the device workspace. One rank: the flops alone.
Cost resident_herk_cost(Uplo uplo, const BlockCyclic& a, const BlockCyclic& c, const ResidentGemmOptions& opts,
                        int row, int col, std::size_t elem_size, bool is_complex);

/// C := alpha·A·Aᵀ + beta·C on the `uplo` triangle of C, no conjugation (BLAS ?syrk; complex
/// alpha and beta): the resident herk above with Aᵀ for Aᴴ, Device::syrk on the diagonal tiles
/// (CudaDevice: cublas?syrk), the same checks, moves and model. Real types: herk itself. Both
/// in host memory on every rank: cala::syrk on their host views.
template <class T>
void syrk(Uplo uplo, T alpha, const ResidentMatrix<T>& a, T beta, ResidentMatrix<T>& c,
          const ResidentGemmOptions& opts = {});

/// The resident syrk's words, messages, flops and workspace: resident_herk_cost's with Aᵀ.
Cost resident_syrk_cost(Uplo uplo, const BlockCyclic& a, const BlockCyclic& c, const ResidentGemmOptions& opts,
                        int row, int col, std::size_t elem_size, bool is_complex);

struct ResidentPotrfOptions {
    /// 1: the next panel's column is updated first, and the next panel factored, solved and its
    /// row broadcast posted before the rest of the trailing update; 0: one step at a time.
    int lookahead = 1;
    PanelTransport transport = PanelTransport::Auto;
    ResidentGemmReport* report = nullptr;  ///< filled when not null (device_bytes: the slots)
    /// potrf only. TwoD (the default): the 2D algorithm on A's grid. Repl / ReplPart: the
    /// replicated-diagonal 2.5D Cholesky of the host cala::potrf (CholeskyVariant) on the p x q x h
    /// grid `grid3d` over A's ranks (layer t on ranks t·p·q .. (t+1)·p·q − 1, further ranks idle;
    /// zero: the planner's grid), with the tiles in device memory: A moves into the layered
    /// placement (nb x nb tiles: block_size, else A's nb), each step's diagonal tile and panel are
    /// summed over the fibers, the solved panel goes to the layer(s) that update with it (Repl:
    /// the whole panel to layer l mod h; ReplPart: a column slice to each), all of that through
    /// host memory (MPI); inside a layer the panel travels as the 2D algorithm's (NCCL or staged).
    /// Auto: the host planner (resolve_potrf) chooses 2D or a layered grid under
    /// memory_limit_bytes; its machine model is the host's.
    CholeskyVariant variant = CholeskyVariant::TwoD;
    Shape3D grid3d = {};           ///< p x q x h of Repl / ReplPart (c is h); zero: the planner's
    index_t block_size = 0;        ///< tile size of the layered layout; 0: A's nb (or the planner's)
    std::int64_t memory_limit_bytes = 0;  ///< the planner's limit (host workspace per rank); 0: none
};

/// Cholesky factorization of the Hermitian positive definite matrix A in device memory: A = L·Lᴴ
/// (Lower) or A = Uᴴ·U (Upper), the factor overwriting that triangle; the other strict triangle
/// is not touched. On a 1 x 1 grid one Device::potrf of the whole local matrix (CudaDevice:
/// cusolverDnXpotrf); else the 2D right-looking block algorithm on A's tiles (block size nb):
/// Device::potrf of the diagonal tile, down its process column, Device::trsm of the panel, the
/// panel along the process rows and, transposed, down the process columns (NCCL from device
/// memory, or MPI staged through host memory), Device::herk / gemm on the trailing triangle.
///
/// Collective over the grid of A; every rank passes the same uplo, layout and options.
/// @return 0 on success; k > 0 when the leading minor of order k (1-based, global) is not
///         positive definite: the same k on every rank, as LAPACK's info. Then A holds the
///         factor of the tiles before the failed one; the rest of the triangle is unspecified.
/// A layout without square tiles aligned with the diagonal (mb != nb) is redistributed on the
/// device into nb x nb tiles and back (staged, counted in the traffic and in the model); on one
/// rank it is factored as it is.
/// With ResidentPotrfOptions::variant Repl / ReplPart (or Auto choosing them): the
/// replicated-diagonal 2.5D schedule on a p x q x h grid (above); the device then holds this
/// rank's full layer share and the slots, the report names the grid.
/// @pre A square, on the same kind of memory on every rank; the slots (and a converted copy, or
///      the layer share) fit the device (otherwise cala::Error on every rank, A untouched). A in
///      host memory on every rank: cala::potrf on its host view (with the layered variant and
///      grid where those options name one).
template <class T>
index_t potrf(Uplo uplo, ResidentMatrix<T>& a, const ResidentPotrfOptions& opts = {});

/// The resident options cala::potrf (host matrix, `devices` naming one device on several ranks)
/// runs with: its lookahead (0 or 1), and its variant, grid3d, block_size and memory limit where
/// the variant is Repl or ReplPart (Auto and TwoD: the resident 2D algorithm).
ResidentPotrfOptions resident_potrf_options(const CholeskyOptions& o);

/// Exact words and messages process (row, col) moves in the resident potrf above on device
/// memory (either transport), flops, and extra_bytes: its device slots (no host workspace but
/// the staged transport's host copies of them), with the conversion of a layout whose tiles are
/// not square (its redistributions and the converted copy). Independent of the matrix's values.
/// Layered (Repl / ReplPart): cala::potrf_cost's words and messages on the same plan (message
/// for message: the conversions into and out of the layered placement, the fiber sums, the
/// panel's moves), extra_bytes the device's layer share and slots; order: how A's grid numbers
/// its ranks (which rank is (row, col), and so its layer).
Cost resident_potrf_cost(Uplo uplo, const BlockCyclic& a, const ResidentPotrfOptions& opts, int row, int col,
                         std::size_t elem_size, bool is_complex, GridOrder order = GridOrder::RowMajor);

/// Solves A·X = B with the Cholesky factor of resident potrf(uplo, A): B := A⁻¹·B, A n x n (L·Lᴴ
/// in its lower triangle, or Uᴴ·U in its upper one), B n x nrhs overwritten by X, both on the
/// rank's device. On a 1 x 1 grid two Device::trsm of the whole local matrices; else the 2D loops
/// of the host cala::potrs on device tiles (forward, then backward with the transposed factor):
/// Device::trsm / gemm for the flops; A's column panels along the process rows and the solved
/// block rows down the process columns through the panel transport (NCCL from device memory, or
/// MPI staged through host memory); the transposed solve's partial sums reduced down the process
/// columns by MPI through host memory (either transport). With lookahead 1, as the host's.
///
/// Collective over the grid of B; every rank passes the same uplo, layouts and options.
/// Layouts as the host cala::potrs takes them: where A's square tiles do not line up with B's
/// rows, the host potrs's plan moves B (into A's rows) or A (into B's rows) once for both solves,
/// redistributed on the device (staged, counted in the traffic and in resident_potrs_cost).
/// @pre A square, B with A's n rows, on the same grid; on each rank A and B on one device, every
///      rank on the same kind of memory (CUDA, HostDevice, host); the workspace fits the device
///      (otherwise cala::Error on every rank, B untouched). Both in host memory on every rank:
///      cala::potrs on their host views. A is not checked for being a factor (nor for NaN).
template <class T>
void potrs(Uplo uplo, const ResidentMatrix<T>& a, ResidentMatrix<T>& b, const ResidentPotrfOptions& opts = {});

/// B := alpha·op(A)⁻¹·B (Left, A m x m) or B := alpha·B·op(A)⁻¹ (Right, A n x n), A triangular
/// (`uplo` triangle referenced, `diag`), B m x n, both on the rank's device: the host cala::trsm
/// on device tiles. On a 1 x 1 grid one Device::trsm of the whole local matrices (CudaDevice:
/// cublas?trsm); else the host's plan (A or B moved once into layouts that line up, redistributed
/// on the device, staged and counted), B scaled by alpha on the device, and the 2D loops of the
/// resident potrs (op = N: A's column panels along the process rows, the solved block rows down
/// the process columns; op = T/C: the same panels, partial sums reduced down the columns through
/// host memory) with the unit diagonal where `diag` says so. The right side solves the transposed
/// problem with the left-side loops, as the host's: B moves into a transposed copy lined up with
/// A (redistribute with T, or C for op = C) and back. alpha == 0: B := 0, A not read.
///
/// Collective over the grid of B; every rank passes the same arguments.
/// @pre A square, B with A's n rows (Left) or columns (Right), on the same grid; on each rank A
///      and B on one device, every rank on the same kind of memory; the workspace fits the device
///      (otherwise cala::Error on every rank, B untouched). Both in host memory on every rank:
///      cala::trsm on their host views.
template <class T>
void trsm(Side side, Uplo uplo, Op op, Diag diag, T alpha, const ResidentMatrix<T>& a, ResidentMatrix<T>& b,
          const ResidentPotrfOptions& opts = {});

/// Exact words and messages process (row, col) moves in the resident trsm above on device memory
/// (either transport; alpha != 0): the host trsm_cost(side, ...), message for message, flops, and
/// extra_bytes: its device workspace (the transposed copy of B on the right side, the plan's
/// moved operand and the loop's slots; none on one rank).
Cost resident_trsm_cost(Side side, Uplo uplo, Op op, const BlockCyclic& a, const BlockCyclic& b,
                        const ResidentPotrfOptions& opts, int row, int col, std::size_t elem_size, bool is_complex);

/// Exact words and messages process (row, col) moves in the resident potrs above on device
/// memory (either transport): those of the host potrs_cost, message for message (the same plan,
/// broadcasts and reductions), flops, and extra_bytes: its device workspace (the moved operand
/// and the larger loop's slots; none on one rank). Independent of the values.
Cost resident_potrs_cost(Uplo uplo, const BlockCyclic& a, const BlockCyclic& b, const ResidentPotrfOptions& opts,
                         int row, int col, std::size_t elem_size, bool is_complex);

}  // namespace cala

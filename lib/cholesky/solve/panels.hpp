#pragma once
// The column panels of A that the trsm loops broadcast along process rows: step s's panel is a
// rank's local rows of A(:, k) in the stored triangle (k the block of step s), sent by process
// column k%q into a ring of `slots_a` buffers (read from A itself when q == 1).

#include <algorithm>
#include <vector>

#include "cala/comm.hpp"
#include "cala/matrix.hpp"
#include "cholesky/solve/trsm_plan.hpp"
#include "core/workspace.hpp"
#include "kernels/blas.hpp"
#include "matrix/local_ptr.hpp"

namespace cala::detail {

/// A column-major piece of local memory.
template <class T>
struct Piece {
    const T* data;
    index_t ld;
};

template <class T>
class Panels {
public:
    Panels(const MatrixRef<T>& a, bool lower, Op op, const TrsmBuffers& buf)
        : a_(a), lower_(lower), op_(op), slots_(std::max<index_t>(buf.slots_a, 1)), buf_(buf.panel_elems),
          reqs_(static_cast<std::size_t>(slots_)),
          slot_elems_(buf.wmax * std::max<index_t>(a.layout().rows.local_size(a.grid().row()), 1)) {}

    StepRows rows(index_t s) const {
        const Dist1D& R = a_.layout().rows;
        return step_rows(R, lower_, block_of_step(lower_, op_, R.num_blocks(), s), a_.grid().row());
    }
    /// Posts the broadcast of step s's panel (its slot must be free).
    void post(index_t s) {
        const Grid2D& g = a_.grid();
        const Dist1D& C = a_.layout().cols;
        const index_t k = block_of_step(lower_, op_, C.num_blocks(), s);
        const auto sr = rows(s);
        const index_t h = sr.p1 - sr.p0;
        if (g.q() == 1 || h == 0) return;
        T* dst = buf_.data() + (s % slots_) * slot_elems_;
        const int root = C.block_owner(k);
        reqs_[static_cast<std::size_t>(s % slots_)].wait();  // the slot's previous panel (its root may not have waited)
        if (g.col() == root)
            kernels::copy(Op::N, h, sr.w, local_ptr(a_, sr.p0, C.to_local(C.block_start(k))), a_.ld(), dst, h);
        reqs_[static_cast<std::size_t>(s % slots_)] = g.row_comm().ibcast(dst, h * sr.w, root);
    }
    /// Waits until step s's panel is here (at once on its root, which reads its own copy).
    void wait(index_t s) {
        const Dist1D& C = a_.layout().cols;
        if (C.block_owner(block_of_step(lower_, op_, C.num_blocks(), s)) == a_.grid().col()) return;
        reqs_[static_cast<std::size_t>(s % slots_)].wait();
    }
    void poll() { test_all(reqs_); }
    /// Step s's panel; its local row i (p0 <= i < p1) is at data + (i - p0).
    Piece<T> get(index_t s) const {
        const auto sr = rows(s);
        if (a_.grid().q() == 1) {
            const Dist1D& C = a_.layout().cols;
            const index_t k = block_of_step(lower_, op_, C.num_blocks(), s);
            return {local_ptr(a_, sr.p0, C.to_local(C.block_start(k))), a_.ld()};
        }
        return {buf_.data() + (s % slots_) * slot_elems_, std::max<index_t>(sr.p1 - sr.p0, 1)};
    }

private:
    MatrixRef<T> a_;
    bool lower_;
    Op op_;
    index_t slots_;
    Buffer<T> buf_;
    std::vector<Request> reqs_;
    index_t slot_elems_;
};

/// Chunks of [0, len) for local work with MPI progress in between: up to 4, of at least 512.
inline index_t chunk_width(index_t len, bool progress) {
    constexpr index_t kMinChunk = 512, kMaxChunks = 4;
    const index_t chunks = progress ? std::clamp<index_t>(len / kMinChunk, 1, kMaxChunks) : 1;
    return std::max<index_t>((len + chunks - 1) / chunks, 1);
}

}  // namespace cala::detail

#pragma once
// Internal: the resident triangular solves of cala::potrs on device tiles (potrs_2d.cpp: op = N,
// potrs_2d_trans.cpp: op = T/C), the host loops of lib/cholesky/solve (trsm_2d*.cpp) with the
// same plan, buffers and messages (cholesky/solve/trsm_plan.hpp), so that the host potrs_cost is
// their traffic. Pieces travel by one PanelMover (NCCL from device memory, or MPI staged through
// host slots); the transposed solve's partial sums are reduced by MPI through host slots on either
// transport (the NCCL transport has broadcasts only).

#include <algorithm>
#include <initializer_list>
#include <vector>

#include "cholesky/solve/trsm_plan.hpp"
#include "core/workspace.hpp"
#include "resident/stage.hpp"
#include "resident/transport.hpp"

namespace cala::detail {

/// Device elements the resident solves `ops` (in turn, one plan) hold on process (row, col) beside
/// A and B: the moved copy of the plan (A or B in the loops' layout) and the largest loop's slots
/// (panels, and solved block rows or partial sums). Nothing on one rank (device trsm in place).
inline index_t res_solve_workspace(std::initializer_list<Op> ops, const TrsmPlan& plan, int row, int col) {
    const BlockCyclic& a = plan.a_layout;
    if (a.p() * a.q() == 1 || a.n() == 0 || plan.b_layout.n() == 0) return 0;
    index_t moved = 0, loops = 0;
    if (plan.move_a) moved = a.rows.local_size(row) * a.cols.local_size(col);
    if (plan.move_b) moved = plan.b_layout.rows.local_size(row) * plan.b_layout.cols.local_size(col);
    for (Op op : ops) {
        const auto buf = trsm_buffers(a, plan.b_layout, op, plan.lookahead, row, col);
        loops = std::max(loops, buf.panel_elems + buf.x_elems);
    }
    return moved + loops;
}

/// The same for potrs's two solves (Lower: N then C; Upper: C then N).
inline index_t res_potrs_workspace(Uplo /*either*/, const TrsmPlan& plan, int row, int col) {
    return res_solve_workspace({Op::N, Op::C}, plan, row, col);
}

/// Tickets on one PanelMover: its steps land in the order they were posted, so waiting for one
/// waits for the earlier ones too. Every rank posts the same sequence on each communicator.
template <class T>
class Tickets {
public:
    Tickets(device::Device& dev, const Grid2D& grid, bool nccl, int ordinal) : mover_(dev, grid, nccl, ordinal) {}
    /// -1 (nothing to wait for) when no piece travels.
    index_t post(std::vector<Piece<T>> pieces) {
        if (pieces.empty()) return -1;
        mover_.post(std::move(pieces));
        return posted_++;
    }
    void wait(index_t ticket) {
        for (; waited_ <= ticket; ++waited_) mover_.wait_front();
    }
    void poll() { mover_.poll(); }
    bool drained() const noexcept { return waited_ == posted_; }

private:
    PanelMover<T> mover_;
    index_t posted_ = 0, waited_ = 0;
};

/// The column panels of A along the process rows, on the device: step s's panel is this rank's
/// rows of A(:, k) in the stored triangle, packed by process column k%q into a ring of slots
/// (read from A itself when q == 1). As the host's Panels (cholesky/solve/panels.hpp).
template <class T>
class ResPanels {
public:
    ResPanels(const Side<T>& a, bool lower, Op op, const TrsmBuffers& buf, Tickets<T>& tickets, bool staged)
        : a_(a), lower_(lower), op_(op), slots_(std::max<index_t>(buf.slots_a, 1)),
          slot_elems_(buf.wmax * std::max<index_t>(a.m_loc(), 1)), tickets_(tickets), dslot_(*a.dev, buf.panel_elems),
          hslot_(staged ? buf.panel_elems : 0), ticket_(static_cast<std::size_t>(a.layout.rows.num_blocks()), -1) {}

    StepRows rows(index_t s) const {
        const Dist1D& R = a_.layout.rows;
        return step_rows(R, lower_, block_of_step(lower_, op_, R.num_blocks(), s), a_.grid->row());
    }
    /// Posts step s's panel (its slot's previous panel waited and read by the work issued so far).
    void post(index_t s) {
        const Dist1D& C = a_.layout.cols;
        const index_t k = block_of_step(lower_, op_, C.num_blocks(), s);
        const auto sr = rows(s);
        const index_t h = sr.p1 - sr.p0;
        if (a_.grid->q() == 1 || h == 0) return;
        const index_t off = (s % slots_) * slot_elems_;
        const int root = C.block_owner(k);
        if (a_.grid->col() == root)
            a_.dev->copy_from_peer(copy2d(dslot_.data() + off, h, at(sr.p0, C.to_local(C.block_start(k))), a_.ld, h,
                                          sr.w),
                                   *a_.dev);
        ticket_[static_cast<std::size_t>(s)] =
            tickets_.post({Piece<T>{dslot_.data() + off, hslot_.data() ? hslot_.data() + off : nullptr, h * sr.w, root,
                                    true}});
    }
    void wait(index_t s) { tickets_.wait(ticket_[static_cast<std::size_t>(s)]); }
    /// Step s's panel: its local row i (p0 <= i < p1) at first + (i - p0), leading dimension ld.
    std::pair<const T*, index_t> get(index_t s) const {
        const auto sr = rows(s);
        if (a_.grid->q() > 1) return {dslot_.data() + (s % slots_) * slot_elems_, std::max<index_t>(sr.p1 - sr.p0, 1)};
        const Dist1D& C = a_.layout.cols;
        return {at(sr.p0, C.to_local(C.block_start(block_of_step(lower_, op_, C.num_blocks(), s)))), a_.ld};
    }

private:
    T* at(index_t i, index_t j) const { return a_.data + i + j * a_.ld; }
    Side<T> a_;
    bool lower_;
    Op op_;
    index_t slots_, slot_elems_;
    Tickets<T>& tickets_;
    DeviceArray<T> dslot_;
    Buffer<T> hslot_;
    std::vector<index_t> ticket_;
};

/// The loops on aligned operands (a's square tiles lined up with b's rows, both on a.dev):
/// B := op(A)⁻¹·B, A's `lower` triangle stored in a (its diagonal taken as ones when `unit`),
/// lookahead 0 or 1.
template <class T>
void res_trsm_2d(bool lower, bool unit, int lookahead, const Side<T>& a, const Side<T>& b, Tickets<T>& tickets,
                 bool staged);
template <class T>
void res_trsm_2d_trans(bool lower, Op op, bool unit, int lookahead, const Side<T>& a, const Side<T>& b,
                       Tickets<T>& tickets, bool staged);

/// The solves B := op(A)⁻¹·B for each op of `ops` in turn on aligned operands (A's `lower`
/// triangle, unit diagonal or not), one mover: potrs's two (Lower: N then C; Upper: C then N)
/// and trsm's one.
template <class T>
void resident_solves_2d(bool lower, std::initializer_list<Op> ops, bool unit, int lookahead, const Side<T>& a,
                        const Side<T>& b, bool nccl, int ordinal);

/// Both solves of potrs (Lower: L then Lᴴ; Upper: Uᴴ then U) on aligned operands, one mover.
template <class T>
void resident_potrs_2d(Uplo uplo, int lookahead, const Side<T>& a, const Side<T>& b, bool nccl, int ordinal);

}  // namespace cala::detail

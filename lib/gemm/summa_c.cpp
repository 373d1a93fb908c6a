// Stationary-C SUMMA: C stays; the panels of A' and B' along k travel.
//
// Step over groups of k-blocks. For each k-block l of the group, the owner column of A''s block
// column l broadcasts its m_loc x w piece along its process row, the owner row of B''s block
// row l broadcasts its w x n_loc piece (packed transposed) along its process column; then every
// rank adds A'(:, group) · B'(group, :) to its C. Groups up to `lookahead` ahead are in flight.
// A rank whose own A' piece is contiguous in its memory broadcasts it from there and multiplies
// it from there; pieces it receives land side by side in a panel slot and go to one GEMM.
//
//   2 x 2 grid, k-blocks 0..3, A' k-block l on column l mod 2, B' k-block l on row l mod 2:
//   step l=0: (r,0) -> (r,1) A'(r-rows, 0);  (0,c) -> (1,c) B'(0, c-cols)
//   step l=1: (r,1) -> (r,0) A'(r-rows, 1);  (1,c) -> (0,c) B'(1, c-cols)
//
// With devices, C stays on them across the groups (device/accumulate.hpp).

#include <optional>

#include "comm/shared.hpp"
#include "core/workspace.hpp"
#include "device/accumulate.hpp"
#include "gemm/summa_common.hpp"
#include "matrix/local_ptr.hpp"

namespace cala::detail {

namespace {

// A run: the blocks of one group that process column `owner` holds, adjacent in its local
// memory; `pos` is where the run starts in this rank's slot (own run first, then cc+1, ...).
struct Run {
    int owner;
    index_t first, w, pos;
};

// B'(l, :) (w x n_loc) packed transposed into dst on its owner row, broadcast along the column.
template <class T>
Request bcast_b_block(const Grid2D& grid, const MatrixRef<T>& b, index_t l, index_t w, index_t n_loc, T* dst) {
    const Dist1D& kb = b.layout().rows;
    const int root = kb.block_owner(l);
    if (grid.row() == root)
        kernels::copy(Op::T, w, n_loc, local_ptr(b, kb.to_local(kb.block_start(l)), 0), b.ld(), dst, n_loc);
    return grid.col_comm().ibcast(dst, n_loc * w, root);
}

// The runs of group [b0, b1) in this rank's order, and each block's column in the slot.
void runs_of(const Dist1D& ka, std::pair<index_t, index_t> grp, int q, int cc, std::vector<Run>& runs,
             std::vector<index_t>& pos) {
    runs.clear();
    pos.assign(static_cast<std::size_t>(grp.second - grp.first), 0);
    index_t off = 0;
    for (int t = 0; t < q; ++t) {
        Run run{(cc + t) % q, -1, 0, off};
        for (index_t l = grp.first; l < grp.second; ++l)
            if (ka.block_owner(l) == run.owner) {
                if (run.first < 0) run.first = l;
                pos[static_cast<std::size_t>(l - grp.first)] = off + run.w;
                run.w += ka.block_size(l);
            }
        if (run.w > 0) runs.push_back(run), off += run.w;
    }
}

// Stationary C by owner runs (owner_runs in plan.hpp). Each process column broadcasts the blocks
// of a group it owns as one piece along its row, straight from the caller's array when its local
// A' is contiguous (then also multiplied from there: no copy of the own blocks), and op(B)'s rows
// are placed in the slot order: received (p > 1, transposed, one broadcast per block along the
// column, as in the plain path) or packed (p == 1). Two GEMMs per group: the own run, the others.
template <class T>
void summa_c_runs(const GemmPlan& plan, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta,
                  const MatrixRef<T>& c) {
    const Grid2D& grid = c.grid();
    const int p = grid.p(), q = grid.q(), cc = grid.col();
    const index_t m_loc = c.m_loc(), n_loc = c.n_loc();
    const Dist1D& ka = a.layout().cols;
    const Dist1D& kb = b.layout().rows;
    const auto groups = panel_groups(ka, plan.panel_width);
    const index_t ng = static_cast<index_t>(groups.size());
    if (ng == 0) {
        kernels::scale(m_loc, n_loc, beta, c.data(), c.ld());
        return;
    }
    const index_t wmax = max_group_width(ka, groups);
    const index_t slots = std::min<index_t>(plan.lookahead + 1, ng);
    const bool direct = a.ld() == m_loc;  // the own runs are contiguous in the caller's array
    Buffer<T> abuf(m_loc > 0 ? slots * m_loc * wmax : 0), bbuf(n_loc > 0 ? slots * n_loc * wmax : 0);
    InFlight fl;
    std::vector<Run> runs;
    std::vector<index_t> pos;
    auto own_piece = [&](const Run& run) { return local_ptr(a, 0, ka.to_local(ka.block_start(run.first))); };

    auto post = [&](index_t g) {
        const index_t s = g % slots;
        runs_of(ka, groups[g], q, cc, runs, pos);
        std::vector<Request> reqs;
        // Posted in owner order, the same on every rank of the row (collectives on one
        // communicator match by order; the slot order starts at each rank's own column).
        std::vector<Run> by_owner = runs;
        std::sort(by_owner.begin(), by_owner.end(), [](const Run& x, const Run& y) { return x.owner < y.owner; });
        for (const Run& run : by_owner) {
            if (m_loc == 0) break;
            T* dst = abuf.data() + s * m_loc * wmax + run.pos * m_loc;
            if (run.owner == cc) {
                if (direct) dst = own_piece(run);
                else kernels::copy(Op::N, m_loc, run.w, own_piece(run), a.ld(), dst, m_loc);
            }
            reqs.push_back(grid.row_comm().ibcast(dst, m_loc * run.w, run.owner));
        }
        for (index_t l = groups[g].first; n_loc > 0 && l < groups[g].second; ++l) {
            const index_t w = ka.block_size(l), at = pos[static_cast<std::size_t>(l - groups[g].first)];
            T* slot = bbuf.data() + s * n_loc * wmax;
            if (p == 1) {  // op(B)'s rows of block l at their place in the slot order (ld wmax)
                kernels::copy(Op::N, w, n_loc, local_ptr(b, kb.to_local(kb.block_start(l)), 0), b.ld(), slot + at, wmax);
                continue;
            }
            reqs.push_back(bcast_b_block(grid, b, l, w, n_loc, slot + at * n_loc));
        }
        fl.steps.push_back(std::move(reqs));
    };

    for (index_t g = 0; g < std::min<index_t>(plan.lookahead, ng); ++g) post(g);
    bool first = true;  // beta applies to the first GEMM only
    for (index_t g = 0; g < ng; ++g) {
        if (g + plan.lookahead < ng) post(g + plan.lookahead);
        wait_all(fl.steps.front());
        fl.steps.pop_front();
        if (m_loc == 0 || n_loc == 0) continue;
        runs_of(ka, groups[g], q, cc, runs, pos);
        const index_t s = g % slots;
        const auto [k0, k1] = group_span(ka, groups[g]);
        const T* bs = bbuf.data() + s * n_loc * wmax;
        const Op opb = p > 1 ? Op::T : Op::N;
        const index_t ldb = p > 1 ? n_loc : wmax;
        auto b_at = [&](index_t col) { return p > 1 ? bs + col * n_loc : bs + col; };
        index_t done = 0;
        if (direct && runs.front().owner == cc) {
            const Run& own = runs.front();
            gemm_with_progress(fl, Op::N, opb, m_loc, n_loc, own.w, alpha, own_piece(own), a.ld(), b_at(0), ldb,
                               first ? beta : T(1), c.data(), c.ld());
            first = false;
            done = own.w;
        }
        if (done < k1 - k0) {
            gemm_with_progress(fl, Op::N, opb, m_loc, n_loc, k1 - k0 - done, alpha,
                               abuf.data() + s * m_loc * wmax + done * m_loc, m_loc, b_at(done), ldb,
                               first ? beta : T(1), c.data(), c.ld());
            first = false;
        }
    }
    if (first) kernels::scale(m_loc, n_loc, beta, c.data(), c.ld());
}

// Stationary C on a p x 1 grid (whole_rows in plan.hpp). A' is wholly local (q == 1) and every
// rank needs all of op(B): each process row packs its whole local op(B) (k_loc x n_loc, a plain
// column copy) and broadcasts it along the column, all rows at once. Meanwhile this rank copies A''s columns into owner order (its own k-blocks first, then
// those of row r+1, r+2, ...: plain column copies, where the general path packed each block of
// op(B) transposed) and multiplies its own part; then each other row's part as it arrives. One
// GEMM per process row, as deep as that row's local op(B); p messages instead of one per block.
template <class T>
void summa_c_whole_rows(T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta, const MatrixRef<T>& c) {
    const Grid2D& grid = c.grid();
    const int p = grid.p(), r = grid.row();
    const index_t m_loc = c.m_loc(), n_loc = c.n_loc();
    const Dist1D& ka = a.layout().cols;
    const Dist1D& kb = b.layout().rows;
    // Process rows in this rank's order (r, r+1, ...), where each row's part starts in A''s copy.
    std::vector<int> order(static_cast<std::size_t>(p));
    std::vector<index_t> part(static_cast<std::size_t>(p), 0), bpos(static_cast<std::size_t>(p), 0);
    index_t off = 0, boff = 0;
    for (int t = 0; t < p; ++t) {
        const int o = (r + t) % p;
        order[static_cast<std::size_t>(t)] = o;
        part[static_cast<std::size_t>(o)] = off, off += kb.local_size(o);
        bpos[static_cast<std::size_t>(o)] = boff, boff += kb.local_size(o) * n_loc;
    }
    const index_t k = off;
    const index_t k_own = kb.local_size(r);
    // Every row's part of op(B), the own one packed too (k_own x n_loc, whatever the caller's ld:
    // the workspace is then the same for every caller, as the model says).
    Buffer<T> ap(m_loc > 0 ? m_loc * k : 0), bbuf(n_loc > 0 ? boff : 0);
    auto b_part = [&](int o) { return bbuf.data() + bpos[static_cast<std::size_t>(o)]; };
    if (n_loc > 0 && k_own > 0) kernels::copy(Op::N, k_own, n_loc, local_ptr(b, 0, 0), b.ld(), b_part(r), k_own);
    InFlight fl;
    std::vector<Request> req(static_cast<std::size_t>(p));
    for (int o = 0; o < p && n_loc > 0; ++o) {  // posted in row order: the same on every rank
        if (kb.local_size(o) == 0) continue;
        req[static_cast<std::size_t>(o)] = grid.col_comm().ibcast(b_part(o), kb.local_size(o) * n_loc, o);
    }
    // One step per other row, in the order their parts are multiplied. This row's own broadcast
    // is waited with the first of them: a root only polled between GEMM pieces delivers a large
    // broadcast slowly (MPICH sends it in segments), and the next row waits for it.
    for (int t = 1; t < p; ++t) {
        std::vector<Request> step;
        step.push_back(std::move(req[static_cast<std::size_t>(order[static_cast<std::size_t>(t)])]));
        if (t == 1) step.push_back(std::move(req[static_cast<std::size_t>(r)]));
        fl.steps.push_back(std::move(step));
    }
    // A''s columns in owner order: block l of op(B)'s rows, owned by row o, goes to column
    // part[o] + (its local row on o).
    if (m_loc > 0)
        for (index_t l = 0; l < kb.num_blocks(); ++l) {
            const index_t s0 = kb.block_start(l), w = kb.block_size(l);
            const int o = kb.block_owner(l);
            kernels::copy(Op::N, m_loc, w, local_ptr(a, 0, ka.to_local(s0)), a.ld(),
                          ap.data() + (part[static_cast<std::size_t>(o)] + kb.to_local(s0)) * m_loc, m_loc);
        }
    bool first = true;  // beta applies to the first GEMM only
    auto multiply = [&](int o, const T* bp, index_t ldb) {
        const index_t w = kb.local_size(o);
        if (m_loc == 0 || n_loc == 0 || w == 0) return;
        gemm_with_progress(fl, Op::N, Op::N, m_loc, n_loc, w, alpha, ap.data() + part[static_cast<std::size_t>(o)] * m_loc,
                           m_loc, bp, ldb, first ? beta : T(1), c.data(), c.ld());
        first = false;
    };
    for (int t = 0; t < p; ++t) {
        const int o = order[static_cast<std::size_t>(t)];
        if (t > 0) {
            wait_all(fl.steps.front());
            fl.steps.pop_front();
        }
        multiply(o, b_part(o), std::max<index_t>(kb.local_size(o), 1));
    }
    if (first) kernels::scale(m_loc, n_loc, beta, c.data(), c.ld());
}

// Stationary C on a p x 1 or 1 x q grid whose ranks share a node (node_shared in plan.hpp). The
// operand split along k (op(B) on p x 1, A' on 1 x q) is gathered into memory every rank of the
// communicator maps: each rank copies its k-blocks to their global places, once; after one
// barrier every rank runs one local GEMM as deep as k on all of it, the other operand read from
// the caller's array as it is (wholly local on a 1D grid, in global order). No message moves;
// the traffic counted is that of the broadcasts this replaces (comm/shared.hpp).
//
//   2 x 1, nb = 64, k = 256:  rank 0 copies op(B) rows 0..63, 128..191 into the shared k x n,
//   rank 1 rows 64..127, 192..255; barrier; each rank C_loc += A'_loc (m_loc x 256) · all.
// false (on every rank, nothing done) where the shared memory cannot be had: the caller then
// broadcasts.
template <class T>
bool summa_c_node_shared(T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta, const MatrixRef<T>& c) {
    const Grid2D& grid = c.grid();
    const bool rows = grid.q() == 1;  // p x 1: op(B)'s rows gathered; 1 x q: A''s columns
    const Comm& comm = rows ? grid.col_comm() : grid.row_comm();
    const Dist1D& kd = rows ? b.layout().rows : a.layout().cols;
    const index_t k = kd.n, m_loc = c.m_loc(), n_loc = c.n_loc();
    const index_t width = rows ? n_loc : m_loc;  // the gathered operand's other dimension, whole
    SharedRegion region(comm, k * width, sizeof(T));
    if (!region.ok()) return false;
    T* all = static_cast<T*>(region.data());
    for (index_t l = 0; width > 0 && l < kd.num_blocks(); ++l) {
        if (kd.block_owner(l) != comm.rank()) continue;
        const index_t s0 = kd.block_start(l), w = kd.block_size(l), at = kd.to_local(s0);
        if (rows) kernels::copy(Op::N, w, n_loc, local_ptr(b, at, 0), b.ld(), all + s0, k);
        else kernels::copy(Op::N, m_loc, w, local_ptr(a, 0, at), a.ld(), all + s0 * m_loc, m_loc);
    }
    std::vector<std::int64_t> words(static_cast<std::size_t>(comm.size()));
    for (int o = 0; o < comm.size(); ++o) words[static_cast<std::size_t>(o)] = kd.local_size(o) * width;
    region.publish(words, sizeof(T));
    if (m_loc > 0 && n_loc > 0) {
        if (rows) kernels::gemm(Op::N, Op::N, m_loc, n_loc, k, alpha, local_ptr(a, 0, 0), a.ld(), all, k, beta, c.data(), c.ld());
        else kernels::gemm(Op::N, Op::N, m_loc, n_loc, k, alpha, all, m_loc, local_ptr(b, 0, 0), b.ld(), beta, c.data(), c.ld());
    }
    region.release();
    return true;
}

}  // namespace

template <class T>
void summa_c(const GemmPlan& plan, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta,
             const MatrixRef<T>& c) {
    // plan.node_shared: the grid's ranks share a node (gemm.cpp).
    if (node_shared(plan, c.layout()) && summa_c_node_shared(alpha, a, b, beta, c)) return;
    if (owner_runs(plan, c.layout())) {
        summa_c_runs(plan, alpha, a, b, beta, c);
        return;
    }
    if (whole_rows(plan, c.layout())) {
        summa_c_whole_rows(alpha, a, b, beta, c);
        return;
    }
    const Grid2D& grid = c.grid();
    const int p = grid.p(), q = grid.q(), cc = grid.col();
    const index_t m_loc = c.m_loc(), n_loc = c.n_loc();
    const Dist1D& ka = a.layout().cols;  // k blocked alike in A' (over q) and B' (over p)
    const Dist1D& kb = b.layout().rows;
    const auto groups = panel_groups(ka, plan.panel_width);
    const index_t ng = static_cast<index_t>(groups.size());
    if (ng == 0) {
        kernels::scale(m_loc, n_loc, beta, c.data(), c.ld());
        return;
    }
    const index_t wmax = max_group_width(ka, groups);
    const index_t slots = std::min<index_t>(plan.lookahead + 1, ng);
    const bool bcast_a = q > 1 && m_loc > 0, bcast_b = p > 1 && n_loc > 0;
    Buffer<T> abuf(bcast_a ? slots * m_loc * wmax : 0), bbuf(bcast_b ? slots * n_loc * wmax : 0);
    InFlight fl;
    if (plan.on_devices) fl.devices = &plan.devices;
    // On devices (not a node's units), C stays on them from the first group to the last (one
    // group, as on a 1 x 1 grid: one device_gemm, which streams C under the products).
    std::optional<device::Accumulator<T>> acc;
    if (plan.on_devices && ng > 1 && !uses_node(plan.devices.devices) && m_loc > 0 && n_loc > 0)
        acc.emplace(m_loc, n_loc, c.data(), c.ld(), plan.devices);

    // An own A' block that is contiguous in the user's memory is sent and used from there, when
    // every group is one block: its GEMM is then as deep as the group's. A group of several
    // blocks goes to one GEMM as deep as the group, so own blocks are copied into the slot too
    // (a GEMM per own block is k = nb deep: at nb = 64 on 1 x 2 every GEMM was 64 deep).
    // (With devices, every group is one chunked call on a contiguous panel: own blocks are copied too.)
    const bool single_blocks = std::all_of(groups.begin(), groups.end(),
                                           [](const auto& grp) { return grp.second - grp.first == 1; });
    const bool own_in_place = a.ld() == m_loc && !plan.on_devices && single_blocks;
    auto in_place = [&](index_t l) { return q > 1 && own_in_place && ka.block_owner(l) == cc; };
    auto a_piece = [&](index_t l) { return local_ptr(a, 0, ka.to_local(ka.block_start(l))); };

    auto post = [&](index_t g) {
        const index_t s = g % slots;
        const auto [k0, k1] = group_span(ka, groups[g]);
        std::vector<Request> reqs;
        for (index_t l = groups[g].first; l < groups[g].second; ++l) {
            const index_t off = ka.block_start(l) - k0, w = ka.block_size(l);
            if (bcast_a) {
                const int root = ka.block_owner(l);
                T* dst = in_place(l) ? a_piece(l) : abuf.data() + s * m_loc * wmax + off * m_loc;
                if (cc == root && !in_place(l)) kernels::copy(Op::N, m_loc, w, a_piece(l), a.ld(), dst, m_loc);
                reqs.push_back(grid.row_comm().ibcast(dst, m_loc * w, root));
            }
            if (bcast_b) reqs.push_back(bcast_b_block(grid, b, l, w, n_loc, bbuf.data() + s * n_loc * wmax + off * n_loc));
        }
        fl.steps.push_back(std::move(reqs));
    };

    for (index_t g = 0; g < std::min<index_t>(plan.lookahead, ng); ++g) post(g);
    bool first = true;  // beta applies to the first GEMM only
    for (index_t g = 0; g < ng; ++g) {
        if (g + plan.lookahead < ng) post(g + plan.lookahead);
        wait_all(fl.steps.front());
        fl.steps.pop_front();
        const index_t s = g % slots;
        const auto [k0, k1] = group_span(ka, groups[g]);
        // Runs of consecutive blocks read from one place: the slot (or, with q == 1, the user's
        // memory) in one GEMM; an own in-place block (a group of one block) in its own GEMM.
        for (index_t l0 = groups[g].first; l0 < groups[g].second;) {
            index_t l1 = l0 + 1;
            if (!in_place(l0))
                while (l1 < groups[g].second && !in_place(l1)) ++l1;
            const index_t j0 = ka.block_start(l0), j1 = ka.block_start(l1 - 1) + ka.block_size(l1 - 1);
            const T* ap = q > 1 && !in_place(l0) ? abuf.data() + s * m_loc * wmax + (j0 - k0) * m_loc : a_piece(l0);
            const index_t lda = q > 1 && !in_place(l0) ? std::max<index_t>(m_loc, 1) : a.ld();
            const T* bp = p > 1 ? bbuf.data() + s * n_loc * wmax + (j0 - k0) * n_loc : local_ptr(b, kb.to_local(j0), 0);
            const index_t ldb = p > 1 ? std::max<index_t>(n_loc, 1) : b.ld();
            const Op opb = p > 1 ? Op::T : Op::N;
            if (acc) {
                fl.poll();
                acc->update(Op::N, opb, j1 - j0, alpha, ap, lda, bp, ldb, first ? beta : T(1));
                fl.poll();
            } else {
                gemm_with_progress(fl, Op::N, opb, m_loc, n_loc, j1 - j0, alpha, ap, lda, bp, ldb,
                                   first ? beta : T(1), c.data(), c.ld());
            }
            first = false;
            l0 = l1;
        }
    }
    if (acc) acc->finish();
}

#define CALA_INST(T)                                                                                   \
    template void summa_c<T>(const GemmPlan&, T, const MatrixRef<T>&, const MatrixRef<T>&, T,           \
                             const MatrixRef<T>&);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala::detail

#pragma once
// Internal: the state of cala::potrf's right-looking tile loop on one rank (engine.hpp) and its
// two halves:
//   panel.cpp   steps A-G: the diagonal factor, the panel solve, the row/column broadcasts
//               (and, 2.5D, the fiber reductions and the distribution of the solved panel);
//   engine.cpp  step H, the trailing update (OpenMP tasks per local column, or the node), and
//               the loop with its lookahead;
//   delayed.cpp the loop with delayed updates (CholGeom::delay > 1): the panels of a group
//               stacked, one update of the group's depth per column.

#include <optional>
#include <utility>
#include <vector>

#include "cholesky/engine.hpp"
#include "cholesky/team.hpp"
#include "comm/node_slots.hpp"
#include "core/workspace.hpp"

namespace cala::detail {

template <class T>
class CholEngine {
public:
    CholEngine(const EngineArgs& args, T* w, index_t ldw)
        : a_(args), g_(args.g), w_(w), ldw_(ldw), me_(args.layer), r_(args.row), c_(args.col),
          colsent_(static_cast<std::size_t>(std::max<index_t>(g_.mt(), 1))) {}

    index_t run();

private:
    // One step's update operands on this rank (what step G delivers).
    struct Panel {
        index_t l = -1;
        index_t s0 = 0, width = 0;        // my slice of tile column l (width 0: no update here)
        std::vector<index_t> rows;        // panel tiles of my process row, in order
        index_t nrows = 0;
        Buffer<T> lr;                     // nrows x width, ld nrows (MPI)
        T* lp = nullptr;                  // the panel: lr, or its node-shared slot (node_)
        std::vector<std::vector<index_t>> ctiles;  // per root row r': tiles it sends down my column
        std::vector<Buffer<T>> lc;        // per r' != my row: the received tiles, ld = their rows
        std::vector<Request> row_req, col_req;  // the row broadcast; the column ones I receive
        std::vector<Request> col_out;            // the column broadcasts I send
        bool col_posted = false;
        bool ready = false;               // panel() finished setting this step up
    };

    // The panels of one group of delayed updates (delayed.cpp), stacked side by side: ga holds
    // my process row's tiles i > l0 (ld ra, row = local row - base_a), gb my process column's
    // tiles j > l0 (ld rb, row = local column - base_b); panel l at column off[l - l0]. Panel l
    // fills the rows of tiles > l only, which are all an update of a column j > l reads.
    struct Group {
        index_t l0 = -1, count = 0;     // first panel, panels stacked so far
        std::vector<index_t> off;       // column offsets of the group's panels (size + 1)
        index_t ra = 0, rb = 0, base_a = 0, base_b = 0;
        Buffer<T> ga, gb;
    };

    T* tile(index_t i, index_t j) const {
        return w_ + g_.rows.to_local(g_.start(i)) + g_.cols.to_local(g_.start(j)) * ldw_;
    }
    index_t lrow(index_t i) const { return g_.rows.to_local(g_.start(i)); }

    void poll();
    static bool all_done(const std::vector<Request>& rs) {
        for (const auto& x : rs)
            if (!x.done()) return false;
        return true;
    }

    // Step G, second half: the tiles of column c whose rows are r' go down column c from r'.
    void post_columns(Panel& pn);

    // Steps A-G of step l: factor and solve the panel, post its broadcasts.
    void panel(index_t l);

    // Step E: my panel tiles times L(l, l)⁻ᴴ, through the inverse (formed once per panel) and
    // in-place trmm: in row blocks shared with free threads (Shared), or on a team (Aggregated).
    void solve_panel(index_t l, const std::vector<index_t>& mine, const T* lp, index_t ldl);

    // F: on the home layers' panel column ranks, the solved tiles (or slices) go to the layers
    // that update with them; the update layers assemble lr from their own tiles and what arrives.
    void distribute(index_t l, Panel& pn, const std::vector<index_t>& mine);

    // Columns [c0, c0 + nc) of the tiles (tl, l) into buf (ld rows), and back (the full width).
    void pack(const std::vector<index_t>& tl, index_t l, index_t c0, index_t nc, T* buf, index_t ld) const;
    void unpack(const std::vector<index_t>& tl, index_t l, const T* buf, index_t ld) const;

    // Step G complete on this rank: the row broadcast in, the column broadcasts posted and in.
    // A root does not wait for what it sends (its data is here; MPICH's shared-memory transport
    // moves a large message as the receiver polls): retire() does, before the buffers go.
    void wait_panel(Panel& pn);
    void retire(Panel& pn);
    bool row_root(const Panel& pn) const { return c_ == g_.co(pn.l); }

    // Rows of C per GEMM between two MPI polls for an n x k operand: about 2^24 multiply-adds
    // (1 ms at nb = 256), so that a large panel on its way in moves while this rank computes.
    static index_t poll_rows(index_t n, index_t k) {
        const index_t rows = (index_t{1} << 24) / std::max<index_t>(1, n * k);
        return std::max<index_t>(128, (rows + 15) / 16 * 16);
    }

    // H for one local column block j: tiles (i, j), i >= j, of my process row, as c -= a·bᴴ
    // (rows x width times width x bj); the first diag rows are the diagonal tile (herk).
    struct ColumnOp {
        const T* a = nullptr;
        const T* b = nullptr;
        index_t lda = 0, ldb = 0;
        T* c = nullptr;
        index_t rows = 0, bj = 0, diag = 0, k = 0;
    };
    // The first of my tiles (of the process row) at or below block row j, or -1.
    index_t first_row_tile(index_t j) const;
    // L(j, l) of panel pn: in lr if row j is mine, else in the chunk from process row ro(j).
    std::pair<const T*, index_t> panel_tile(const Panel& pn, index_t j) const;
    std::optional<ColumnOp> column_op(const Panel& pn, index_t j) const;

    void update_column(const std::optional<ColumnOp>& op, bool poll_ok = false);

    // The same in row blocks shared with free threads (the lookahead column, Shared).
    void update_column_shared(const std::optional<ColumnOp>& op);
    // The lookahead column's update by the master (Shared), or on a team (Single, Aggregated).
    void update_next(const std::optional<ColumnOp>& op);

    // c -= a·bᴴ in row chunks, driving MPI between them (the broadcasts in flight move only
    // inside MPI calls) when this thread may call MPI.
    void gemm_polled(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* b, index_t ldb, T* c,
                     bool poll_ok);

    // My local column blocks j in (lo, mt).
    std::vector<index_t> my_columns(index_t lo) const;

    // H through the node (EngineArgs::devices): the lower part of my columns `cols`, split by
    // node_update.hpp so that nothing above the diagonal is written; may_poll: this thread may
    // call MPI between the node's calls (false on the thread beside the panel).
    void update_on_node(const Panel& pn, const std::vector<index_t>& cols, bool may_poll);

    // BLAS threads of a panel kernel on `team`: all of the rank's with devices (the loop then
    // runs outside any parallel region, the update on the node between panels).
    // While the node runs an update beside the panel, the panel's share (panel_team_).
    int team_size(const Aggregate& team) const {
        return a_.devices == nullptr ? team.size() : panel_team_ > 0 ? panel_team_ : threads_;
    }

    void loop();

    // delayed.cpp: the loop; panel l copied into its group (the panel's buffers freed); the
    // update of column j with the group's first npan panels; my pending columns (one thread:
    // the last finished group's update, applied a share per step, as a staircase of wide GEMMs,
    // and before a column is needed).
    void loop_delayed();
    void stack_panel(Panel& pn);
    std::optional<ColumnOp> group_op(const Group& gr, index_t j, index_t npan) const;
    void drain_pending(index_t count, index_t upto);

    Group grp_[2];
    char grpsent_[2] = {0, 0};
    std::vector<index_t> pending_;  // columns, ascending, of group pend_slot_, from pend_at_ on
    std::size_t pend_at_ = 0;
    int pend_slot_ = 0;

    const EngineArgs& a_;
    const CholGeom& g_;
    T* w_;
    index_t ldw_;
    int me_, r_, c_;
    static constexpr index_t kChunk = 384;  // rows per block of the shared panel work
    int threads_ = 1, agg_ = 1;
    int panel_team_ = 0;  // devices: the panel's BLAS threads beside the node's update (0: all)
    bool shared_ = false;
    index_t fail_ = 0;
    Panel pan_[3];  // panels l-1 (its update tasks may still run), l and l+1 (the lookahead)
    // 1 x q grids on one node, one thread a rank: the row broadcasts through shared slots.
    std::optional<NodeSlots> node_;
    void open_node_panels();
    // Rows of C per GEMM between two polls; without messages in flight (node_), all of them.
    index_t poll_step(index_t n, index_t k) const { return node_ ? index_t{1} << 40 : poll_rows(n, k); }
    std::vector<char> colsent_;
    char pansent_[3] = {0, 0, 0};
};

}  // namespace cala::detail

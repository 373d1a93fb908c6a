#include "gemm/plan.hpp"

#include <algorithm>

#include "node/options.hpp"

namespace cala::detail {

namespace {

constexpr index_t kDefaultPanelWidth = 512;
constexpr index_t kDefaultDevicePanelWidth = 8192;  // local updates on devices: see plan_gemm_2d

bool same_blocking(const Dist1D& x, const Dist1D& y) { return x.n == y.n && x.nb == y.nb && x.ib == y.ib; }

// A distribution of n indices over P processes blocked like `like`, from process 0.
Dist1D blocked_like(index_t n, const Dist1D& like, int nprocs) {
    Dist1D d = like;
    d.n = n;
    d.nprocs = nprocs;
    d.src = 0;
    return d;
}

Operand stays(const BlockCyclic& l, Op kernel_op = Op::N) { return {false, Op::N, kernel_op, l}; }
Operand moves(Op redist_op, BlockCyclic l, Op kernel_op = Op::N) { return {true, redist_op, kernel_op, l}; }

// The k distribution op(A) keeps if it moves: A's own columns when op is N (only its rows
// change), else its rows' blocking re-spread over the q process columns. Likewise for B.
Dist1D k_of_a(Op op, const BlockCyclic& a, int q) { return op == Op::N ? a.cols : blocked_like(a.rows.n, a.rows, q); }
Dist1D k_of_b(Op op, const BlockCyclic& b, int p) { return op == Op::N ? b.rows : blocked_like(b.cols.n, b.cols, p); }

GemmPlan plan_c(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c) {
    const int p = c.p(), q = c.q();
    const index_t k = op_a == Op::N ? a.n() : a.m();
    const bool a_ok = op_a == Op::N && a.rows == c.rows;
    const bool b_ok = op_b == Op::N && b.cols == c.cols;
    GemmPlan plan;
    plan.variant = Variant::StationaryC;
    if (a_ok) {
        plan.a = stays(a);
        if (b_ok && same_blocking(b.rows, a.cols)) plan.b = stays(b);
        else plan.b = moves(op_b, {blocked_like(k, a.cols, p), c.cols});
    } else if (b_ok) {
        plan.b = stays(b);
        plan.a = moves(op_a, {c.rows, blocked_like(k, b.rows, q)});
    } else {
        const Dist1D kd = k_of_a(op_a, a, q);
        plan.a = moves(op_a, {c.rows, kd});
        plan.b = moves(op_b, {blocked_like(k, kd, p), c.cols});
    }
    return plan;
}

GemmPlan plan_a(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c) {
    const int p = c.p(), q = c.q();
    const index_t n = c.n();
    const Op kop = op_b == Op::N ? Op::T : op_b;           // op(B) = kop(Bt)
    const Op bt_redist = op_b == Op::N ? Op::T : Op::N;    // Bt from the stored B
    // Bt can be the user's B when B is stored n x k with rows blocked like C's columns.
    const bool bt_rows_ok = op_b != Op::N && same_blocking(b.rows, c.cols);
    GemmPlan plan;
    plan.variant = Variant::StationaryA;
    if (op_a == Op::N && a.rows == c.rows) {
        plan.a = stays(a);
    } else {
        // Keep the k distribution B already has if it can stay, else A's own.
        const Dist1D kd = bt_rows_ok ? b.cols : k_of_a(op_a, a, q);
        plan.a = moves(op_a, {c.rows, kd});
    }
    const Dist1D& ka = plan.a.layout.cols;
    if (bt_rows_ok && b.cols == ka) plan.b = stays(b, kop);
    else plan.b = moves(bt_redist, {blocked_like(n, c.cols, p), ka}, kop);
    return plan;
}

GemmPlan plan_b(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c) {
    const int p = c.p(), q = c.q();
    const index_t m = c.m();
    const Op kop = op_a == Op::N ? Op::T : op_a;           // op(A) = kop(At)
    const Op at_redist = op_a == Op::N ? Op::T : Op::N;
    const bool at_cols_ok = op_a != Op::N && same_blocking(a.cols, c.rows);
    GemmPlan plan;
    plan.variant = Variant::StationaryB;
    if (op_b == Op::N && b.cols == c.cols) {
        plan.b = stays(b);
    } else {
        const Dist1D kd = at_cols_ok ? a.rows : k_of_b(op_b, b, p);
        plan.b = moves(op_b, {kd, c.cols});
    }
    const Dist1D& kb = plan.b.layout.rows;
    if (at_cols_ok && a.rows == kb) plan.a = stays(a, kop);
    else plan.a = moves(at_redist, {kb, blocked_like(m, c.rows, q)}, kop);
    return plan;
}

}  // namespace

GemmPlan plan_gemm_2d(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
                      Variant v, const GemmOptions& opts) {
    GemmPlan plan = v == Variant::StationaryA   ? plan_a(op_a, op_b, a, b, c)
                    : v == Variant::StationaryB ? plan_b(op_a, op_b, a, b, c)
                                                : plan_c(op_a, op_b, a, b, c);
    plan.panel_width = opts.panel_width > 0 ? opts.panel_width : kDefaultPanelWidth;
    plan.lookahead = opts.lookahead;
    plan.whole_rows_max = opts.whole_rows_max_elements;
    plan.node_shared = opts.node_shared_memory;
    plan.node_shared_min_reuse = opts.node_shared_min_reuse;
    plan.on_devices = gemm_devices(opts, plan.devices);
    // Alone on its grid, a rank has no panels to pipeline: the chunked engine gets all of k at
    // once and keeps its C blocks resident across it (seed Algorithm 3).
    if (plan.on_devices && c.p() == 1 && c.q() == 1) plan.panel_width = std::max<index_t>(1, op_a == Op::N ? a.n() : a.m());
    // On a larger grid each group is one chunked call that streams the local C in and out: w
    // multiply-adds per element of C moved, w / 8 flops per byte in double. At 512 a GPU behind a
    // 45 GB/s link is capped near 3 TF/s; groups of 8192 raise the cap to about 46.
    else if (plan.on_devices && opts.panel_width <= 0) plan.panel_width = kDefaultDevicePanelWidth;
    return plan;
}

bool gemm_devices(const GemmOptions& opts, DeviceGemmOptions& out) {
    return node::detail::local_devices(opts.devices, opts.max_device_bytes, opts.unit_speeds, opts.node_strategy, out);
}

std::vector<std::pair<index_t, index_t>> panel_groups(const Dist1D& d, index_t width) {
    std::vector<std::pair<index_t, index_t>> out;
    const index_t nb = d.num_blocks();
    for (index_t b = 0; b < nb;) {
        index_t e = b, w = 0;
        while (e < nb && w < width) w += d.block_size(e++);
        out.emplace_back(b, e);
        b = e;
    }
    return out;
}

index_t max_group_width(const Dist1D& d, const std::vector<std::pair<index_t, index_t>>& groups) {
    index_t w = 0;
    for (auto [b0, b1] : groups) w = std::max(w, d.block_start(b1 - 1) + d.block_size(b1 - 1) - d.block_start(b0));
    return w;
}

index_t progress_chunks(index_t k, bool pending) {
    constexpr index_t kMinChunk = 256, kMaxChunks = 4;
    return pending ? std::clamp<index_t>(k / kMinChunk, 1, kMaxChunks) : 1;
}

double packed_a_elements(index_t m, index_t n, index_t k) {
    constexpr index_t kPanelN = 4096;
    if (m <= 0 || n <= 0 || k <= 0) return 0;
    return double(m) * double(k) * double((n + kPanelN - 1) / kPanelN);
}

}  // namespace cala::detail

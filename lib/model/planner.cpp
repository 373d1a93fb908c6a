// The planner: every 2D and 2.5D/3D decomposition of P ranks, every variant, scored by the
// predicted time alpha·messages + beta·bytes + gamma·flops of its busiest rank, under the
// per-rank memory limit. Deterministic in its arguments: every rank decides alike, no messages.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <sstream>

#include "core/check.hpp"
#include "model/check.hpp"
#include "model/costs.hpp"
#include "model/planner.hpp"

namespace cala {

MachineModel MachineModel::from_env() {
    MachineModel m;
    if (const char* s = std::getenv("CALA_MODEL_LATENCY_US")) m.latency_s = std::atof(s) * 1e-6;
    if (const char* s = std::getenv("CALA_MODEL_BANDWIDTH_GBS")) m.seconds_per_byte = 1.0 / (std::atof(s) * 1e9);
    if (const char* s = std::getenv("CALA_MODEL_GFLOPS")) m.seconds_per_flop = 1.0 / (std::atof(s) * 1e9);
    if (const char* s = std::getenv("CALA_MODEL_STREAM_GBS"); s != nullptr && std::atof(s) > 0)
        m.seconds_per_stream_byte = 1.0 / (std::atof(s) * 1e9);
    return m;
}

std::string GemmPlanInfo::describe() const {
    std::ostringstream os;
    os << to_string(variant) << (user_grid ? " 2D user grid " : " ") << grid.p << "x" << grid.q << "x" << grid.c
       << " nb=" << block_size << " words/rank(max of sent, received)=" << static_cast<std::int64_t>(words)
       << " msgs/rank=" << static_cast<std::int64_t>(msgs) << " memory/rank=" << memory_bytes
       << " predicted=" << predicted_time_s << "s";
    if (idle_ranks > 0) os << " (" << idle_ranks << " ranks idle: P does not factor into this grid)";
    return os.str();
}

namespace detail {

std::int64_t memory_limit(const GemmOptions& o) {
    if (o.memory_limit_bytes > 0) return o.memory_limit_bytes;
    if (const char* s = std::getenv("CALA_MAX_MEMORY_MB")) return static_cast<std::int64_t>(std::atof(s) * 1048576.0);
    return 0;
}

index_t auto_block(index_t m, index_t n, index_t k, Shape3 g) {
    const double share = std::min({double(m) / g.p, double(n) / g.q, double(k) / (g.c * std::max(g.p, g.q))});
    index_t nb = 8;
    while (nb * 2 <= std::min<double>(256, share)) nb *= 2;
    return nb;
}

namespace {

// Up to this many ranks, and while the caller's layouts have at most this many block rows and
// columns in all (the exact conversion volumes cost time in the number of blocks: about 15 ms
// per call at 2 x 1000 blocks, 1 s at nb = 1 on 65536 rows), regridded candidates are scored by
// the exact per-rank model; otherwise by the closed form.
constexpr int kExactRanks = 4;
constexpr index_t kExactBlocks = 1024;

index_t blocks(const BlockCyclic& l) { return l.rows.num_blocks() + l.cols.num_blocks(); }

index_t max_local(index_t n, index_t nb, int procs) { return Dist1D(n, nb, procs).local_size(0); }

// Per-rank estimate (busiest rank, memory an upper bound) of a 3D candidate, from closed forms.
GemmPlanInfo estimate_3d(index_t m, index_t n, index_t k, Variant v, Shape3 g, index_t nb, index_t user_local,
                         std::size_t elem, const MachineModel& mm, int nranks, bool cplx, const GemmOptions& o) {
    const int p = g.p, q = g.q, c = g.c;
    const double P = double(p) * q * c, M = double(m), N = double(n), K = double(k);
    // Panel slots: lookahead + 1 of them, each at most a panel width plus one block wide.
    const index_t W = (o.lookahead + 1) * ((o.panel_width > 0 ? o.panel_width : 512) + nb) / 2;
    const index_t ml = max_local(m, nb, p), nl = max_local(n, nb, q);
    // Words a rank receives: its share of each operand moved into place (replicated ones: its
    // whole layer share, from the conversion on layer 0 or the fiber broadcast elsewhere), the
    // pieces its layer's loop broadcasts to it, the reduced blocks it owns, and its share of C
    // returned to the user's layout.
    const double Pu = nranks, ML = double(ml), NL = double(nl);
    double words = M * N / Pu, mem = 0;  // received
    double sent = M * N / P;              // the return of C, from the layers
    double msgs = 6;  // conversions: a handful of peers each, per operand
    double stream = 0;  // elements of op(A) the layer's local GEMMs pack (packed_a_elements)
    const index_t pw = o.panel_width > 0 ? o.panel_width : 512;
    const auto per_group = [&](index_t len, auto&& packed) {  // the loop's groups over len indices
        const index_t w = std::min(pw, std::max<index_t>(len, 1));
        return double((len + w - 1) / w) * packed(w);
    };
    const auto blocks = [&](index_t x) { return double((x + nb - 1) / nb); };
    switch (v) {
        case Variant::StationaryA: {
            const index_t kl = max_local(k, nb, q), nh = max_local(n, nb, c * p), cl = max_local(n, nb, c * q);
            // Bt pieces of the layer's n/c columns arrive from p-1 of p rows; C blocks it owns come reduced.
            const double n_layer = double(max_local(n, nb, c));
            words += M * K / (p * q) + K * N / P + (p > 1) * double(kl) * n_layer * (p - 1) / p + (q > 1) * ML * cl;
            sent += (M * K + K * N) / Pu + (c > 1) * ML * kl + (p > 1) * double(kl) * n_layer / p +
                    (q > 1) * ML * n_layer * (q - 1) / q;
            msgs += ((p > 1) + (q > 1)) * blocks(n) / c + (c > 1);
            stream = per_group(index_t(n_layer), [&](index_t w) { return packed_a_elements(ml, w, kl); }) +
                     2.0 * (q > 1) * ML * cl;  // the reduced blocks it owns: MPI's sum and the add
            const double A = double(ml) * kl, B = double(nh) * kl, C = double(ml) * cl, S = 2.0 * (kl + ml) * W;
            mem = std::max({A + 2 * (A + user_local), A + B + 2 * (B + user_local), A + B + C + S, C + 2 * (C + user_local)});
            break;
        }
        case Variant::StationaryB: {
            const index_t kl = max_local(k, nb, p), mh = max_local(m, nb, c * q), rl = max_local(m, nb, c * p);
            const double m_layer = double(max_local(m, nb, c));
            words += K * N / (p * q) + M * K / P + (q > 1) * double(kl) * m_layer * (q - 1) / q + (p > 1) * NL * rl;
            sent += (M * K + K * N) / Pu + (c > 1) * double(kl) * NL + (q > 1) * double(kl) * m_layer / q +
                    (p > 1) * NL * m_layer * (p - 1) / p;
            msgs += ((p > 1) + (q > 1)) * blocks(m) / c + (c > 1);
            stream = per_group(index_t(m_layer), [&](index_t w) {
                return p > 1 ? packed_a_elements(nl, w, kl) : packed_a_elements(w, nl, kl);
            }) + 2.0 * (p > 1) * NL * rl;
            const double B = double(kl) * nl, A = double(kl) * mh, C = double(rl) * nl, S = 2.0 * (kl + nl) * W;
            mem = std::max({B + 2 * (B + user_local), A + B + 2 * (A + user_local), A + B + C + S, C + 2 * (C + user_local)});
            break;
        }
        default: {
            const index_t ka = max_local(k, nb, c * q), kb = max_local(k, nb, c * p), rl = max_local(n, nb, c * q);
            const double k_layer = double(max_local(k, nb, c));  // the layer's share of k
            words += (M * K + K * N) / P + (q > 1) * ML * k_layer * (q - 1) / q + (p > 1) * NL * k_layer * (p - 1) / p +
                     (c > 1) * ML * NL / c;
            sent += (M * K + K * N) / Pu + (q > 1) * ML * k_layer / q + (p > 1) * NL * k_layer / p +
                    (c > 1) * ML * NL * (c - 1) / c;
            msgs += ((p > 1) + (q > 1)) * blocks(k) / c + (c > 1) * blocks(n) / q;
            stream = packed_a_elements(ml, nl, index_t(k_layer)) + 2.0 * (c > 1) * ML * NL / c;
            const double A = double(ml) * ka, B = double(kb) * nl, C = double(ml) * nl, R = double(ml) * rl,
                         S = 2.0 * (ml + nl) * W;
            mem = std::max({A + 2 * (A + user_local), A + B + 2 * (B + user_local), A + B + C + S, C + R,
                            R + 2 * (R + user_local)});
            break;
        }
    }
    GemmPlanInfo info;
    info.variant = v;
    info.grid = {p, q, c};
    info.block_size = nb;
    info.idle_ranks = nranks - static_cast<int>(P);
    info.words = std::max(words, sent);
    info.msgs = msgs;
    info.flops = (cplx ? 8.0 : 2.0) * M * N * K / P;
    info.memory_bytes = static_cast<std::int64_t>(mem * double(elem));
    // The conversions: each rank's share of A and B packed and unpacked once, and of C on return.
    info.stream_words = stream + 2.0 * (M * K + K * N + M * N) / Pu;
    info.predicted_time_s = mm.seconds(info.msgs, info.words, info.flops, info.stream_words, elem);
    return info;
}

// Every p x q x c with p·q·c in [P/2, P]; c = 1 included (a regridding in 2D).
std::vector<Shape3> shapes(int nranks) {
    std::vector<Shape3> out;
    for (int c = 1; c <= nranks; ++c)
        for (int p = 1; p * c <= nranks; ++p)
            for (int q = 1; p * q * c <= nranks; ++q)
                if (2 * p * q * c >= nranks) out.push_back({p, q, c});
    return out;
}

[[noreturn]] void nothing_fits(std::int64_t needed, std::int64_t limit) {
    throw Error(cat("gemm: no plan fits the memory limit of ", limit / 1048576.0, " MB per rank; the cheapest plan needs ",
                    needed / 1048576.0, " MB per rank (raise GemmOptions::memory_limit_bytes or CALA_MAX_MEMORY_MB)"));
}

// Block sizes a layout of shape g is scored with: the planner's (auto_block) and the caller's
// square block when it differs (a regridding that keeps the caller's blocks), unless forced.
std::vector<index_t> block_sizes(index_t m, index_t n, index_t k, Shape3 g, const GemmOptions& o, index_t user_nb) {
    if (o.block_size > 0) return {o.block_size};
    const index_t nb = auto_block(m, n, k, g);
    if (user_nb > 0 && user_nb != nb) return {nb, user_nb};
    return {nb};
}

GemmPlanInfo best_3d(index_t m, index_t n, index_t k, int nranks, const GemmOptions& o, const MachineModel& mm,
                     index_t user_local, index_t user_nb, std::size_t elem, bool cplx, std::int64_t limit,
                     GemmPlanInfo* cheapest, std::vector<GemmCandidate>* scored,
                     const std::function<void(GemmPlanInfo&)>& exact) {
    GemmPlanInfo best;
    best.predicted_time_s = std::numeric_limits<double>::infinity();
    const std::vector<Shape3> forced{{o.grid3d.p, o.grid3d.q, o.grid3d.c}};
    for (const Shape3& g : o.grid3d.c > 0 ? forced : shapes(nranks))
        for (const index_t nb : block_sizes(m, n, k, g, o, user_nb))
            for (Variant v : {Variant::StationaryC, Variant::StationaryA, Variant::StationaryB}) {
                if (o.variant != Variant::Auto && v != o.variant) continue;
                GemmPlanInfo e = estimate_3d(m, n, k, v, g, nb, user_local, elem, mm, nranks, cplx, o);
                if (exact) exact(e);
                const bool fits = limit <= 0 || e.memory_bytes <= limit;
                if (scored) scored->push_back({e, fits, {}});
                if (cheapest && e.memory_bytes < cheapest->memory_bytes) *cheapest = e;
                if (fits && e.predicted_time_s < best.predicted_time_s) best = e;
            }
    return best;
}

}  // namespace

GemmDecision decide_gemm(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
                         GridOrder order, const GemmOptions& o, std::size_t elem, bool cplx, bool require_3d,
                         const MachineModel& mm, std::vector<GemmCandidate>* scored) {
    const index_t m = c.m(), n = c.n(), k = op_a == Op::N ? a.n() : a.m();
    const int nranks = c.p() * c.q();
    const std::int64_t limit = memory_limit(o);
    const bool forced_3d = o.grid3d.c > 0 || require_3d;
    // The user's own grid, exactly: the busiest rank's words, messages and workspace.
    GemmPlanInfo user;
    user.predicted_time_s = std::numeric_limits<double>::infinity();
    GemmPlanInfo cheapest;
    cheapest.memory_bytes = std::numeric_limits<std::int64_t>::max();
    if (!forced_3d) {
        for (Variant v : {Variant::StationaryC, Variant::StationaryA, Variant::StationaryB}) {
            if (o.variant != Variant::Auto && v != o.variant) continue;
            GemmPlanInfo e;
            e.variant = v, e.user_grid = true, e.grid = {c.p(), c.q(), 1}, e.block_size = c.cols.nb;
            // Every rank on small grids; on large ones the corners and the middle (the model is
            // exact per rank; the planner only needs the busiest one, found among these).
            std::vector<std::pair<int, int>> probe;
            if (nranks <= 64) {
                for (int r = 0; r < c.p(); ++r)
                    for (int cc = 0; cc < c.q(); ++cc) probe.emplace_back(r, cc);
            } else {
                probe = {{0, 0}, {c.p() - 1, c.q() - 1}, {c.p() / 2, c.q() / 2}, {0, c.q() - 1}, {c.p() - 1, 0}};
            }
            for (auto [r, cc] : probe) {
                    const Cost x = gemm_cost(op_a, op_b, a, b, c, v, o, r, cc, elem, cplx);
                    e.words = std::max({e.words, double(x.words_recv), double(x.words - x.words_recv)});
                    e.msgs = std::max(e.msgs, double(x.msgs));
                    e.flops = std::max(e.flops, x.flops);
                    e.stream_words = std::max(e.stream_words, x.stream_words);
                    e.memory_bytes = std::max(e.memory_bytes, x.extra_bytes);
                }
            e.predicted_time_s = mm.seconds(e.msgs, e.words, e.flops, e.stream_words, elem);
            const bool fits = limit <= 0 || e.memory_bytes <= limit;
            if (scored) scored->push_back({e, fits, {}});
            if (e.memory_bytes < cheapest.memory_bytes) cheapest = e;
            if (fits && e.predicted_time_s < user.predicted_time_s) user = e;
        }
    }
    GemmPlanInfo three;
    three.predicted_time_s = std::numeric_limits<double>::infinity();
    if (forced_3d || o.variant == Variant::Auto) {  // (require_3d with a forced variant lands here too)
        const index_t user_local = std::max(a.rows.local_size(0) * a.cols.local_size(0),
                                            std::max(b.rows.local_size(0) * b.cols.local_size(0),
                                                     c.rows.local_size(0) * c.cols.local_size(0)));
        const index_t user_nb = c.rows.nb == c.cols.nb ? c.cols.nb : 0;
        // On few ranks and small layouts every candidate is scored by the exact model (its
        // conversions' true volume: a conversion that moves little, e.g. to 1 x 1 x 2 from a 1 x 2
        // grid whose columns already split k, is not charged as if all of A and B moved).
        std::function<void(GemmPlanInfo&)> exact;
        if (nranks <= kExactRanks && blocks(a) + blocks(b) + blocks(c) <= kExactBlocks)
            exact = [&](GemmPlanInfo& e) {
                const Shape3 g{e.grid.p, e.grid.q, e.grid.c};
                const Plan3D plan = plan_gemm_3d(op_a, op_b, m, n, k, e.variant, g, e.block_size, o);
                Cost worst;
                double words = 0;
                for (int r = 0; r < nranks; ++r) {
                    const Cost x = gemm3d_cost(plan, a, b, c, order, r, elem, cplx);
                    words = std::max({words, double(x.words_recv), double(x.words - x.words_recv)});
                    worst.msgs = std::max(worst.msgs, x.msgs);
                    worst.flops = std::max(worst.flops, x.flops);
                    worst.stream_words = std::max(worst.stream_words, x.stream_words);
                    worst.extra_bytes = std::max(worst.extra_bytes, x.extra_bytes);
                }
                e.words = words, e.msgs = double(worst.msgs), e.flops = worst.flops, e.memory_bytes = worst.extra_bytes;
                e.stream_words = worst.stream_words;
                e.predicted_time_s = mm.seconds(e.msgs, e.words, e.flops, e.stream_words, elem);
            };
        three = best_3d(m, n, k, nranks, o, mm, user_local, user_nb, elem, cplx, limit, &cheapest, scored, exact);
    }
    const GemmPlanInfo& pick = three.predicted_time_s < user.predicted_time_s ? three : user;
    if (!std::isfinite(pick.predicted_time_s)) nothing_fits(cheapest.memory_bytes, limit);
    return {!pick.user_grid, pick.variant, {pick.grid.p, pick.grid.q, pick.grid.c}, pick.block_size, pick};
}

}  // namespace detail

GemmPlanInfo plan_gemm(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
                       GridOrder order, const GemmOptions& opts, std::size_t elem_size, bool is_complex) {
    detail::check_gemm_layouts("plan_gemm", op_a, op_b, a, b, c, opts);
    detail::check_at_least("plan_gemm", "elem_size", static_cast<std::int64_t>(elem_size), 1);
    const bool plain_2d = opts.variant != Variant::Auto && opts.grid3d.c == 0 && detail::memory_limit(opts) == 0;
    GemmOptions o = opts;
    if (plain_2d) o.memory_limit_bytes = 0;
    return detail::decide_gemm(op_a, op_b, a, b, c, order, o, elem_size, is_complex).info;
}

GemmPlanInfo plan_gemm(index_t m, index_t n, index_t k, Op op_a, Op op_b, int nranks, const GemmOptions& opts,
                       const MachineModel& machine, index_t user_block, std::size_t elem_size) {
    for (auto [name, v] : {std::pair{"m", m}, std::pair{"n", n}, std::pair{"k", k}})
        detail::check_at_least("plan_gemm", name, v, 0);
    detail::check_at_least("plan_gemm", "nranks", nranks, 1);
    detail::check_at_least("plan_gemm", "user_block", user_block, 1);
    detail::check_at_least("plan_gemm", "elem_size", static_cast<std::int64_t>(elem_size), 1);
    detail::throw_if(detail::gemm_options_error("plan_gemm", opts, nranks));
    const auto [p, q] = Grid2D::squarest(nranks);
    const BlockCyclic a = op_a == Op::N ? BlockCyclic(m, k, user_block, user_block, p, q)
                                        : BlockCyclic(k, m, user_block, user_block, p, q);
    const BlockCyclic b = op_b == Op::N ? BlockCyclic(k, n, user_block, user_block, p, q)
                                        : BlockCyclic(n, k, user_block, user_block, p, q);
    const BlockCyclic c(m, n, user_block, user_block, p, q);
    return detail::decide_gemm(op_a, op_b, a, b, c, GridOrder::RowMajor, opts, elem_size, false, false, machine).info;
}

}  // namespace cala

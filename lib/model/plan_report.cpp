// Why cala::gemm computes where it does: the planner's candidates, each with its predicted
// seconds, and the choice (CALA_VERBOSE=1 in the shim, `cala-bench gemm --plan`).
//
//   candidate kinds, for a caller's p x q grid with nb x nb blocks:
//   caller's layout        2D SUMMA on the caller's arrays (variants C, A, B; exact per-rank model)
//   caller's grid, nb=X    the same p x q, operands redistributed to X x X blocks and back
//   1D rows | 1D columns   P x 1 | 1 x P: tall-skinny, wide
//   1D over layers         1 x 1 x c: k split over the ranks (large k), or one operand replicated
//   2D                     another p' x q' (c = 1)
//   2.5D/3D                p' x q' x c, c > 1

#include <algorithm>
#include <set>
#include <sstream>
#include <tuple>

#include "core/check.hpp"
#include "model/check.hpp"
#include "model/planner.hpp"

namespace cala {

namespace {

std::string kind_of(const GemmPlanInfo& e, const BlockCyclic& c) {
    using detail::cat;
    const Shape3D g = e.grid;
    if (e.user_grid) return "caller's layout";
    if (g.c == 1 && g.p == c.p() && g.q == c.q()) return cat("caller's grid, nb=", e.block_size);
    if (g.c == 1 && g.p * g.q > 1 && (g.p == 1 || g.q == 1)) return g.q == 1 ? "1D rows" : "1D columns";
    if (g.c == 1) return "2D";
    if (g.p * g.q == 1) return "1D over layers";
    return "2.5D/3D";
}

bool same_plan(const GemmPlanInfo& x, const GemmPlanInfo& y) {
    return x.user_grid == y.user_grid && x.variant == y.variant && x.grid.p == y.grid.p && x.grid.q == y.grid.q &&
           x.grid.c == y.grid.c && x.block_size == y.block_size;
}

std::string seconds(double s) {
    std::ostringstream os;
    os.precision(4);
    os << s << " s";
    return os.str();
}

std::string line(const GemmCandidate& x, bool chosen, const MachineModel& mm, std::size_t elem) {
    const GemmPlanInfo& e = x.info;
    std::ostringstream os;
    os << (chosen ? "  * " : "    ") << x.kind << ": " << to_string(e.variant) << " " << e.grid.p << "x" << e.grid.q
       << "x" << e.grid.c << " nb=" << e.block_size << " predicted " << seconds(e.predicted_time_s) << " = latency "
       << seconds(mm.latency_s * e.msgs) << " + bandwidth " << seconds(mm.seconds_per_byte * double(elem) * e.words)
       << " + flops " << seconds(mm.seconds_per_flop * e.flops);
    if (mm.seconds_per_stream_byte > 0) os << " + packing " << seconds(mm.seconds_per_stream_byte * double(elem) * e.stream_words);
    os << " (msgs/rank " << static_cast<std::int64_t>(e.msgs)
       << ", words/rank " << static_cast<std::int64_t>(e.words) << ", memory/rank " << e.memory_bytes << " B)";
    if (e.idle_ranks > 0) os << " " << e.idle_ranks << " ranks idle";
    if (!x.fits) os << " [over the memory limit]";
    return os.str();
}

std::string reason(const GemmPlanReport& r, const GemmOptions& o) {
    using detail::cat;
    if (o.grid3d.c > 0) return "chosen: GemmOptions::grid3d forces this grid";
    if (o.variant != Variant::Auto && detail::memory_limit(o) == 0)
        return "chosen: GemmOptions::variant forces 2D SUMMA on the caller's layout";
    const auto fit = std::count_if(r.candidates.begin(), r.candidates.end(), [](const auto& x) { return x.fits; });
    std::string s = cat("chosen: the lowest predicted time of the ", fit, " candidates that fit the memory limit (of ",
                        r.candidates.size(), " scored)");
    const auto user = std::find_if(r.candidates.begin(), r.candidates.end(),
                                   [](const auto& x) { return x.fits && x.info.user_grid; });
    if (r.chosen.user_grid) {
        const auto next = std::find_if(r.candidates.begin(), r.candidates.end(),
                                       [](const auto& x) { return x.fits && !x.info.user_grid; });
        if (next != r.candidates.end())
            s += cat("; computing in the caller's layout moves nothing extra, the best other layout (", next->kind,
                     ") would take ", seconds(next->info.predicted_time_s));
    } else if (user != r.candidates.end()) {
        s += cat("; the caller's layout would take ", seconds(user->info.predicted_time_s), ", ",
                 user->info.predicted_time_s / r.chosen.predicted_time_s,
                 " times the choice, redistributions included");
    }
    return s;
}

}  // namespace

double predicted_seconds(const Cost& x, const MachineModel& mm, std::size_t elem) {
    const double words = double(std::max(x.words_recv, x.words - x.words_recv));
    return mm.seconds(double(x.msgs), words, x.flops, x.stream_words, elem);
}

GemmPlanReport explain_gemm_plan(Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b, const BlockCyclic& c,
                                 GridOrder order, const GemmOptions& opts, std::size_t elem_size, bool is_complex) {
    detail::check_gemm_layouts("explain_gemm_plan", op_a, op_b, a, b, c, opts);
    detail::check_at_least("explain_gemm_plan", "elem_size", static_cast<std::int64_t>(elem_size), 1);
    GemmOptions o = opts;
    if (opts.variant != Variant::Auto && opts.grid3d.c == 0 && detail::memory_limit(opts) == 0) o.memory_limit_bytes = 0;
    GemmPlanReport r;
    r.machine = MachineModel::from_env();
    r.elem_size = elem_size;
    r.chosen = detail::decide_gemm(op_a, op_b, a, b, c, order, o, elem_size, is_complex, false, r.machine, &r.candidates)
                   .info;
    for (auto& x : r.candidates) x.kind = kind_of(x.info, c);
    std::stable_sort(r.candidates.begin(), r.candidates.end(),
                     [](const auto& x, const auto& y) { return x.info.predicted_time_s < y.info.predicted_time_s; });
    r.reason = reason(r, opts);
    return r;
}

std::vector<std::string> GemmPlanReport::lines() const {
    std::vector<std::string> out;
    std::set<std::tuple<std::string, int, int, int, index_t>> shown;
    for (const GemmCandidate& x : candidates) {
        const bool is_chosen = same_plan(x.info, chosen);
        const auto key = std::tuple{x.kind, x.info.grid.p, x.info.grid.q, x.info.grid.c, x.info.block_size};
        if (!is_chosen && shown.count(key)) continue;  // a slower variant of a layout already shown
        shown.insert(key);
        out.push_back(line(x, is_chosen, machine, elem_size));
    }
    std::ostringstream mm;
    mm << "machine: latency " << machine.latency_s * 1e6 << " us, bandwidth " << 1e-9 / machine.seconds_per_byte
       << " GB/s, " << 1e-9 / machine.seconds_per_flop
       << " GF/s per rank";
    if (machine.seconds_per_stream_byte > 0) mm << ", packing " << 1e-9 / machine.seconds_per_stream_byte << " GB/s";
    mm << " (CALA_MODEL_LATENCY_US, _BANDWIDTH_GBS, _GFLOPS, _STREAM_GBS; cala-bench calibrate measures them)";
    out.push_back(mm.str());
    out.push_back(reason);
    return out;
}

}  // namespace cala

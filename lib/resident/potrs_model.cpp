// Cost model of the resident potrs: its loops are the host potrs's (the same plan, pieces and
// reductions, counted by the convention of cala/comm.hpp; NCCL broadcasts count as MPI's), so
// its words and messages are potrs_cost's; extra_bytes is its device workspace instead of the
// host's. On one rank: two device trsm, nothing travels.

#include "cala/resident.hpp"
#include "core/check.hpp"
#include "model/check.hpp"
#include "resident/potrs_2d.hpp"

namespace cala {

Cost resident_potrs_cost(Uplo uplo, const BlockCyclic& a, const BlockCyclic& b, const ResidentPotrfOptions& opts,
                         int row, int col, std::size_t elem_size, bool is_complex) {
    using detail::cat;
    const char* fn = "resident_potrs_cost";
    if (uplo != Uplo::Lower && uplo != Uplo::Upper)
        throw Error(cat(fn, ": uplo is ", static_cast<int>(uplo), ", must be Lower or Upper"));
    detail::throw_if(detail::same_grid_error(fn, "A", a, {{"B", &b}}));
    if (a.m() != a.n()) throw Error(cat(fn, ": A must be square, got ", a.m(), " x ", a.n()));
    if (b.m() != a.n()) throw Error(cat(fn, ": B has ", b.m(), " rows but A is ", a.n(), " x ", a.n()));
    if (opts.lookahead < 0 || opts.lookahead > 1)
        throw Error(cat(fn, ": lookahead is ", opts.lookahead, ", must be 0 or 1"));
    detail::check_process(fn, a, row, col);
    const TrsmOptions t{.lookahead = opts.lookahead};
    Cost cost = potrs_cost(uplo, a, b, t, row, col, elem_size, is_complex);
    if (a.p() * a.q() == 1) return Cost{.flops = cost.flops};  // in place on the device
    cost.extra_bytes = detail::res_potrs_workspace(uplo, detail::plan_trsm(a, b, t), row, col) *
                       static_cast<std::int64_t>(elem_size);
    return cost;
}

}  // namespace cala

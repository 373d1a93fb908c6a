// Argument checks of the entry points and the model's pure functions (model/check.hpp).

#include "model/check.hpp"

#include "core/check.hpp"

namespace cala::detail {

std::string gemm_shape_error(const char* fn, Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b,
                             const BlockCyclic& c) {
    for (auto [name, op] : {std::pair{"op_a", op_a}, std::pair{"op_b", op_b}})
        if (op != Op::N && op != Op::T && op != Op::C) return cat(fn, ": ", name, " is ", static_cast<int>(op), ", not an Op");
    const index_t ma = op_a == Op::N ? a.m() : a.n(), ka = op_a == Op::N ? a.n() : a.m();
    const index_t kb = op_b == Op::N ? b.m() : b.n(), nb = op_b == Op::N ? b.n() : b.m();
    if (ka != kb) return cat(fn, ": k of op(A) is ", ka, " but k of op(B) is ", kb);
    if (ma != c.m()) return cat(fn, ": op(A) has ", ma, " rows but C has ", c.m());
    if (nb != c.n()) return cat(fn, ": op(B) has ", nb, " columns but C has ", c.n());
    return {};
}

std::string gemm_options_error(const char* fn, const GemmOptions& o, int nranks) {
    if (o.lookahead < 0 || o.lookahead > 64) return cat(fn, ": lookahead is ", o.lookahead, ", must be in [0, 64]");
    if (o.panel_width < 0) return cat(fn, ": panel_width is ", o.panel_width, ", must be >= 0");
    if (o.block_size < 0) return cat(fn, ": block_size is ", o.block_size, ", must be >= 0");
    const auto& g3 = o.grid3d;
    const bool g3_zero = g3.p == 0 && g3.q == 0 && g3.c == 0;
    if (!g3_zero && (g3.p < 1 || g3.q < 1 || g3.c < 1 || static_cast<long>(g3.p) * g3.q * g3.c > nranks))
        return cat(fn, ": grid3d is ", g3.p, " x ", g3.q, " x ", g3.c, ", not a grid of at most ", nranks, " ranks");
    if (o.variant < Variant::Auto || o.variant > Variant::StationaryB)
        return cat(fn, ": variant is ", static_cast<int>(o.variant), ", not a Variant");
    return {};
}

std::string same_grid_error(const char* fn, const char* first, const BlockCyclic& l0,
                            std::initializer_list<std::pair<const char*, const BlockCyclic*>> others) {
    for (const auto& [name, l] : others)
        if (l->p() != l0.p() || l->q() != l0.q())
            return cat(fn, ": ", name, " has a layout for a ", l->p(), " x ", l->q(), " grid, ", first, " for a ",
                       l0.p(), " x ", l0.q(), " grid");
    return {};
}

void throw_if(const std::string& error) {
    if (!error.empty()) throw Error(error);
}

void check_gemm_layouts(const char* fn, Op op_a, Op op_b, const BlockCyclic& a, const BlockCyclic& b,
                        const BlockCyclic& c, const GemmOptions& o) {
    throw_if(same_grid_error(fn, "A", a, {{"B", &b}, {"C", &c}}));
    throw_if(gemm_shape_error(fn, op_a, op_b, a, b, c));
    throw_if(gemm_options_error(fn, o, c.p() * c.q()));
}

void check_redistribute_layouts(const char* fn, Op op, const BlockCyclic& src, const BlockCyclic& dst) {
    if (op != Op::N && op != Op::T && op != Op::C) throw Error(cat(fn, ": op is ", static_cast<int>(op), ", not an Op"));
    throw_if(same_grid_error(fn, "src", src, {{"dst", &dst}}));
    const index_t m = op == Op::N ? src.m() : src.n(), n = op == Op::N ? src.n() : src.m();
    if (m != dst.m() || n != dst.n())
        throw Error(cat(fn, ": op(src) is ", m, " x ", n, " but dst is ", dst.m(), " x ", dst.n()));
}

void check_process(const char* fn, const BlockCyclic& l, int row, int col) {
    if (row < 0 || row >= l.p() || col < 0 || col >= l.q())
        throw Error(cat(fn, ": process (", row, ", ", col, ") is not on the ", l.p(), " x ", l.q(), " grid"));
}

void check_rank(const char* fn, const BlockCyclic& l, int rank) {
    if (rank < 0 || rank >= l.p() * l.q())
        throw Error(cat(fn, ": rank ", rank, " is not one of the ", l.p() * l.q(), " ranks"));
}

void check_at_least(const char* fn, const char* name, std::int64_t value, std::int64_t min) {
    if (value < min) throw Error(cat(fn, ": ", name, " is ", value, ", must be >= ", min));
}

}  // namespace cala::detail

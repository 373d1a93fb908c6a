// cala::gemm -> plan (gemm/plan, model/) -> summa_c | summa_a | summa_b -> kernels::gemm (BLIS)

#include "cala/gemm.hpp"

#include <deque>
#include <map>
#include <tuple>

#include "cala/device.hpp"
#include "cala/grid3d.hpp"
#include "cala/node.hpp"
#include "cala/model.hpp"
#include "comm/finalize.hpp"
#include "core/check.hpp"
#include "gemm/driver.hpp"
#include "gemm/summa3d.hpp"
#include "model/check.hpp"
#include "node/options.hpp"
#include "model/planner.hpp"
#include "core/workspace.hpp"
#include "gemm/summa_common.hpp"
#include "matrix/redistribute_impl.hpp"

namespace cala {

const char* to_string(Variant v) noexcept {
    switch (v) {
        case Variant::StationaryC: return "C";
        case Variant::StationaryA: return "A";
        case Variant::StationaryB: return "B";
        default: return "auto";
    }
}

namespace detail {

// A device list naming several kinds of unit runs on the node: its units and speeds are checked
// here, on every rank, before any communication.
std::string gemm_node_error(const GemmOptions& o) {
    return node::detail::units_error(o.devices, o.unit_speeds, o.node_strategy, "gemm");
}

template <class T>
std::string check_gemm(Op op_a, Op op_b, const MatrixRef<T>& a, const MatrixRef<T>& b, const MatrixRef<T>& c,
                       const GemmOptions& o) {
    using detail::cat;
    std::string e = detail::check_same_grid("gemm", "A", a.grid(), a.layout(), c.grid());
    if (e.empty()) e = detail::check_same_grid("gemm", "B", b.grid(), b.layout(), c.grid());
    if (e.empty()) e = detail::check_same_grid("gemm", "C", c.grid(), c.layout(), c.grid());
    if (!e.empty()) return e;
    if (e = detail::gemm_shape_error("gemm", op_a, op_b, a.layout(), b.layout(), c.layout()); !e.empty()) return e;
    if (e = detail::gemm_options_error("gemm", o, c.grid().comm().size()); !e.empty()) return e;
    if (e = gemm_node_error(o); !e.empty()) return e;
    for (auto [name, x] : {std::pair{"A", &a}, std::pair{"B", &b}, std::pair{"C", &c}})
        if (e = detail::check_local("gemm", name, *x); !e.empty()) return e;
    return {};
}

template <class T>
std::uint64_t gemm_fingerprint(Op op_a, Op op_b, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta,
                               const MatrixRef<T>& c, const GemmOptions& o) {
    using detail::fingerprint;
    std::uint64_t h = 1469598103934665603ull;
    const int ops[2] = {static_cast<int>(op_a), static_cast<int>(op_b)};
    h = fingerprint(h, ops, sizeof ops);
    h = fingerprint(fingerprint(fingerprint(h, a.layout()), b.layout()), c.layout());
    h = fingerprint(fingerprint(h, &alpha, sizeof alpha), &beta, sizeof beta);
    const std::int64_t opt[12] = {static_cast<int>(o.variant), o.lookahead, o.panel_width, o.grid3d.p, o.grid3d.q,
                                  o.grid3d.c, o.block_size, detail::memory_limit(o), o.max_device_bytes,
                                  o.whole_rows_max_elements, o.node_shared_memory ? 1 : 0, o.node_shared_min_reuse};
    h = fingerprint(h, opt, sizeof opt);
    // The units of every rank's local update (a list that differs between ranks is an error on
    // every rank, before any work).
    return node::detail::fingerprint_units(h, o.devices, o.unit_speeds, o.node_strategy);
}

}  // namespace detail

namespace {

// The operand the kernel reads: the user's matrix, or a redistributed copy in `store`.
template <class T>
MatrixRef<T> materialize(const detail::Operand& x, const MatrixRef<T>& user, detail::Buffer<T>& store) {
    if (!x.moves) return user;
    const Grid2D& g = user.grid();
    const index_t m_loc = x.layout.rows.local_size(g.row()), n_loc = x.layout.cols.local_size(g.col());
    store = detail::Buffer<T>(m_loc * n_loc);
    MatrixRef<T> dst(g, x.layout, store.data(), std::max<index_t>(m_loc, 1));
    detail::redistribute_unchecked(x.redist_op, user, dst);
    return dst;
}

}  // namespace

namespace detail {

namespace {

struct Grid3DEntry {
    Comm source;  // a duplicate of the user's communicator, to recognize it later
    Grid3D grid;
};
// deque: the references grid3d_for hands out stay valid as entries are added.
using Grid3DCache = std::map<std::tuple<int, int, int>, std::deque<Grid3DEntry>>;

Grid3DCache& grid3d_cache() {
    static Grid3DCache cache;
    return cache;
}

}  // namespace

// The 3D grid of a given shape over the ranks of a user's grid, made once per shape: building
// one costs several communicator duplications and splits.
const Grid3D& grid3d_for(const Grid2D& user, detail::Shape3 g) {
    // Freed inside MPI_Finalize, while MPI works (LeakSanitizer, test_potrf_np2).
    release_at_mpi_finalize<release_grid3d_cache>();
    auto& cache = grid3d_cache();
    auto& entries = cache[{g.p, g.q, g.c}];
    for (const auto& e : entries) {
        int result = MPI_UNEQUAL;
        CALA_CHECK_MPI(MPI_Comm_compare(e.source.get(), user.comm().get(), &result));
        if (result == MPI_CONGRUENT || result == MPI_IDENT) return e.grid;
    }
    Comm source = user.comm().dup();
    Grid3D grid(user.comm(), g.p, g.q, g.c);
    entries.push_back(Grid3DEntry{std::move(source), std::move(grid)});
    return entries.back().grid;
}

void release_grid3d_cache() noexcept { grid3d_cache().clear(); }

}  // namespace detail

template <class T>
void gemm(Op op_a, Op op_b, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b, T beta, const MatrixRef<T>& c,
          const GemmOptions& opts) {
    std::string err = detail::check_gemm(op_a, op_b, a, b, c, opts);
    if (err.empty()) err = node::detail::devices_error(opts.devices, opts.max_device_bytes, "gemm");
    const std::uint64_t fp = err.empty() ? detail::gemm_fingerprint(op_a, op_b, alpha, a, b, beta, c, opts) : 0;
    c.grid().comm().agree(err, fp, "gemm");

    const index_t k = op_a == Op::N ? a.n() : a.m();
    if (c.m() == 0 || c.n() == 0) return;
    if (k == 0) {
        kernels::scale(c.m_loc(), c.n_loc(), beta, c.data(), c.ld());
        return;
    }
    // Calibrated unit speeds, the same on every rank, when the node runs without given speeds.
    GemmOptions o = opts;
    // The node-shared gather only where the ranks do share a node (the model takes the option as
    // given: GemmOptions::node_shared_memory).
    o.node_shared_memory = opts.node_shared_memory && c.grid().comm().shares_node();
    o.unit_speeds = node::detail::agree_speeds(c.grid().comm(), opts.devices, opts.max_device_bytes, opts.unit_speeds, "gemm");
    // The planner runs unless the caller forced a 2D variant on its own grid (and set no limit).
    const bool plain_2d = o.variant != Variant::Auto && o.grid3d.c == 0 && detail::memory_limit(o) == 0;
    const auto decision = plain_2d ? detail::GemmDecision{false, o.variant, {}, 0, {}}
                                   : detail::decide_gemm(op_a, op_b, a.layout(), b.layout(), c.layout(), c.grid().order(),
                                                         o, sizeof(T), is_complex_v<T>);
    if (decision.three_d) {
        const auto plan = detail::plan_gemm_3d(op_a, op_b, c.m(), c.n(), k, decision.variant, decision.g, decision.nb, o);
        detail::summa_3d(plan, detail::grid3d_for(c.grid(), decision.g), alpha, a, b, beta, c);
        return;
    }
    const Variant v = decision.variant;
    const auto plan = detail::plan_gemm_2d(op_a, op_b, a.layout(), b.layout(), c.layout(), v, o);
    detail::Buffer<T> astore, bstore;
    const MatrixRef<T> a2 = materialize(plan.a, a, astore);
    const MatrixRef<T> b2 = materialize(plan.b, b, bstore);
    switch (v) {
        case Variant::StationaryA: detail::summa_a(plan, alpha, a2, b2, beta, c); break;
        case Variant::StationaryB: detail::summa_b(plan, alpha, a2, b2, beta, c); break;
        default: detail::summa_c(plan, alpha, a2, b2, beta, c); break;
    }
}

#define CALA_INST(T)                                                                                     \
    template std::string detail::check_gemm<T>(Op, Op, const MatrixRef<T>&, const MatrixRef<T>&,              \
                                               const MatrixRef<T>&, const GemmOptions&);                    \
    template std::uint64_t detail::gemm_fingerprint<T>(Op, Op, T, const MatrixRef<T>&, const MatrixRef<T>&, T,  \
                                                       const MatrixRef<T>&, const GemmOptions&);            \
    template void gemm<T>(Op, Op, T, const MatrixRef<T>&, const MatrixRef<T>&, T, const MatrixRef<T>&,     \
                          const GemmOptions&);
CALA_FOR_EACH_TYPE(CALA_INST)

}  // namespace cala

// cala::trmm -> the stored triangle copied into workspace with the other triangle zeroed (and the
//   unit diagonal written) -> cala::gemm (gemm/: plan, SUMMA) into a workspace C of B's layout
//   -> C copied into B (local). trmm_cost: gemm_cost plus the two copies' workspace.
//
// A distributed triangular product has gemm's communication pattern (the panels of A and B
// travel as in SUMMA); doing it as a gemm on the masked triangle keeps gemm's plan and exact
// model at the price of twice the flops of a triangular kernel.

#include <algorithm>
#include <string>

#include "cala/cholesky.hpp"
#include "cala/model.hpp"
#include "core/check.hpp"
#include "core/workspace.hpp"
#include "kernels/blas.hpp"
#include "matrix/redistribute_impl.hpp"
#include "model/check.hpp"
#include "model/costs.hpp"

namespace cala {

namespace {

// trmm_cost is a pure function of the layouts, so trmm's product broadcasts wherever the ranks
// run (GemmOptions::node_shared_memory: the node-shared gather depends on that).
const GemmOptions kTrmmGemm{.node_shared_memory = false};

template <class T>
std::string check_trmm(Side side, Uplo uplo, Op op, Diag diag, const MatrixRef<T>& a, const MatrixRef<T>& b) {
    using detail::cat;
    const char* fn = "trmm";
    std::string e = detail::check_same_grid(fn, "A", a.grid(), a.layout(), b.grid());
    if (e.empty()) e = detail::check_same_grid(fn, "B", b.grid(), b.layout(), b.grid());
    if (!e.empty()) return e;
    if (side != Side::Left && side != Side::Right) return cat(fn, ": side is ", static_cast<int>(side), ", not a Side");
    if (uplo != Uplo::Lower && uplo != Uplo::Upper) return cat(fn, ": uplo is ", static_cast<int>(uplo), ", not a Uplo");
    if (op != Op::N && op != Op::T && op != Op::C) return cat(fn, ": op is ", static_cast<int>(op), ", not an Op");
    if (diag != Diag::NonUnit && diag != Diag::Unit) return cat(fn, ": diag is ", static_cast<int>(diag), ", not a Diag");
    if (a.m() != a.n()) return cat(fn, ": A is ", a.m(), " x ", a.n(), ", not square");
    const index_t k = side == Side::Left ? b.m() : b.n();
    if (k != a.n())
        return cat(fn, ": B has ", k, side == Side::Left ? " rows" : " columns", " but A is ", a.n(), " x ", a.n());
    if (e = detail::check_local(fn, "A", a); !e.empty()) return e;
    return detail::check_local(fn, "B", b);
}

void rank_coords(const BlockCyclic& l, GridOrder order, int rank, int& row, int& col) {
    const int p = l.p(), q = l.q();
    if (order == GridOrder::RowMajor) row = rank / q, col = rank % q;
    else row = rank % p, col = rank / p;
}

}  // namespace

template <class T>
void trmm(Side side, Uplo uplo, Op op, Diag diag, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b) {
    const std::string err = check_trmm(side, uplo, op, diag, a, b);
    std::uint64_t fp = 0;
    if (err.empty()) {
        const int args[4] = {static_cast<int>(side), static_cast<int>(uplo), static_cast<int>(op),
                             static_cast<int>(diag)};
        fp = detail::fingerprint(1469598103934665603ull, args, sizeof args);
        fp = detail::fingerprint(detail::fingerprint(fp, a.layout()), b.layout());
        fp = detail::fingerprint(fp, &alpha, sizeof alpha);
    }
    b.grid().comm().agree(err, fp, "trmm");

    if (b.m() == 0 || b.n() == 0) return;
    if (alpha == T(0)) {  // B := 0; A is not read, nothing moves
        kernels::scale(b.m_loc(), b.n_loc(), T(0), b.data(), b.ld());
        return;
    }
    const Grid2D& g = a.grid();
    const Dist1D& R = a.layout().rows;
    const Dist1D& C = a.layout().cols;
    const index_t ma = a.m_loc(), na = a.n_loc(), mb = b.m_loc(), nb = b.n_loc();
    detail::Buffer<T> astore(ma * na), cstore(mb * nb);
    const MatrixRef<T> tri(g, a.layout(), astore.data(), std::max<index_t>(ma, 1));
    const MatrixRef<T> c(g, b.layout(), cstore.data(), std::max<index_t>(mb, 1));
    const bool lower = uplo == Uplo::Lower, unit = diag == Diag::Unit;
    for (index_t jl = 0; jl < na; ++jl) {
        const index_t j = C.to_global(jl, g.col());
        for (index_t il = 0; il < ma; ++il) {
            const index_t i = R.to_global(il, g.row());
            T v = T(0);
            if (i == j) v = unit ? T(1) : a.local(il, jl);
            else if ((i > j) == lower) v = a.local(il, jl);
            tri.local(il, jl) = v;
        }
    }
    if (side == Side::Left) gemm(op, Op::N, alpha, tri, b, T(0), c, kTrmmGemm);
    else gemm(Op::N, op, alpha, b, tri, T(0), c, kTrmmGemm);
    if (mb > 0 && nb > 0) kernels::copy(Op::N, mb, nb, c.data(), c.ld(), b.data(), b.ld());
}

Cost trmm_cost(Side side, Uplo uplo, Op op, const BlockCyclic& a, const BlockCyclic& b, GridOrder order, int rank,
               std::size_t elem_size, bool is_complex) {
    using detail::cat;
    if (side != Side::Left && side != Side::Right) throw Error(cat("trmm_cost: side is ", static_cast<int>(side), ", not a Side"));
    if (uplo != Uplo::Lower && uplo != Uplo::Upper) throw Error(cat("trmm_cost: uplo is ", static_cast<int>(uplo), ", not a Uplo"));
    detail::throw_if(detail::same_grid_error("trmm_cost", "A", a, {{"B", &b}}));
    const index_t k = side == Side::Left ? b.m() : b.n();
    if (a.m() != a.n() || k != a.n()) throw Error(cat("trmm_cost: A is ", a.m(), " x ", a.n(), ", B ", b.m(), " x ", b.n()));
    detail::check_rank("trmm_cost", a, rank);
    if (b.m() == 0 || b.n() == 0) return {};
    Cost cost = side == Side::Left
                    ? gemm_cost(op, Op::N, a, b, b, kTrmmGemm, order, rank, elem_size, is_complex)
                    : gemm_cost(Op::N, op, b, a, b, kTrmmGemm, order, rank, elem_size, is_complex);
    int row = 0, col = 0;
    rank_coords(a, order, rank, row, col);
    cost.extra_bytes += (detail::local_elems(a, row, col) + detail::local_elems(b, row, col)) *
                        static_cast<std::int64_t>(elem_size);
    return cost;
}

#define CALA_INST(T) \
    template void trmm<T>(Side, Uplo, Op, Diag, T, const MatrixRef<T>&, const MatrixRef<T>&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala

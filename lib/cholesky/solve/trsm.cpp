// cala::trsm -> plan (trsm_plan.hpp) -> redistribute A or B into aligned layouts (counted)
//   -> trsm_2d (op = N: panel broadcasts along rows, solved rows down columns, lookahead)
//    | trsm_2d_trans (op = T/C: the same panels, partial sums reduced down columns)
//   -> kernels::trsm, kernels::gemm
// cala::trsm(Side::Right) -> B moves into a transposed copy lined up with A (redistribute T, or C
//   for op = C) -> the left-side driver on op(A)ᵀ·Xᵀ = alpha·Bᵀ (or its conjugate) -> back (T/C)
// cala::potrs -> one alignment, then the two loops: L then Lᴴ (Lower), Uᴴ then U (Upper).

#include <initializer_list>
#include <string>

#include "cala/cholesky.hpp"
#include "cholesky/solve/trsm_plan.hpp"
#include "core/check.hpp"
#include "core/workspace.hpp"
#include "kernels/blas.hpp"
#include "matrix/redistribute_impl.hpp"

namespace cala {

namespace {

template <class T>
std::string check_trsm(const char* fn, Uplo uplo, Op op, Diag diag, const MatrixRef<T>& a, const MatrixRef<T>& b,
                       const TrsmOptions& o, Side side = Side::Left) {
    using detail::cat;
    std::string e = detail::check_same_grid(fn, "A", a.grid(), a.layout(), b.grid());
    if (e.empty()) e = detail::check_same_grid(fn, "B", b.grid(), b.layout(), b.grid());
    if (!e.empty()) return e;
    if (uplo != Uplo::Lower && uplo != Uplo::Upper) return cat(fn, ": uplo is ", static_cast<int>(uplo), ", not a Uplo");
    if (op != Op::N && op != Op::T && op != Op::C) return cat(fn, ": op is ", static_cast<int>(op), ", not an Op");
    if (diag != Diag::NonUnit && diag != Diag::Unit) return cat(fn, ": diag is ", static_cast<int>(diag), ", not a Diag");
    if (a.m() != a.n()) return cat(fn, ": A is ", a.m(), " x ", a.n(), ", not square");
    if (side != Side::Left && side != Side::Right) return cat(fn, ": side is ", static_cast<int>(side), ", not a Side");
    if (side == Side::Left && b.m() != a.n()) return cat(fn, ": B has ", b.m(), " rows but A is ", a.n(), " x ", a.n());
    if (side == Side::Right && b.n() != a.n())
        return cat(fn, ": B has ", b.n(), " columns but A is ", a.n(), " x ", a.n(), " (right side)");
    if (o.lookahead < 0 || o.lookahead > 64) return cat(fn, ": lookahead is ", o.lookahead, ", must be in [0, 64]");
    if (e = detail::check_local(fn, "A", a); !e.empty()) return e;
    return detail::check_local(fn, "B", b);
}

template <class T>
std::uint64_t trsm_fingerprint(Uplo uplo, Op op, Diag diag, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b,
                               const TrsmOptions& o) {
    using detail::fingerprint;
    const int args[4] = {static_cast<int>(uplo), static_cast<int>(op), static_cast<int>(diag), o.lookahead};
    // (the side is folded into the caller's fingerprint)
    std::uint64_t h = fingerprint(1469598103934665603ull, args, sizeof args);
    h = fingerprint(fingerprint(h, a.layout()), b.layout());
    return fingerprint(h, &alpha, sizeof alpha);
}

// A matrix with this layout in fresh workspace on the grid of `like`.
template <class T>
MatrixRef<T> make_store(const MatrixRef<T>& like, const BlockCyclic& l, detail::Buffer<T>& store) {
    const Grid2D& g = like.grid();
    const index_t m_loc = l.rows.local_size(g.row()), n_loc = l.cols.local_size(g.col());
    store = detail::Buffer<T>(m_loc * n_loc);
    return MatrixRef<T>(g, l, store.data(), std::max<index_t>(m_loc, 1));
}

// B := alpha·op_i(A)⁻¹·...·B for each op_i in turn, on checked arguments, alpha != 0, n > 0,
// nrhs > 0: A and B are lined up once for all the solves.
template <class T>
void solve_run(Uplo uplo, std::initializer_list<Op> ops, Diag diag, T alpha, const MatrixRef<T>& a,
               const MatrixRef<T>& b, const TrsmOptions& opts) {
    const auto plan = detail::plan_trsm(a.layout(), b.layout(), opts);
    detail::Buffer<T> astore, bstore;
    MatrixRef<T> a2 = a, b2 = b;
    if (plan.move_a) {
        a2 = make_store(a, plan.a_layout, astore);
        detail::redistribute_unchecked(Op::N, a, a2);
    }
    if (plan.move_b) {
        b2 = make_store(b, plan.b_layout, bstore);
        detail::redistribute_unchecked(Op::N, b, b2);
    }
    if (alpha != T(1)) kernels::scale(b2.m_loc(), b2.n_loc(), alpha, b2.data(), b2.ld());
    const bool lower = uplo == Uplo::Lower, unit = diag == Diag::Unit;
    for (Op op : ops) {
        if (op == Op::N) detail::trsm_2d(lower, unit, plan.lookahead, a2, b2);
        else detail::trsm_2d_trans(lower, op, unit, plan.lookahead, a2, b2);
    }
    if (plan.move_b) detail::redistribute_unchecked(Op::N, b2, b);
}

}  // namespace

template <class T>
void trsm(Uplo uplo, Op op, Diag diag, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b,
          const TrsmOptions& opts) {
    const std::string err = check_trsm("trsm", uplo, op, diag, a, b, opts);
    const std::uint64_t fp = err.empty() ? trsm_fingerprint(uplo, op, diag, alpha, a, b, opts) : 0;
    b.grid().comm().agree(err, fp, "trsm");

    if (a.n() == 0 || b.n() == 0) return;
    if (alpha == T(0)) {  // B := 0; A is not read, nothing moves
        kernels::scale(b.m_loc(), b.n_loc(), T(0), b.data(), b.ld());
        return;
    }
    solve_run(uplo, {op}, diag, alpha, a, b, opts);
}

template <class T>
void trsm(Side side, Uplo uplo, Op op, Diag diag, T alpha, const MatrixRef<T>& a, const MatrixRef<T>& b,
          const TrsmOptions& opts) {
    if (side == Side::Left) return trsm(uplo, op, diag, alpha, a, b, opts);
    const std::string err = check_trsm("trsm", uplo, op, diag, a, b, opts, side);
    std::uint64_t fp = err.empty() ? trsm_fingerprint(uplo, op, diag, alpha, a, b, opts) : 0;
    const int sd = static_cast<int>(side);
    fp = detail::fingerprint(fp, &sd, sizeof sd);
    b.grid().comm().agree(err, fp, "trsm");

    if (a.n() == 0 || b.m() == 0) return;
    if (alpha == T(0)) {
        kernels::scale(b.m_loc(), b.n_loc(), T(0), b.data(), b.ld());
        return;
    }
    // X·op(A) = alpha·B  <=>  op(A)ᵀ·Xᵀ = alpha·Bᵀ (op = N, T)  or  A·Xᴴ = conj(alpha)·Bᴴ (op = C).
    const auto r = detail::right_problem(op, a.layout(), b.layout());
    detail::Buffer<T> store;
    const MatrixRef<T> bt = make_store(b, r.bt_layout, store);
    detail::redistribute_unchecked(r.move, b, bt);
    solve_run(uplo, {r.op}, diag, op == Op::C ? conj_if(alpha, true) : alpha, a, bt, opts);
    detail::redistribute_unchecked(r.move, bt, b);
}

template <class T>
void potrs(Uplo uplo, const MatrixRef<T>& a, const MatrixRef<T>& b, const TrsmOptions& opts) {
    const std::string err = check_trsm("potrs", uplo, Op::N, Diag::NonUnit, a, b, opts);
    const std::uint64_t fp = err.empty() ? trsm_fingerprint(uplo, Op::N, Diag::NonUnit, T(1), a, b, opts) : 0;
    b.grid().comm().agree(err, fp, "potrs");

    if (a.n() == 0 || b.n() == 0) return;
    // Lower: L·Y = B, then Lᴴ·X = Y.  Upper: Uᴴ·Y = B, then U·X = Y.
    if (uplo == Uplo::Lower) solve_run(uplo, {Op::N, Op::C}, Diag::NonUnit, T(1), a, b, opts);
    else solve_run(uplo, {Op::C, Op::N}, Diag::NonUnit, T(1), a, b, opts);
}

#define CALA_INST(T)                                                                                        \
    template void trsm<T>(Uplo, Op, Diag, T, const MatrixRef<T>&, const MatrixRef<T>&, const TrsmOptions&);   \
    template void trsm<T>(Side, Uplo, Op, Diag, T, const MatrixRef<T>&, const MatrixRef<T>&, const TrsmOptions&); \
    template void potrs<T>(Uplo, const MatrixRef<T>&, const MatrixRef<T>&, const TrsmOptions&);
CALA_FOR_EACH_TYPE(CALA_INST)
#undef CALA_INST

}  // namespace cala

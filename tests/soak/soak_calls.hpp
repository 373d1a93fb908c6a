#pragma once
// One soak call of each kind on a drawn grid: draws its sizes, blocks and options, runs the call,
// and checks (reduced over the grid) the result against the sequential reference on gathered
// data (norm-wise, scaled by n·eps) and this rank's traffic against the cost model. Each returns
// a short description of what it drew.

#include <doctest/doctest.h>

#include <cstring>
#include <limits>

#include "soak/soak.hpp"
#include "stencil/stencil_reference.hpp"
#include "support/gemm_case.hpp"
#include "trsm/trsm_case.hpp"

namespace cala::soak {

inline std::string str(index_t v) { return std::to_string(v); }

/// 2D SUMMA (every variant, every op pair) or, with three_d, 2.5D/3D SUMMA on a drawn p x q x c
/// (2D on a grid of one rank).
template <class T>
std::string gemm_call(Draw& d, const Grid2D& grid, bool three_d) {
    three_d = three_d && grid.comm().size() > 1;
    const index_t mx = three_d ? 24 : 40;
    test::Shape s{d.size(mx), d.size(mx), d.size(mx), 0, 0, 0, 0, 0, 0, d.coin(), d.between(0, 3), false};
    for (index_t* b : {&s.mba, &s.nba, &s.mbb, &s.nbb, &s.mbc, &s.nbc}) *b = d.between(1, 8);
    const Op oa = d.op(), ob = d.op();
    const bool beta_zero = d.coin(30);
    GemmOptions o{.lookahead = d.pick(3), .panel_width = d.coin() ? 0 : d.between(1, 12)};
    if (three_d) {
        o.variant = static_cast<Variant>(1 + d.pick(3));
        o.grid3d = draw_shape3d(d, grid.comm().size());
        o.block_size = d.between(1, 6);
    } else {
        o.variant = static_cast<Variant>(d.pick(10) == 0 ? 0 : 1 + d.pick(3));  // Auto now and then
    }
    const std::string what = std::string(three_d ? "gemm3d " : "gemm ") + to_string(o.variant) + " " + op_char(oa) +
                             op_char(ob) + " m=" + str(s.m) + " n=" + str(s.n) + " k=" + str(s.k) +
                             " grid3d=" + str(o.grid3d.p) + "x" + str(o.grid3d.q) + "x" + str(o.grid3d.c);
    INFO(what);

    test::run_case<T>(grid, s, oa, ob, beta_zero, o);
    return what;
}

/// Hermitian positive definite n x n at (off, off) of `parent` (entries of a formula, a dominant
/// real diagonal); the rest of the parent from another formula.
template <class T>
void fill_spd(const MatrixRef<T>& parent, index_t off, index_t n, std::uint64_t cs) {
    const Grid2D& g = parent.grid();
    for (index_t jl = 0; jl < parent.n_loc(); ++jl)
        for (index_t il = 0; il < parent.m_loc(); ++il) {
            const index_t gi = parent.layout().rows.to_global(il, g.row()),
                          gj = parent.layout().cols.to_global(jl, g.col());
            const index_t i = gi - off, j = gj - off;
            T v = entry<T>(cs, 1, gi, gj);
            if (i >= 0 && j >= 0 && i < n && j < n) {
                if (i > j)
                    v = entry<T>(cs, 0, i, j);
                else if (i < j)
                    v = conj_if(entry<T>(cs, 0, j, i), true);
                else
                    v = T(static_cast<real_t<T>>(n) + std::abs(entry<T>(cs, 0, i, i)));
            }
            parent.local(il, jl) = v;
        }
}

/// max |A − op1(F)·op2(F)| / (eps·(n+2)·max |op1(F)|·|op2(F)|) with F the uplo triangle of f.
template <class T>
double factor_error(const std::vector<T>& a, std::vector<T> f, index_t n, Uplo uplo) {
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < n; ++i)
            if (i != j && (i > j) != (uplo == Uplo::Lower)) f[i + j * n] = T(0);
    const Op o1 = uplo == Uplo::Lower ? Op::N : Op::C, o2 = uplo == Uplo::Lower ? Op::C : Op::N;
    return test::gemm_error(a, test::reference_gemm(o1, o2, n, n, n, T(1), f, n, f, n, T(0), {}), n);
}

/// potrf (2D or 2.5D, drawn options) of a drawn SPD submatrix, then potrs with a drawn B.
template <class T>
std::string cholesky_call(Draw& d, const Grid2D& grid, std::uint64_t cs) {
    const index_t n = d.size(36), off = d.between(0, 3), nrhs = d.size(9), ob = d.between(0, 2);
    const index_t nb = d.between(1, 8), mb = d.coin(80) ? nb : d.between(1, 8);
    const Uplo uplo = d.coin() ? Uplo::Lower : Uplo::Upper;
    CholeskyOptions o{.lookahead = d.pick(2), .panel = static_cast<PanelMode>(d.pick(3))};
    const int v = d.pick(grid.comm().size() > 1 ? 4 : 2);
    o.variant = v == 0 ? CholeskyVariant::TwoD : v == 1 ? CholeskyVariant::Auto : static_cast<CholeskyVariant>(v);
    if (v >= 2) {
        o.grid3d = draw_shape3d(d, grid.comm().size());
        o.block_size = d.between(1, 6);
    }
    const TrsmOptions so{.lookahead = d.pick(3)};
    const std::string what = std::string("potrf+potrs ") + to_string(o.variant) + " " + uplo_char(uplo) +
                             " n=" + str(n) + " nrhs=" + str(nrhs) + " mb=" + str(mb) + " nb=" + str(nb) +
                             " off=" + str(off) + " grid3d=" + str(o.grid3d.p) + "x" + str(o.grid3d.q) + "x" +
                             str(o.grid3d.c);
    INFO(what);
    DistMatrix<T> A0(grid, n + off, n + off, mb, nb, d.pick(grid.p()), d.pick(grid.q()));
    DistMatrix<T> B0(grid, n + ob, nrhs + ob, d.between(1, 8), d.between(1, 8), d.pick(grid.p()), d.pick(grid.q()));
    fill_spd(A0.view(), off, n, cs);
    test::randomize(B0.view());
    const MatrixRef<T> a = A0.sub(off, off, n, n), b = B0.sub(ob, ob, n, nrhs);
    const auto ga = gather(a), gb = gather(b);
    const bool root = grid.comm().rank() == 0;

    const Cost fmodel = potrf_cost(uplo, a.layout(), grid.order(), o, grid.comm().rank(), sizeof(T), is_complex_v<T>);
    std::int64_t mem0 = test::mark();
    const index_t info = potrf(uplo, a, o);
    const auto fgot = test::measure(mem0);
    const auto gf = gather(a);
    const double ferr = root ? factor_error(ga, gf, n, uplo) : 0.0;
    CAPTURE(info);
    CAPTURE(ferr);
    CAPTURE(fgot.t.words());
    CAPTURE(fmodel.words);
    CAPTURE(fgot.t.msgs());
    CAPTURE(fmodel.msgs);
    CAPTURE(fgot.extra);
    CAPTURE(fmodel.extra_bytes);
    CHECK(test::all_ranks(info == 0, grid));
    CHECK(test::all_ranks(ferr < 4.0, grid));
    CHECK(test::all_ranks(fgot.t.words() == fmodel.words && fgot.t.words_recv == fmodel.words_recv, grid));
    CHECK(test::all_ranks(fgot.t.msgs() == fmodel.msgs, grid));
    CHECK(test::all_ranks(fgot.extra <= fmodel.extra_bytes, grid));

    const Cost smodel =
        potrs_cost(uplo, a.layout(), b.layout(), so, grid.row(), grid.col(), sizeof(T), is_complex_v<T>);
    mem0 = test::mark();
    potrs(uplo, a, b, so);
    const auto sgot = test::measure(mem0);
    const auto x = gather(b);
    // max |A·X − B| / (eps·(n+2)·max (|A|·|X| + |B|)).
    const double serr =
        root ? test::gemm_error(std::vector<T>(x.size()),
                                test::reference_gemm(Op::N, Op::N, n, nrhs, n, T(1), ga, n, x, n, T(-1), gb), n)
             : 0.0;
    CAPTURE(serr);
    CAPTURE(sgot.t.words());
    CAPTURE(smodel.words);
    CAPTURE(sgot.t.msgs());
    CAPTURE(smodel.msgs);
    CAPTURE(sgot.extra);
    CAPTURE(smodel.extra_bytes);
    CHECK(test::all_ranks(serr < 16.0, grid));
    CHECK(test::all_ranks(test::matches(sgot, smodel), grid));
    return what;
}

/// trsm with a drawn triangle (tests/trsm's generator), op, diag, alpha and layouts.
template <class T>
std::string trsm_call(Draw& d, const Grid2D& grid) {
    const index_t n = d.size(36), nrhs = d.size(12), oa = d.between(0, 3), ob = d.between(0, 3);
    const Uplo uplo = d.coin() ? Uplo::Lower : Uplo::Upper;
    const Op op = d.op();
    const Diag diag = d.coin() ? Diag::NonUnit : Diag::Unit;
    const bool alpha_zero = d.coin(10);
    const TrsmOptions o{.lookahead = d.pick(3)};
    const T alpha = alpha_zero ? T(0) : test::random_value<T>(d.engine()) + T(1);
    const std::string what = std::string("trsm ") + uplo_char(uplo) + op_char(op) + (diag == Diag::Unit ? "U" : "N") +
                             " n=" + str(n) + " nrhs=" + str(nrhs) + " oa=" + str(oa) + " ob=" + str(ob);
    INFO(what);
    const index_t mba = d.between(1, 8), nba = d.coin(80) ? mba : d.between(1, 8);
    DistMatrix<T> A0(grid, n + oa, n + oa, mba, nba, d.pick(grid.p()), d.pick(grid.q()));
    DistMatrix<T> B0(grid, n + ob, nrhs + ob, d.between(1, 8), d.between(1, 8), d.pick(grid.p()), d.pick(grid.q()));
    const MatrixRef<T> a = A0.sub(oa, oa, n, n), b = B0.sub(ob, ob, n, nrhs);
    test::randomize(B0.view());
    test::triangular(a, uplo, diag);
    const auto ga = gather(a), gb = gather(b);
    const std::vector<T> a_local(A0.data(), A0.data() + A0.m_loc() * A0.n_loc());
    const std::int64_t mem0 = test::mark();

    trsm(uplo, op, diag, alpha, a, b, o);

    const auto got = test::measure(mem0);
    const auto x = gather(b);
    const double err = grid.comm().rank() == 0 ? test::trsm_residual(ga, n, uplo, op, diag, alpha, gb, x, nrhs) : 0.0;
    const Cost model =
        alpha_zero ? Cost{}
                   : trsm_cost(uplo, op, a.layout(), b.layout(), o, grid.row(), grid.col(), sizeof(T), is_complex_v<T>);
    const bool a_same =  // no memcmp of a rank's empty array (null data: UBSan)
        a_local.empty() || std::memcmp(a_local.data(), A0.data(), a_local.size() * sizeof(T)) == 0;
    CAPTURE(err);
    CAPTURE(got.t.words());
    CAPTURE(model.words);
    CAPTURE(got.t.msgs());
    CAPTURE(model.msgs);
    CAPTURE(got.extra);
    CAPTURE(model.extra_bytes);
    CHECK(test::all_ranks(err < 4.0, grid));
    CHECK(test::all_ranks(test::matches(got, model), grid));
    CHECK(test::all_ranks(a_same, grid));
    return what;
}

/// redistribute between two drawn layouts (a submatrix source), every op: exact data, traffic == model.
template <class T>
std::string redistribute_call(Draw& d, const Grid2D& grid) {
    const Op op = d.op();
    const index_t m = d.size(40), n = d.size(40), oi = d.between(0, 4), oj = d.between(0, 4);
    DistMatrix<T> big(grid, m + oi + d.between(0, 2), n + oj + d.between(0, 2), d.between(1, 8), d.between(1, 8),
                      d.pick(grid.p()), d.pick(grid.q()));
    const index_t dm = op == Op::N ? m : n, dn = op == Op::N ? n : m;
    DistMatrix<T> dst(grid, dm, dn, d.between(1, 9), d.between(1, 9), d.pick(grid.p()), d.pick(grid.q()));
    const std::string what = std::string("redistribute ") + op_char(op) + " m=" + str(m) + " n=" + str(n);
    INFO(what);
    test::randomize(big.view());
    const MatrixRef<T> src = big.sub(oi, oj, m, n);
    const auto s = gather(src);
    reset_traffic();

    redistribute(op, src, dst.view());

    const Traffic t = traffic();
    const auto got = gather(dst.view());
    bool same = true;
    if (grid.comm().rank() == 0)
        for (index_t j = 0; j < dn; ++j)
            for (index_t i = 0; i < dm; ++i) same = same && got[i + j * dm] == test::op_at(op, s, m, i, j);
    const Cost model = redistribute_cost(op, src.layout(), dst.layout(), grid.row(), grid.col());
    CAPTURE(t.words());
    CAPTURE(model.words);
    CAPTURE(t.msgs());
    CAPTURE(model.msgs);
    CHECK(test::all_ranks(same, grid));
    CHECK(test::all_ranks(t.words() == model.words && t.msgs() == model.msgs, grid));
    return what;
}

}  // namespace cala::soak

// cala::symm / cala::hemm with s slices (3D): A on layer 0 only (NaN in the other layers' copies:
// the replication must overwrite them), B and C split by columns (Left) or rows (Right) across the
// layers; every slice's C_h vs the sequential product; words, words received and messages per rank
// == symm3d_cost; words received summed over ranks == (s − 1)·(A's stored words) + 2(r − 1)·m·n;
// bad arguments -> cala::Error on every rank, nothing moved.
// (run as: mpiexec.mpich -n N test_symm3d, N in {4, 12}: 2 slices x 2 ranks (2DBC 1x2, 2x1;
// SBC r = 2), and on 12 ranks 2 x 6 (2DBC 2x3, TBC c = 2, extended SBC r = 4) and 6 x 2 (2DBC
// 1x2, SBC r = 2))

#include <doctest/doctest.h>

#include <random>

#include "support/helpers.hpp"
#include "support/symm.hpp"

using namespace cala;

namespace {

template <class T>
std::vector<T> random_global(std::mt19937& g, index_t m, index_t n) {  // same on every rank
    std::vector<T> x(static_cast<std::size_t>(m * n));
    for (auto& v : x) v = test::scalar<T>(g);
    return x;
}

// Rows [lo, lo + k) (rows = true) or columns of an r x c column-major matrix.
template <class T>
std::vector<T> part(const std::vector<T>& x, index_t r, index_t c, bool rows, index_t lo, index_t k) {
    std::vector<T> out;
    for (index_t j = 0; j < (rows ? c : k); ++j)
        for (index_t i = 0; i < (rows ? k : r); ++i) out.push_back(rows ? x[(lo + i) + j * r] : x[i + (lo + j) * r]);
    return out;
}

bool traffic_is(const Cost& model, const Traffic& t) {
    return t.words() == model.words && t.msgs() == model.msgs && t.words_recv == model.words_recv;
}

std::int64_t world_sum(std::int64_t v) {
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    return v;
}

// Words of A's stored triangle with blocks of nb (diagonal tiles whole).
std::int64_t stored_words(index_t m, index_t nb) {
    std::int64_t w = 0;
    const index_t nblk = ceil_div(m, nb);
    for (index_t j = 0; j < nblk; ++j)
        for (index_t i = j; i < nblk; ++i) w += std::min(nb, m - i * nb) * std::min(nb, m - j * nb);
    return w;
}

struct Case {
    Side side;
    Uplo uplo;
    index_t m, n, nb;
    bool herm, beta_zero;
};

// One 3D call on `sl`: 2DBC when sym is null (layers p x q), else the pattern `sym` on each layer.
// Returns the checks' verdict; `model_sum` and `measured_sum`: words received summed over ranks.
template <class T>
bool run_case(const Grid3D& sl, const Case& k, const SymmetricLayout* sym, std::mt19937& g) {
    const Grid2D& lg = sl.layer_grid();
    const int s = sl.c(), h = sl.layer();
    const bool left = k.side == Side::Left;
    const index_t m = k.m, lo = k.n * h / s, nh = k.n * (h + 1) / s - lo;
    const index_t bm = left ? m : k.n, bn = left ? k.n : m;
    auto ga = random_global<T>(g, m, m);
    for (index_t j = 0; j < m; ++j)
        for (index_t i = 0; i < m; ++i)
            if (k.uplo == Uplo::Lower ? i < j : i > j) ga[static_cast<std::size_t>(i + j * m)] = test::nan_value<T>();
    const auto gb = part(random_global<T>(g, bm, bn), bm, bn, !left, lo, nh);
    auto gc = part(random_global<T>(g, bm, bn), bm, bn, !left, lo, nh);
    if (k.beta_zero) std::fill(gc.begin(), gc.end(), test::nan_value<T>());
    const std::vector<T> nan_a(ga.size(), test::nan_value<T>());
    const T alpha = test::scalar<T>(g), beta = k.beta_zero ? T(0) : test::scalar<T>(g);
    const index_t hm = left ? m : nh, hn = left ? nh : m, ld_h = std::max<index_t>(hm, 1);
    const index_t xnb = 1 + g() % 3;
    const auto& ax = h == 0 ? ga : nan_a;
    double err = 0;
    Traffic t;
    Cost model;

    if (sym == nullptr) {
        DistMatrix<T> a(lg, m, m, k.nb, k.nb);
        const BlockCyclic bl = left ? BlockCyclic(a.layout().rows, Dist1D(nh, xnb, lg.q()))
                                    : BlockCyclic(Dist1D(nh, xnb, lg.p()), a.layout().cols);
        DistMatrix<T> b(lg, bl), c(lg, bl);
        scatter(ax.data(), m, a.view());
        scatter(gb.data(), ld_h, b.view());
        scatter(gc.data(), ld_h, c.view());
        reset_traffic();
        if (k.herm) hemm(k.side, k.uplo, alpha, a.view(), b.view(), beta, c.view(), sl);
        else symm(k.side, k.uplo, alpha, a.view(), b.view(), beta, c.view(), sl);
        t = traffic();
        model = symm3d_cost(k.side, k.uplo, a.layout(), b.layout(), lg.order(), s, h, lg.comm().rank(),
                            is_complex_v<T>);
        const auto out = gather(c.view());
        if (lg.comm().rank() == 0)
            err = test::symm_error(k.side, m, nh, alpha, test::full_of(ga, m, k.uplo, k.herm), gb, beta, gc, out);
    } else {
        DistMatrix<T> a2(lg, m, m, 2, 2), b2(lg, hm, hn, 2, 3), c2(lg, hm, hn, 3, 2);
        const TileLayout pl = TileLayout::paired(*sym, k.side, nh, xnb);
        TiledMatrix<T> a(lg, TileLayout::lower(*sym)), b(lg, pl), c(lg, pl);
        scatter(ax.data(), m, a2.view());
        scatter(gb.data(), ld_h, b2.view());
        scatter(gc.data(), ld_h, c2.view());
        redistribute(a2.view(), a);
        redistribute(b2.view(), b);
        redistribute(c2.view(), c);
        reset_traffic();
        if (k.herm) hemm(k.side, k.uplo, alpha, a, b, beta, c, sl);
        else symm(k.side, k.uplo, alpha, a, b, beta, c, sl);
        t = traffic();
        model = symm3d_cost(k.side, a.layout(), b.layout(), s, h, lg.comm().rank(), is_complex_v<T>);
        redistribute(c, c2.view());
        const auto out = gather(c2.view());
        if (lg.comm().rank() == 0)
            err = test::symm_error(k.side, m, nh, alpha, test::full_of(ga, m, k.uplo, k.herm), gb, beta, gc, out);
    }
    const int rs = sym ? static_cast<int>(sym->row_set(0).size()) : lg.p() + lg.q() - 1;
    const std::int64_t expect = m == 0 || k.n == 0 ? 0 : (s - 1) * stored_words(m, k.nb) + 2 * (rs - 1) * m * k.n;
    const std::int64_t measured = world_sum(t.words_recv), modeled = world_sum(model.words_recv);
    CAPTURE(s); CAPTURE(lg.p()); CAPTURE(lg.q()); CAPTURE(sym ? sym->describe() : std::string("2dbc"));
    CAPTURE(k.m); CAPTURE(k.n); CAPTURE(k.nb); CAPTURE(int(k.side)); CAPTURE(int(k.uplo)); CAPTURE(k.herm);
    CAPTURE(k.beta_zero); CAPTURE(err); CAPTURE(t.words()); CAPTURE(model.words); CAPTURE(measured); CAPTURE(expect);
    const Grid2D world(sl.comm());
    CHECK(test::all_ranks(err < 2.0, world));
    CHECK(test::all_ranks(traffic_is(model, t), world));
    CHECK(measured == modeled);
    CHECK(modeled == expect);
    return true;
}

std::vector<int> slice_counts(int nranks) {
    return nranks == 4 ? std::vector<int>{2} : std::vector<int>{2, 6};
}

}  // namespace

TEST_CASE_TEMPLATE("3D symm/hemm on 2DBC layers match the sequential product; traffic == model", T, double,
                   std::complex<double>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    std::mt19937 g(31);
    int trial = 0;
    for (const int s : slice_counts(world.size())) {
        const int lr = world.size() / s;
        for (int p = 1; p <= lr; ++p) {  // oversubscribed: the squarest layer only
            if (lr % p != 0 || (world.size() > 4 && p != Grid2D::squarest(lr).first)) continue;
            const Grid3D sl(world, p, lr / p, s);
            for (const index_t m : {1, 11})
                for (const Side side : {Side::Left, Side::Right})
                    for (const Uplo uplo : {Uplo::Lower, Uplo::Upper}) {
                        const Case k{side, uplo, m, 5, 3, is_complex_v<T> && trial % 2 == 1, trial % 3 == 0};
                        if (world.size() > 4 && trial++ % 3 != 0) continue;
                        run_case<T>(sl, k, nullptr, g);
                    }
        }
    }
}

TEST_CASE_TEMPLATE("3D symm/hemm on SBC/TBC layers match the sequential product; traffic == model", T, double,
                   std::complex<double>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    std::mt19937 g(57);
    int trial = 0;
    for (const int s : slice_counts(world.size())) {
        const Grid3D sl = symm_slices(world, s);
        for (const index_t m : {7, 20}) {
            const index_t nb = m == 7 ? 2 : 3;
            std::vector<SymmetricLayout> syms;
            try {
                for (const auto& ch : choose_symmetric_layout(world.size() / s, m, nb))
                    syms.push_back(make_symmetric_layout(ch, m, nb));
            } catch (const Error&) {  // no pattern on 4 ranks: 12 = 3 slices of 4 is not tried
            }
            for (const auto& sym : syms)
                for (const index_t n : {1, 6})
                    for (const Side side : {Side::Left, Side::Right}) {
                        const Case k{side, Uplo::Lower, m, n, nb, is_complex_v<T> && trial % 2 == 1, trial % 3 == 0};
                        if (world.size() > 4 && trial++ % 2 != 0) continue;
                        run_case<T>(sl, k, &sym, g);
                    }
        }
    }
}

TEST_CASE("3D symm: bad arguments are a cala::Error on every rank, nothing moves") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const auto e_div = test::error_message([&] { symm_slices(world, world.size() + 1); });
    CHECK(e_div.find("symm_slices: slices is ") != std::string::npos);
    CHECK(e_div.find("does not divide the") != std::string::npos);

    const Grid3D sl = symm_slices(world, 2);
    const Grid2D& lg = sl.layer_grid();
    const Grid2D wg(world);
    const auto sym = make_symmetric_layout(choose_symmetric_layout(lg.comm().size(), 12, 2).front(), 12, 2);
    TiledMatrix<double> a(lg, TileLayout::lower(sym)), b(lg, TileLayout::paired(sym, Side::Left, 4, 2));
    TiledMatrix<double> bw(lg, TileLayout::paired(sym, Side::Left, sl.layer() == 1 ? 5 : 4, 2));
    DistMatrix<double> a2(wg, 12, 12, 2, 2), b2(wg, 12, 4, 2, 2);
    const auto before = gather(a2.view());
    reset_traffic();

    const auto e_upper = test::error_message([&] { symm(Side::Left, Uplo::Upper, 1.0, a, b, 0.0, b, sl); });
    const auto e_layer = test::error_message([&] { symm(Side::Left, Uplo::Lower, 1.0, a2.view(), b2.view(), 0.0, b2.view(), sl); });
    // B is 4 wide on layer 0 but C differs from B on layer 1 only: every rank still throws.
    const auto e_c = test::error_message([&] { symm(Side::Left, Uplo::Lower, 1.0, a, b, 0.0, sl.layer() == 1 ? bw : b, sl); });

    CHECK(e_upper.find("uplo is Upper but A's layout") != std::string::npos);
    CHECK(e_layer.find("C does not live on this rank's layer of slices") != std::string::npos);
    CHECK(e_c.find("C's layout differs from B's") != std::string::npos);
    CHECK(traffic().words() == 0);
    CHECK(gather(a2.view()) == before);
}

TEST_CASE("3D symm model: words received summed over ranks, s slices against one (printed)") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const index_t m = 96, nb = 2;
    for (const index_t n : {96, 960})
        for (int s = 1; s <= world.size(); ++s) {
            if (world.size() % s != 0) continue;
            const int lr = world.size() / s;
            auto sum = [&](auto cost_of) {
                std::int64_t w = 0;
                for (int h = 0; h < s; ++h)
                    for (int r = 0; r < lr; ++r) w += cost_of(h, r, n * (h + 1) / s - n * h / s).words_recv;
                return w;
            };
            const auto [p, q] = Grid2D::squarest(lr);
            const BlockCyclic a(m, m, nb, nb, p, q);
            const std::int64_t w2 = sum([&](int h, int r, index_t nh) {
                return symm3d_cost(Side::Left, Uplo::Lower, a, BlockCyclic(m, nh, nb, nb, p, q), GridOrder::RowMajor, s,
                                   h, r, false);
            });
            const std::int64_t rep = (s - 1) * stored_words(m, nb);
            MESSAGE("symm3d m=", m, " n=", n, " nb=", nb, " P=", world.size(), " slices=", s, ": 2dbc ", p, "x", q,
                    " words received (sum) ", w2, " = replication ", rep, " + symm ", w2 - rep);
            CHECK(w2 == rep + 2 * (p + q - 2) * m * n);
            for (const auto& sym : [&] {
                     std::vector<SymmetricLayout> v;
                     try {
                         for (const auto& ch : choose_symmetric_layout(lr, m, nb)) v.push_back(make_symmetric_layout(ch, m, nb));
                     } catch (const Error&) {
                     }
                     return v;
                 }()) {
                const std::int64_t w = sum([&](int h, int r, index_t nh) {
                    return symm3d_cost(Side::Left, TileLayout::lower(sym), TileLayout::paired(sym, Side::Left, nh, nb),
                                       s, h, r, false);
                });
                const auto rs = static_cast<std::int64_t>(sym.row_set(0).size());
                MESSAGE("symm3d m=", m, " n=", n, " nb=", nb, " P=", world.size(), " slices=", s, ": ", sym.describe(),
                        " words received (sum) ", w, " = replication ", rep, " + symm ", w - rep);
                CHECK(w == rep + 2 * (rs - 1) * m * n);
            }
        }
}

// cala::syrk / cala::herk on 2DBC (every grid) and on SBC/TBC: the stored triangle of C vs the
// sequential alpha·A·op(A) + beta·C, the other strict triangle untouched (NaN there stays NaN),
// beta = 0 with NaN in C, herk's real diagonal; words and messages per rank == model.
// (run as: mpiexec.mpich -n N test_syrk, N in {1, 2, 3, 6, 8})

#include <doctest/doctest.h>

#include <limits>
#include <random>

#include "support/helpers.hpp"

using namespace cala;

namespace {

std::vector<std::pair<int, int>> grids(int n) {
    std::vector<std::pair<int, int>> out;
    for (int p = 1; p <= n; ++p)
        if (n % p == 0) out.emplace_back(p, n / p);
    return out;
}

template <class T>
T nan_value() {
    return T(std::numeric_limits<real_t<T>>::quiet_NaN());
}

template <class T>
real_t<T> real_scalar(std::mt19937& g) {
    return std::uniform_real_distribution<real_t<T>>(-1, 1)(g);
}

bool traffic_is(const Cost& model, const Traffic& t) {
    return t.words() == model.words && t.msgs() == model.msgs && t.words_recv == model.words_recv;
}

// C (n x n) with NaN on the strict triangle that is not stored (and everywhere when beta = 0).
template <class T>
void fill_c(const DistMatrix<T>& c, Uplo uplo, bool all_nan) {
    test::randomize(c.view());
    const BlockCyclic& l = c.layout();
    for (index_t jl = 0; jl < c.n_loc(); ++jl)
        for (index_t il = 0; il < c.m_loc(); ++il) {
            const index_t i = l.rows.to_global(il, c.grid().row()), j = l.cols.to_global(jl, c.grid().col());
            if (all_nan || (uplo == Uplo::Lower ? i < j : i > j)) c.local(il, jl) = nan_value<T>();
        }
}

// Rank 0: stored triangle vs the reference (error ratio), the other strict triangle still NaN.
template <class T>
std::pair<double, bool> syrk_check(Uplo uplo, bool herm, index_t n, index_t k, T alpha, const std::vector<T>& a, T beta,
                                   const std::vector<T>& c, const std::vector<T>& out) {
    const Op op = herm ? Op::C : Op::T;
    std::vector<T> c0 = c;
    for (auto& v : c0)
        if (v != v) v = T(0);  // the NaN triangle is not part of the product
    if (herm)  // herk takes the imaginary parts of C's diagonal as zero (as BLAS does)
        for (index_t i = 0; i < n; ++i) c0[static_cast<std::size_t>(i + i * n)] = T(std::real(c0[static_cast<std::size_t>(i + i * n)]));
    const auto ref = test::reference_gemm(Op::N, op, n, n, k, alpha, a, std::max<index_t>(n, 1), a,
                                          std::max<index_t>(n, 1), beta, c0);
    std::vector<T> got(out.size()), want(out.size());
    bool untouched = true;
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < n; ++i) {
            const std::size_t x = static_cast<std::size_t>(i + j * n);
            const bool stored = uplo == Uplo::Lower ? i >= j : i <= j;
            if (stored) got[x] = out[x], want[x] = ref.value[x];
            else untouched = untouched && out[x] != out[x];
            if (herm && i == j) untouched = untouched && std::imag(std::complex<double>(out[x])) == 0;
        }
    test::GemmReference<T> r{want, ref.scale};
    return {test::gemm_error(got, r, k), untouched};
}

std::vector<SymmetricLayout> symmetric_layouts(int nranks, index_t n, index_t nb) {
    std::vector<SymmetricLayout> out;
    for (const auto& c : choose_symmetric_layout(nranks, n, nb)) out.push_back(make_symmetric_layout(c, n, nb));
    return out;
}

}  // namespace

TEST_CASE_TEMPLATE("syrk/herk on 2DBC and on SBC/TBC match the sequential product; traffic == model", T, double,
                   std::complex<double>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    std::mt19937 g(31);
    int trial = 0;
    for (auto [p, q] : grids(world.size())) {
        const Grid2D grid(world, p, q);
        for (const index_t n : {0, 1, 8, 17})
            for (const index_t k : {0, 3, 7})
                for (const Uplo uplo : {Uplo::Lower, Uplo::Upper}) {
                    const bool herm = is_complex_v<T> && trial % 2 == 1, beta_zero = trial % 3 == 0;
                    if (world.size() > 2 && trial % 3 != 0) { ++trial; continue; }  // oversubscribed: a third
                    ++trial;
                    const index_t nb = 1 + g() % 4;
                    DistMatrix<T> c(grid, n, n, nb, nb, static_cast<int>(g() % p), static_cast<int>(g() % q));
                    DistMatrix<T> a(grid, BlockCyclic(c.layout().rows, Dist1D(k, 1 + g() % 3, q)));
                    test::randomize(a.view());
                    fill_c(c, uplo, beta_zero);
                    const T alpha = T(real_scalar<T>(g)), beta = beta_zero ? T(0) : T(real_scalar<T>(g));
                    const auto ga = gather(a.view()), gc = gather(c.view());
                    reset_traffic();

                    if (herm) herk(uplo, std::real(alpha), a.view(), std::real(beta), c.view());
                    else syrk(uplo, alpha, a.view(), beta, c.view());

                    const Traffic t = traffic();
                    const auto out = gather(c.view());
                    auto [err, untouched] = world.rank() == 0 ? syrk_check(uplo, herm, n, k, alpha, ga, beta, gc, out)
                                                              : std::pair<double, bool>{0, true};
                    const Cost model = syrk_cost(uplo, a.layout(), c.layout(), grid.order(), world.rank(), is_complex_v<T>);
                    CAPTURE(p); CAPTURE(q); CAPTURE(n); CAPTURE(k); CAPTURE(nb); CAPTURE(int(uplo)); CAPTURE(herm);
                    CAPTURE(err); CAPTURE(t.words()); CAPTURE(model.words);
                    CHECK(test::all_ranks(err < 2.0 && untouched, grid));
                    CHECK(test::all_ranks(k == 0 ? t.words() == 0 : traffic_is(model, t), grid));
                }
    }
    const Grid2D grid(world);
    for (const index_t n : {0, 5, 26})
        for (const index_t nb : {1, 3})
            for (const auto& sym : symmetric_layouts(world.size(), n, nb))
                for (const index_t k : {0, 4}) {
                    const bool herm = is_complex_v<T> && trial % 2 == 1, beta_zero = trial % 3 == 0;
                    ++trial;
                    DistMatrix<T> c2(grid, n, n, 2, 2), a2(grid, n, k, 3, 2);
                    fill_c(c2, Uplo::Lower, beta_zero);
                    test::randomize(a2.view());
                    const TileLayout cl = TileLayout::lower(sym), al = TileLayout::paired(sym, Side::Left, k, 1 + g() % 3);
                    TiledMatrix<T> c(grid, cl), a(grid, al);
                    redistribute(c2.view(), c);
                    redistribute(a2.view(), a);
                    const T alpha = T(real_scalar<T>(g)), beta = beta_zero ? T(0) : T(real_scalar<T>(g));
                    const auto ga = gather(a2.view()), gc = gather(c2.view());
                    reset_traffic();

                    if (herm) herk(Uplo::Lower, std::real(alpha), a, std::real(beta), c);
                    else syrk(Uplo::Lower, alpha, a, beta, c);

                    const Traffic t = traffic();
                    redistribute(c, c2.view());  // the lower tiles (NaN above the diagonal travels and stays)
                    const auto out = gather(c2.view());
                    auto [err, untouched] = world.rank() == 0 ? syrk_check(Uplo::Lower, herm, n, k, alpha, ga, beta, gc, out)
                                                              : std::pair<double, bool>{0, true};
                    const Cost model = syrk_cost(al, cl, world.rank(), is_complex_v<T>);
                    CAPTURE(sym.describe()); CAPTURE(n); CAPTURE(k); CAPTURE(nb); CAPTURE(herm); CAPTURE(err);
                    CHECK(test::all_ranks(err < 2.0 && untouched, grid));
                    CHECK(test::all_ranks(traffic_is(model, t), grid));
                }
}

TEST_CASE("syrk model: words received summed over ranks = (s - 1)·n·k") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const index_t n = 100, k = 6;
    for (const auto& sym : symmetric_layouts(world.size(), n, 2)) {
        const TileLayout cl = TileLayout::lower(sym), al = TileLayout::paired(sym, Side::Left, k, 2);
        std::int64_t q = 0;
        for (int r = 0; r < world.size(); ++r) q += syrk_cost(al, cl, r, false).words_recv;
        CHECK(q == (static_cast<std::int64_t>(sym.row_set(0).size()) - 1) * n * k);
    }
}

TEST_CASE("syrk: bad arguments are a cala::Error on every rank") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    DistMatrix<double> c(grid, 10, 10, 2, 2), a(grid, 10, 4, 3, 2);
    const auto sym = symmetric_layouts(world.size(), 10, 2).front();
    TiledMatrix<double> ct(grid, TileLayout::lower(sym)), at(grid, TileLayout::paired(sym, Side::Right, 4, 2));
    reset_traffic();

    const auto e_rows = test::error_message([&] { syrk(Uplo::Lower, 1.0, a.view(), 0.0, c.view()); });
    const auto e_upper = test::error_message([&] { syrk(Uplo::Upper, 1.0, at, 0.0, ct); });
    const auto e_side = test::error_message([&] { syrk(Uplo::Lower, 1.0, at, 0.0, ct); });

    CHECK(e_rows.find("A's rows are not distributed like C's") != std::string::npos);
    CHECK(e_upper.find("stores the lower half only") != std::string::npos);
    CHECK(e_side.find("A's layout is not TileLayout::paired") != std::string::npos);
    CHECK(traffic().words() == 0);
}

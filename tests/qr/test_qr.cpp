// cala::geqrf and cala::ormqr(Left) on every grid of the world size (1 x P, P x 1 and the
// squarest; 2 x 3 and 3 x 2 on 6 ranks): every type; tall (the TSQR panels), square and wide
// matrices; empty, 1 x 1, sizes nb does not divide, views at and inside block boundaries,
// non-zero sources; zero and repeated columns; lookahead 0 and 1. Checked against LAPACK on
// gathered data (support/qr_case.hpp), traffic == the model exactly on every rank.
// (run as: mpiexec.mpich -n N test_qr, N in {1, 2, 3, 4, 6})

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "support/qr_case.hpp"

using namespace cala;

namespace {

std::vector<Grid2D> grids_of(const Comm& world) {
    const int n = world.size();
    std::vector<Grid2D> out;
    out.emplace_back(world, 1, n);
    if (n > 1) out.emplace_back(world, n, 1);
    if (n == 4) out.emplace_back(world, 2, 2);
    if (n == 6) out.emplace_back(world, 2, 3), out.emplace_back(world, 3, 2);
    return out;
}

const test::QrCase kCases[] = {
    {0, 0, 4, 0, 0, 0, 0},      {0, 5, 4, 0, 0, 0, 0},    {6, 0, 4, 0, 0, 0, 0},   {1, 1, 4, 0, 0, 0, 0},
    {57, 9, 4, 0, 0, 0, 0},     {61, 13, 5, 1, 1, 0, 0},  {40, 40, 8, 0, 0, 0, 0}, {37, 37, 4, 1, 0, 3, 3},
    {23, 41, 6, 0, 1, 0, 0},    {9, 30, 4, 0, 0, 4, 8},   {50, 20, 4, 1, 1, 4, 4}, {3, 2, 8, 0, 0, 0, 0},
    {45, 17, 6, 0, 0, 7, 13},
};

// On p x 1 the planner moves the matrix onto one process row (QrVariant::OneRow): TwoD there too,
// so that the TSQR panels are run.
std::vector<QrVariant> variants(const Grid2D& grid) {
    if (grid.q() == 1 && grid.p() > 1) return {QrVariant::Auto, QrVariant::TwoD};
    return {QrVariant::Auto};
}

}  // namespace

TEST_CASE_TEMPLATE("geqrf is LAPACK's factorization and ormqr applies its Q", T, float, double,
                   std::complex<float>, std::complex<double>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    for (const Grid2D& grid : grids_of(world))
        for (QrVariant v : variants(grid))
            for (int la : {1, 0})
                for (const test::QrCase& c : kCases) test::run_qr_case<T>(grid, c, {.lookahead = la, .variant = v});
}

TEST_CASE_TEMPLATE("geqrf with delayed trailing updates on one process row: every group size", T, double,
                   std::complex<double>, float) {
    // QrOptions::delay: groups of 2, 3 and 5 panels (the last group shorter), 1 (none) on a
    // 1 x P grid whose nb would otherwise choose 4; on P x 1 the option is ignored. Zero columns
    // inside a group and at its first panel.
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    for (const Grid2D& grid : grids_of(world))
        for (int delay : {1, 2, 3, 5})
            for (int la : {1, 0}) {
                for (const test::QrCase& c : kCases) test::run_qr_case<T>(grid, c, {.lookahead = la, .delay = delay});
                test::run_qr_case<T>(grid, {37, 23, 4, 0, 0, 0, 0, 3, 4, -1, 10}, {.lookahead = la, .delay = delay});
                test::run_qr_case<T>(grid, {29, 29, 3, 0, 0, 0, 0, 3, 13, -1, 28}, {.lookahead = la, .delay = delay});
            }
}

TEST_CASE("the QR plan: OneRow on p x 1 where the copy fits, TwoD elsewhere") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const int np = world.size();
    const BlockCyclic col(100, 80, 8, 8, np, 1), row(100, 80, 8, 8, 1, np);
    const std::size_t e = sizeof(double);
    const QrVariant expect = np > 1 ? QrVariant::OneRow : QrVariant::TwoD;
    CHECK(geqrf_variant(col, {}, e) == expect);
    CHECK(geqrf_variant(col, {.variant = QrVariant::TwoD}, e) == QrVariant::TwoD);
    CHECK(geqrf_variant(col, {.memory_limit_bytes = 1000}, e) == QrVariant::TwoD);  // the copy does not fit
    CHECK(geqrf_variant(col, {.variant = QrVariant::OneRow, .memory_limit_bytes = 1000}, e) == expect);
    CHECK(geqrf_variant(row, {.variant = QrVariant::OneRow}, e) == QrVariant::TwoD);
    // The delayed updates follow the layout factored: 128 / nb = 16 -> 4 panels a group on one row.
    CHECK(geqrf_delay(col, {}, e) == 4);
    CHECK(geqrf_delay(col, {.variant = QrVariant::TwoD}, e) == (np > 1 ? 1 : 4));
    CHECK(std::string(to_string(QrVariant::OneRow)) == "1xP");
    if (np > 1) {
        const Grid2D grid(world, np, 1);
        test::run_qr_case<double>(grid, {37, 23, 4, 0, 0, 0, 0}, {.memory_limit_bytes = 1000});
        test::run_qr_case<double>(grid, {41, 17, 5, 1, 1, 2, 2}, {.variant = QrVariant::OneRow, .memory_limit_bytes = 1000});
    }
}

TEST_CASE_TEMPLATE("geqrf on zero and repeated columns: LAPACK's tau = 0 on every grid", T, double,
                   std::complex<double>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    for (const Grid2D& grid : grids_of(world))
        for (QrVariant v : variants(grid)) {
            test::run_qr_case<T>(grid, {48, 12, 4, 0, 0, 0, 0, 3, 5, -1}, {.variant = v});
            test::run_qr_case<T>(grid, {48, 12, 4, 0, 0, 0, 0, 3, -1, 6}, {.variant = v});
            test::run_qr_case<T>(grid, {30, 30, 4, 0, 0, 0, 0, 3, 0, 9}, {.variant = v});
            // Zero columns at a panel's first column and inside panels, sizes nb does not divide,
            // a view, lookahead 0 and 1.
            for (int la : {1, 0}) {
                test::run_qr_case<T>(grid, {37, 23, 4, 0, 0, 0, 0, 3, 4, -1, 10}, {.lookahead = la, .variant = v});
                test::run_qr_case<T>(grid, {41, 17, 5, 1, 1, 2, 2, 3, 0, -1, 7}, {.lookahead = la, .variant = v});
                test::run_qr_case<T>(grid, {29, 29, 3, 0, 0, 0, 0, 3, 13, -1, 28}, {.lookahead = la, .variant = v});
            }
        }
}

TEST_CASE_TEMPLATE("geqrf and ormqr reject bad input on every rank before moving anything", T, double,
                   std::complex<float>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    for (const Grid2D& grid : grids_of(world)) {
        DistMatrix<T> a(grid, 20, 12, 4, 4);
        DistMatrix<T> rect(grid, 20, 12, 4, 5);
        test::randomize(a.view());
        test::randomize(rect.view());
        const std::vector<T> a0(a.data(), a.data() + a.m_loc() * a.n_loc());
        const std::vector<T> r0(rect.data(), rect.data() + rect.m_loc() * rect.n_loc());
        std::vector<T> tau = {T(7)};
        const MatrixRef<T> bad_ld(grid, a.layout(), a.data(), a.m_loc() > 1 ? a.m_loc() - 1 : 0);
        reset_traffic();

        const std::string e_rect = test::error_message([&] { geqrf(rect.view(), tau); });
        const std::string e_view = test::error_message([&] { geqrf(a.sub(1, 2, 8, 8), tau); });
        const std::string e_ld = test::error_message([&] { geqrf(bad_ld, tau); });
        const std::string e_la = test::error_message([&] { geqrf(a.view(), tau, {.lookahead = -1}); });
        const std::string e_delay = test::error_message([&] { geqrf(a.view(), tau, {.delay = -2}); });
        const std::string e_variant =
            test::error_message([&] { geqrf(a.view(), tau, {.variant = static_cast<QrVariant>(9)}); });
        const std::string e_limit = test::error_message([&] { geqrf(a.view(), tau, {.memory_limit_bytes = -1}); });
        std::vector<T> t12(12, T(0.5));
        std::vector<T> t13(13, T(0.5));
        DistMatrix<T> c(grid, 20, 3, 4, 4);
        DistMatrix<T> c_off(grid, 20, 3, 4, 4, grid.p() > 1 ? 1 : 0, 0);
        DistMatrix<T> c_short(grid, 19, 3, 4, 4);
        const std::string e_right = test::error_message([&] { ormqr(Side::Right, Op::N, a.view(), t12, c.view()); });
        const std::string e_k = test::error_message([&] { ormqr(Side::Left, Op::N, a.view(), t13, c.view()); });
        const std::string e_m = test::error_message([&] { ormqr(Side::Left, Op::N, a.view(), t12, c_short.view()); });
        const std::string e_t = is_complex_v<T> ? test::error_message([&] {
            ormqr(Side::Left, Op::T, a.view(), t12, c.view());
        }) : std::string("op T");
        const std::string e_rows =
            grid.p() > 1 ? test::error_message([&] { ormqr(Side::Left, Op::N, a.view(), t12, c_off.view()); })
                         : std::string("ormqr: (one process row)");
        const Traffic t = traffic();

        CHECK(test::all_ranks(e_rect.find("geqrf: A must have square blocks") == 0, grid));
        CHECK(test::all_ranks(e_view.find("line up with its diagonal") != std::string::npos, grid));
        CHECK(test::all_ranks(a.n_loc() == 0 || e_ld.find("leading dimension") != std::string::npos, grid));
        CHECK(test::all_ranks(e_la.find("lookahead") != std::string::npos, grid));
        CHECK(test::all_ranks(e_delay.find("delay must be >= 0") != std::string::npos, grid));
        CHECK(test::all_ranks(e_variant.find("not a QrVariant") != std::string::npos, grid));
        CHECK(test::all_ranks(e_limit.find("memory_limit_bytes must be >= 0") != std::string::npos, grid));
        CHECK(test::all_ranks(e_right.find("C has 3 columns (side Right)") != std::string::npos, grid));
        CHECK(test::all_ranks(e_k.find("13 reflectors") != std::string::npos, grid));
        CHECK(test::all_ranks(e_m.find("C has 19") != std::string::npos, grid));
        CHECK(test::all_ranks(e_t.find("op T") != std::string::npos, grid));
        CHECK(test::all_ranks(e_rows.find("ormqr: ") == 0, grid));
        CHECK(test::all_ranks(t.words() == 0 && t.msgs() == 0, grid));
        CHECK(test::all_ranks(tau.size() == 1 && tau[0] == T(7), grid));
        CHECK(test::all_ranks(std::equal(a0.begin(), a0.end(), a.data()), grid));
        CHECK(test::all_ranks(std::equal(r0.begin(), r0.end(), rect.data()), grid));
    }
}

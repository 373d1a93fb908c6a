// Hostile inputs to grids, matrices, redistribute, gather and scatter.
// (run as: mpiexec.mpich -n N test_hostile, N in {2, 3, 4})

#include "hostile/hostile.hpp"

using namespace cala;
using hostile::Local;
using hostile::Row;
using hostile::world;

TEST_CASE("hostile: Grid2D and Grid3D construction") {
    const int np = world().size();
    const bool last = world().rank() == np - 1;
    hostile::Guard none;

    hostile::run_table(world(), "Grid2D", {
        {"p*q != size", [&] { Grid2D(world(), 1, np + 1); }, "does not match a communicator of"},
        {"p = 0", [&] { Grid2D(world(), 0, np); }, "a 0 x"},
        {"q < 0", [&] { Grid2D(world(), np, -1); }, "x -1 grid"},
        {"ranks disagree on p x q", [&] { Grid2D(world(), last ? np : 1, last ? 1 : np); }, "different arguments"},
        {"ranks disagree on the order",
         [&] { Grid2D(world(), 1, np, last ? GridOrder::ColumnMajor : GridOrder::RowMajor); }, "different arguments"},
        {"p*q wrong on one rank only", [&] { Grid2D(world(), 1, last ? np + 1 : np); }, "does not match"},
    }, none);

    hostile::run_table(world(), "Grid3D", {
        {"c = 0", [&] { Grid3D(world(), 1, 1, 0); }, "1 x 1 x 0 grid does not fit"},
        {"p*q*c > size", [&] { Grid3D(world(), 1, np, 2); }, "does not fit a communicator of"},
        {"negative q", [&] { Grid3D(world(), 1, -2, 1); }, "1 x -2 x 1"},
        {"ranks disagree on c", [&] { Grid3D(world(), 1, 1, last ? 2 : 1); }, "different arguments"},
        {"c too large on one rank only", [&] { Grid3D(world(), 1, 1, last ? np + 1 : 1); }, "does not fit"},
    }, none);
}

TEST_CASE("hostile: DistMatrix construction and sub-views (local, no communication)") {
    const Grid2D g(world());
    DistMatrix<double> x(g, 9, 7, 2, 3);
    hostile::Guard guard;
    guard.watch(x.data(), static_cast<std::size_t>(x.m_loc() * x.n_loc()) * sizeof(double));

    hostile::run_table(world(), "DistMatrix", {
        {"m < 0", [&] { DistMatrix<double>(g, -3, 4, 2, 2); }, "rows: size is -3"},
        {"n < 0", [&] { DistMatrix<float>(g, 3, -4, 2, 2); }, "columns: size is -4"},
        {"mb = 0", [&] { DistMatrix<double>(g, 4, 4, 0, 2); }, "rows: block size is 0"},
        {"nb < 0", [&] { DistMatrix<double>(g, 4, 4, 2, -1); }, "columns: block size is -1"},
        {"rsrc >= p", [&] { DistMatrix<double>(g, 4, 4, 2, 2, g.p(), 0); }, "rows: source process is"},
        {"csrc < 0", [&] { DistMatrix<double>(g, 4, 4, 2, 2, 0, -1); }, "columns: source process is -1"},
        {"layout for another grid shape", [&] { DistMatrix<double>(g, BlockCyclic(4, 4, 2, 2, g.p() + 1, g.q())); },
         "layout is for a"},
        {"sub past the rows", [&] { (void)x.sub(5, 0, 5, 2); }, "submatrix: range [5, 10) is outside [0, 9)"},
        {"sub with negative n", [&] { (void)x.sub(2, 2, 4, -1); }, "submatrix: range [2, 1) is outside [0, 7)"},
        {"sub at a negative offset", [&] { (void)x.sub(-1, 0, 2, 2); }, "submatrix: range [-1, 1) is outside [0, 9)"},
    }, guard);
}

TEST_CASE("hostile: redistribute, gather and scatter") {
    const Grid2D g(world());
    const Grid2D other(world(), world().size(), 1);
    const bool last = world().rank() == world().size() - 1;
    const int np = world().size();
    Local<double> src(g, 11, 9, 3), dst(g, 11, 9, 2), dst_t(g, 9, 11, 4);
    Local<double> on_other(other, BlockCyclic(11, 9, 3, 3, np, 1));
    std::vector<double> whole(11 * 9 + 5, 1.5);
    hostile::Guard guard;
    for (auto* l : {&src, &dst, &dst_t, &on_other}) guard.watch(l->store);
    guard.watch(whole);
    const BlockCyclic wrong_grid(11, 9, 3, 3, g.p() + 1, g.q());
    const MatrixRef<double> bad_layout(g, wrong_grid, src.data(), src.ld);
    const MatrixRef<double> null_last(g, src.ref.layout(), last ? nullptr : src.data(), src.ld);
    const MatrixRef<double> short_ld(g, dst.ref.layout(), dst.data(), src.m_loc > 1 ? src.m_loc - 1 : -1);
    const MatrixRef<double> neg_ld(g, dst.ref.layout(), dst.data(), -5);
    // One rank believes dst is 11 x 10 (its local array is large enough for that).
    Local<double> dst10(g, 11, 10, 2);
    guard.watch(dst10.store);
    const MatrixRef<double> dst_n(g, last ? dst10.ref.layout() : dst.ref.layout(), last ? dst10.data() : dst.data(),
                                  last ? dst10.ld : dst.ld);
    Local<double> dst_nb(g, BlockCyclic(11, 9, 5, 5, g.p(), g.q()));
    guard.watch(dst_nb.store);
    const MatrixRef<double> dst_mb = last ? dst_nb.ref : dst.ref;
    const auto red = [](Op op, const MatrixRef<double>& s, const MatrixRef<double>& d) {
        return [=] { redistribute(op, s, d); };
    };

    hostile::run_table(world(), "redistribute", {
        {"dst of another shape", red(Op::N, src.ref, dst_t.ref), "op(src) is 11 x 9 but dst is 9 x 11"},
        {"op = T with dst untransposed", red(Op::T, src.ref, dst.ref), "op(src) is 9 x 11 but dst is 11 x 9"},
        {"src on another grid", red(Op::N, on_other.ref, dst.ref), "src lives on a different process grid"},
        {"layout for another grid shape", red(Op::N, bad_layout, dst.ref), "src has a layout for a"},
        {"src nullptr on one rank", red(Op::N, null_last, dst.ref), "src is a null pointer"},
        {"ld < local rows", red(Op::N, src.ref, short_ld), "dst has leading dimension"},
        {"negative ld", red(Op::N, src.ref, neg_ld), "dst has leading dimension -5"},
        {"ranks disagree on op", red(last ? Op::T : Op::N, src.ref, last ? dst_t.ref : dst.ref), "different arguments"},
        {"ranks disagree on dst's n", red(Op::N, src.ref, dst_n), "but dst is 11 x 10"},
        {"ranks disagree on dst's block size", red(Op::N, src.ref, dst_mb), "different arguments"},
    }, guard);

    hostile::run_table(world(), "gather", {
        {"root < 0", [&] { (void)gather(src.ref, -1); }, "gather: root is -1"},
        {"root >= size", [&] { (void)gather(src.ref, np); }, "gather: root is " + std::to_string(np)},
        {"ranks disagree on root", [&] { (void)gather(src.ref, last ? 1 : 0); }, "different arguments"},
        {"root out of range on one rank", [&] { (void)gather(src.ref, last ? np + 3 : 0); }, "gather: root is"},
        {"nullptr with local data on one rank", [&] { (void)gather(null_last, 0); }, "is a null pointer"},
        {"ld < local rows", [&] { (void)gather(short_ld, 0); }, "leading dimension"},
    }, guard);

    const bool root = world().rank() == 0;
    hostile::run_table(world(), "scatter", {
        {"ldg < m on the root", [&] { scatter(whole.data(), 10, dst.ref, 0); }, "scatter: ldg is 10"},
        {"nullptr on the root", [&] { scatter<double>(nullptr, 11, dst.ref, 0); }, "scatter: global is a null pointer"},
        {"root >= size", [&] { scatter(whole.data(), 11, dst.ref, np); }, "scatter: root is"},
        {"ranks disagree on root", [&] { scatter(whole.data(), 11, dst.ref, last ? 1 : 0); }, "different arguments"},
        {"ldg < m on a non-root rank is ignored", [&] { scatter(whole.data(), root ? 11 : -7, dst.ref, 0); }, "",
         [&] { return dst.padding_untouched(); }},
    }, guard);
}

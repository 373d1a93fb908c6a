// cala::ormqr(Side::Right): C := C·op(Q) for the Q of cala::geqrf, every op, on every grid of
// the world size (1 x P, P x 1, 2 x 2 on 4 ranks, 2 x 3 and 3 x 2 on 6): sizes nb does not divide,
// k < n, empty C and k = 0, C's rows in other blocks than its columns, C's columns from another
// source process and block index than A's rows, views inside larger parents. Against LAPACK's
// ?ormqr on gathered data (fresh random inputs), op then its inverse back to C, the parents
// outside the views untouched, traffic == ormqr_cost exactly and workspace <= the model on every
// rank. (run as: mpiexec.mpich -n N test_ormqr_right, N in {1, 2, 3, 4, 6})

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

struct RightCase {
    index_t m, n, ka, k, nb;  // C is m x n; A is n x ka, its first k reflectors applied
    index_t mbc;              // C's row block
    index_t off;              // A's view at (off, off); C's at (1, off + nb)
    int src;                  // A from process (src, src), C from (src + 1, src + 1)
};

const RightCase kCases[] = {
    {17, 23, 23, 23, 4, 3, 0, 0}, {9, 30, 12, 9, 4, 5, 0, 1}, {25, 13, 13, 13, 5, 4, 2, 0},
    {31, 40, 7, 7, 6, 6, 3, 1},   {4, 6, 9, 6, 8, 2, 0, 0},   {1, 1, 1, 1, 4, 4, 0, 0},
    {0, 12, 12, 12, 4, 4, 0, 0},  {8, 0, 5, 0, 4, 4, 0, 0},   {8, 12, 12, 0, 4, 4, 0, 0},
    {40, 37, 20, 18, 4, 7, 1, 1},
};

template <class T>
void run_right(const Grid2D& grid, const RightCase& rc, Op op) {
    const index_t nb = rc.nb, off = rc.off;
    const int p = grid.p(), q = grid.q();
    DistMatrix<T> ap(grid, rc.n + off, rc.ka + off, nb, nb, rc.src % p, rc.src % q);
    test::randomize(ap.view());
    const MatrixRef<T> a = ap.sub(off, off, rc.n, rc.ka);
    std::vector<T> tau;
    geqrf(a, tau);
    tau.resize(static_cast<std::size_t>(rc.k));
    const MatrixRef<T> av = a.sub(0, 0, rc.n, rc.k);
    const index_t cm = rc.m + 1, cn = rc.n + off + nb;
    DistMatrix<T> cp(grid, cm, cn, rc.mbc, nb, (rc.src + 1) % p, (rc.src + 1) % q);
    test::randomize(cp.view());
    const MatrixRef<T> cv = cp.sub(1, off + nb, rc.m, rc.n);
    const std::vector<T> fa = gather(ap.view()), c0 = gather(cp.view());
    const Op inv = op == Op::N ? (is_complex_v<T> ? Op::C : Op::T) : Op::N;

    const Cost model = ormqr_cost(Side::Right, op, av.layout(), cv.layout(), rc.k, {}, grid.row(), grid.col(),
                                  sizeof(T), is_complex_v<T>);
    const std::int64_t mem0 = memory_stats().current_bytes;
    reset_peak_memory();
    reset_traffic();
    ormqr(Side::Right, op, av, tau, cv);
    const Traffic tr = traffic();
    const std::int64_t extra = memory_stats().peak_bytes - mem0;
    const std::vector<T> c1 = gather(cp.view());
    ormqr(Side::Right, inv, av, tau, cv);
    const std::vector<T> c2 = gather(cp.view());

    double diff = 0, back = 0;
    bool untouched = true;
    if (grid.comm().rank() == 0) {
        const index_t an = rc.n + off;
        const std::vector<T> va = test::block(fa, an, off, off, rc.n, std::max<index_t>(rc.k, 1));
        std::vector<T> ref = test::block(c0, cm, 1, off + nb, rc.m, rc.n);
        const std::vector<T> orig = ref;
        kernels::ormqr(false, op, rc.m, rc.n, rc.k, va.data(), std::max<index_t>(1, rc.n), tau.data(), ref.data(),
                       std::max<index_t>(1, rc.m));
        const std::vector<T> got = test::block(c1, cm, 1, off + nb, rc.m, rc.n);
        const std::vector<T> bk = test::block(c2, cm, 1, off + nb, rc.m, rc.n);
        std::vector<T> d(ref.size()), e(ref.size());
        for (std::size_t i = 0; i < d.size(); ++i) d[i] = got[i] - ref[i], e[i] = bk[i] - orig[i];
        const double nc = std::max(test::fro(orig), 1e-300);
        const double scale = nc * double(std::max<index_t>(1, std::max(rc.m, rc.n))) * double(eps<T>());
        diff = test::fro(d) / scale;
        back = test::fro(e) / scale;
        for (index_t j = 0; j < cn; ++j)
            for (index_t i = 0; i < cm; ++i) {
                const bool in = i >= 1 && j >= off + nb;
                if (!in && !(c1[i + j * cm] == c0[i + j * cm] && c2[i + j * cm] == c0[i + j * cm])) untouched = false;
            }
    }
    CAPTURE(rc.m);
    CAPTURE(rc.n);
    CAPTURE(rc.k);
    CAPTURE(rc.nb);
    CAPTURE(p);
    CAPTURE(q);
    CAPTURE(static_cast<int>(op));
    CAPTURE(diff);
    CAPTURE(back);
    CAPTURE(tr.words());
    CAPTURE(model.words);
    CAPTURE(tr.msgs());
    CAPTURE(model.msgs);
    CAPTURE(extra);
    CAPTURE(model.extra_bytes);
    CHECK(test::all_ranks(diff < 30.0, grid));
    CHECK(test::all_ranks(back < 30.0, grid));
    CHECK(test::all_ranks(untouched, grid));
    CHECK(test::all_ranks(tr.words() == model.words && tr.words_recv == model.words_recv, grid));
    CHECK(test::all_ranks(tr.msgs() == model.msgs, grid));
    CHECK(test::all_ranks(extra <= model.extra_bytes, grid));
}

}  // namespace

TEST_CASE_TEMPLATE("ormqr(Right) applies geqrf's Q from the right as LAPACK's ormqr", T, float, double,
                   std::complex<float>, std::complex<double>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    std::vector<Op> ops = {Op::N, Op::C};
    if (!is_complex_v<T>) ops.push_back(Op::T);
    for (const Grid2D& grid : grids_of(world))
        for (const RightCase& rc : kCases)
            for (Op op : ops) run_right<T>(grid, rc, op);
}

TEST_CASE_TEMPLATE("ormqr(Right) rejects bad input on every rank before moving anything", T, double,
                   std::complex<float>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    for (const Grid2D& grid : grids_of(world)) {
        DistMatrix<T> a(grid, 20, 12, 4, 4);
        test::randomize(a.view());
        std::vector<T> t12(12, T(0.5));
        DistMatrix<T> c_n(grid, 6, 19, 4, 4);
        DistMatrix<T> c_nb(grid, 6, 20, 4, 5);
        DistMatrix<T> c_ib(grid, 6, 21, 4, 4);
        test::randomize(c_n.view());
        test::randomize(c_nb.view());
        test::randomize(c_ib.view());
        const std::vector<T> n0(c_n.data(), c_n.data() + c_n.m_loc() * c_n.n_loc());
        reset_traffic();

        const std::string e_n = test::error_message([&] { ormqr(Side::Right, Op::N, a.view(), t12, c_n.view()); });
        const std::string e_nb = test::error_message([&] { ormqr(Side::Right, Op::C, a.view(), t12, c_nb.view()); });
        const std::string e_ib =
            test::error_message([&] { ormqr(Side::Right, Op::N, a.view(), t12, c_ib.sub(0, 1, 6, 20)); });
        const Traffic t = traffic();

        CHECK(test::all_ranks(e_n.find("C has 19 columns (side Right)") != std::string::npos, grid));
        CHECK(test::all_ranks(e_nb.find("blocks of 5") != std::string::npos, grid));
        CHECK(test::all_ranks(e_ib.find("(first 3)") != std::string::npos, grid));
        CHECK(test::all_ranks(t.words() == 0 && t.msgs() == 0, grid));
        CHECK(test::all_ranks(std::equal(n0.begin(), n0.end(), c_n.data()), grid));
    }
}

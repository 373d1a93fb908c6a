// cala::potrf on SBC/TBC with h layers (2.5D, replicated diagonal): A on layer 0 (NaN in the other
// layers' copies: they are workspace and must not be read), L·Lᴴ vs A on layer 0's gathered
// factor (n·eps bound), info of a matrix that is not positive definite on every rank, words,
// words received and messages per rank == model; bad arguments -> cala::Error on every rank,
// nothing moved; the model beside 2DBC 2.5D Cholesky (Repl) on the same ranks (printed).
// (run as: mpiexec.mpich -n N test_symm_potrf25d, N in {4, 6, 12}: 2 x SBC r = 2; 2 x extended
// SBC r = 3, 3 x SBC r = 2; 2 x TBC c = 2 and 2 x extended SBC r = 4, 4 x 3, 6 x 2)

#include <doctest/doctest.h>

#include <algorithm>

#include "support/helpers.hpp"
#include "support/symm.hpp"

using namespace cala;

namespace {

std::vector<int> layer_counts(int nranks) {
    std::vector<int> out;
    for (int h = 2; h <= nranks; ++h)
        if (nranks % h == 0 && nranks / h >= 2) out.push_back(h);
    return out;
}

std::vector<SymmetricLayout> symmetric_layouts(int nranks, index_t n, index_t nb) {
    std::vector<SymmetricLayout> out;
    try {
        for (const auto& c : choose_symmetric_layout(nranks, n, nb)) out.push_back(make_symmetric_layout(c, n, nb));
    } catch (const Error&) {  // 4 ranks fit no pattern
    }
    return out;
}

// A (ga) into layer 0's copy, NaN into the others'.
template <class T>
void load(const std::vector<T>& ga, index_t n, const Grid3D& sl, const TiledMatrix<T>& a) {
    const std::vector<T> nan(ga.size(), test::nan_value<T>());
    DistMatrix<T> a2(sl.layer_grid(), n, n, 2, 2);
    scatter((sl.layer() == 0 ? ga : nan).data(), std::max<index_t>(n, 1), a2.view());
    redistribute(a2.view(), a);
}

}  // namespace

TEST_CASE_TEMPLATE("2.5D potrf on SBC/TBC: L·Lᴴ == A on layer 0, traffic == model", T, double,
                   std::complex<double>) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D wg(world);
    for (const int h : layer_counts(world.size())) {
        const Grid3D sl = symm_slices(world, h);
        const Grid2D& lg = sl.layer_grid();
        for (const index_t n : {1, 10, 23})
            for (const index_t nb : {2, 3})
                for (const auto& sym : symmetric_layouts(lg.comm().size(), n, nb)) {
                    auto ga = test::spd<T>(n);
                    MPI_Bcast(ga.data(), static_cast<int>(ga.size() * sizeof(T)), MPI_BYTE, 0, MPI_COMM_WORLD);
                    TiledMatrix<T> a(lg, TileLayout::lower(sym));
                    load(ga, n, sl, a);
                    reset_traffic();

                    const index_t info = potrf(Uplo::Lower, a, sl);

                    const Traffic t = traffic();
                    DistMatrix<T> l2(lg, n, n, 3, 3);
                    redistribute(a, l2.view());
                    const auto gl = gather(l2.view());
                    const double ratio = world.rank() == 0 ? test::llh_ratio(gl, ga, n) : 0;  // layer 0's rank 0
                    const Cost model = potrf_cost(a.layout(), h, sl.layer(), lg.comm().rank(), is_complex_v<T>);
                    CAPTURE(h); CAPTURE(sym.describe()); CAPTURE(n); CAPTURE(nb); CAPTURE(ratio);
                    CAPTURE(t.words()); CAPTURE(model.words); CAPTURE(t.msgs()); CAPTURE(model.msgs);
                    CHECK(test::all_ranks(info == 0, wg));
                    CHECK(test::all_ranks(ratio < 4.0, wg));
                    CHECK(test::all_ranks(
                        t.words() == model.words && t.msgs() == model.msgs && t.words_recv == model.words_recv, wg));
                    CHECK(test::all_ranks(n < 2 * nb || t.words() > 0, wg));  // the layers do talk
                }
    }
}

TEST_CASE("2.5D potrf on SBC/TBC: info on every rank; bad arguments are a cala::Error on every rank") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D wg(world);
    const index_t n = 14;
    for (const int h : layer_counts(world.size())) {
        const Grid3D sl = symm_slices(world, h);
        for (const auto& sym : symmetric_layouts(sl.layer_grid().comm().size(), n, 3)) {
            auto ga = test::spd<double>(n, 7);
            MPI_Bcast(ga.data(), static_cast<int>(ga.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
            TiledMatrix<double> a(sl.layer_grid(), TileLayout::lower(sym));
            load(ga, n, sl, a);

            const index_t info = potrf(Uplo::Lower, a, sl);

            CAPTURE(h); CAPTURE(sym.describe());
            CHECK(test::all_ranks(info == 8, wg));  // A(7, 7) = -1: the leading minor of order 8
            reset_traffic();
            const auto e_upper = test::error_message([&] { potrf(Uplo::Upper, a, sl); });
            // Layer 1 passes a matrix on the whole communicator: every rank throws.
            const auto wsyms = symmetric_layouts(world.size(), n, 3);
            std::string e_layer = "(no pattern on all ranks)";
            if (!wsyms.empty()) {
                const TiledMatrix<double> wa(wg, TileLayout::lower(wsyms.front()));
                e_layer = test::error_message([&] { potrf(Uplo::Lower, sl.layer() == 1 ? wa : a, sl); });
                CHECK(e_layer.find("A does not live on this rank's layer") != std::string::npos);
            }
            CHECK(e_upper.find("stores the lower half only") != std::string::npos);
            CHECK(traffic().words() == 0);
        }
    }
}

TEST_CASE("2.5D potrf on SBC/TBC vs 2D and vs 2DBC: words received, sum over ranks and busiest rank (model, printed)") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const int P = world.size();
    const index_t n = 512, nb = 8;
    struct Tot { std::int64_t sum = 0, max = 0; };
    auto tot = [](int ranks, auto cost_of) {
        Tot t;
        for (int r = 0; r < ranks; ++r) {
            const std::int64_t w = cost_of(r).words_recv;
            t.sum += w, t.max = std::max(t.max, w);
        }
        return t;
    };
    const auto [wp, wq] = Grid2D::squarest(P);
    const BlockCyclic user(n, n, nb, nb, wp, wq);
    CholeskyOptions o2;
    o2.variant = CholeskyVariant::TwoD;
    const Tot bc2 = tot(P, [&](int r) { return potrf_cost(Uplo::Lower, user, GridOrder::RowMajor, o2, r, 8, false); });
    MESSAGE("potrf25d n=", n, " nb=", nb, " P=", P, ": 2DBC 2D ", wp, "x", wq, " sum ", bc2.sum, " max ", bc2.max);
    for (const auto& sym : symmetric_layouts(P, n, nb)) {
        const Tot t = tot(P, [&](int r) { return potrf_cost(TileLayout::lower(sym), r, false); });
        MESSAGE("potrf25d n=", n, " nb=", nb, " P=", P, ": 2D ", sym.describe(), " sum ", t.sum, " max ", t.max);
    }
    for (const int h : layer_counts(P)) {
        const int pl = P / h;
        const auto [p, q] = Grid2D::squarest(pl);
        CholeskyOptions opts;
        opts.variant = CholeskyVariant::Repl;
        opts.grid3d = {p, q, h};
        opts.block_size = nb;
        const Tot bc = tot(P, [&](int r) { return potrf_cost(Uplo::Lower, user, GridOrder::RowMajor, opts, r, 8, false); });
        MESSAGE("potrf25d n=", n, " nb=", nb, " P=", P, " h=", h, ": 2DBC Repl ", p, "x", q, "x", h, " from ", wp, "x",
                wq, " (conversions included) sum ", bc.sum, " max ", bc.max);
        for (const auto& sym : symmetric_layouts(pl, n, nb)) {
            const Tot t = tot(P, [&](int r) { return potrf_cost(TileLayout::lower(sym), h, r / pl, r % pl, false); });
            MESSAGE("potrf25d n=", n, " nb=", nb, " P=", P, " h=", h, ": 2.5D ", sym.describe(), " sum ", t.sum,
                    " max ", t.max);
            CHECK(t.sum > 0);
        }
    }
}

// cala-bench symm: cala::symm on 2DBC, SBC or TBC (C := alpha·A·B + beta·C, A m x m symmetric,
// lower half stored, B and C m x n), its traffic against the model and Table 5.1, and PBLAS
// p?symm on the same 2DBC data in the same run (--compare scalapack). --layout gemm runs
// cala::gemm (stationary-A) on the full A instead: the thesis' line 1 beside the three SYMMs.
//
// cala-bench symm -> cala::symm (lib/symm: stationary-A engine) | cala::gemm | psymm (p?symm_)
//
// Volume (Table 5.1's Q): words_sum = words received, summed over ranks -- every word that crosses
// the network counted once, at its receiver. For SYMM that is exactly the thesis' count (B's rows
// broadcast to s − 1 ranks, s − 1 partial sums sent to C's owner). For cala::gemm a reduction's
// root counts one message of w words however many ranks contribute (cala/comm.hpp), so its
// words_sum counts each reduction once; words_moved_sum (sent + received) is given for all.
//
// Timing (STYLE.md section 7): one warm-up, then `runs` runs of barrier, time, barrier, max over
// ranks; gflops from the median. Efficiency (concurrent_ref.hpp): gflops over the concurrent rate
// of the engine's own tile product on every rank at once, one BLAS call on all threads (symm:
// nb x n x nb; syrk: nb x nb x k), measured before and after the runs; --layout gemm has none. Correctness: C against cala::gemm with the full symmetric A on
// 2DBC (not timed), max |difference| / (eps·m·max|C|).

#include <mpi.h>

#include <complex>
#include <memory>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "cala/cala.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "concurrent_ref.hpp"
#include "scalapack_symm.hpp"

namespace cala::bench {

namespace {

struct SymmArgs {
    index_t m = 4096, n = 1024, nb = 256;
    std::string layout = "2dbc", compare = "none", type = "d";
    int runs = 5;
};

struct Sums {
    std::int64_t words_recv = 0, words = 0, msgs = 0;
};
Sums sum_over_ranks(const Traffic& t) {
    std::int64_t v[3] = {t.words_recv, t.words(), t.msgs()};
    MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    return {v[0], v[1], v[2]};
}

template <class T>
void fill_symmetric(const MatrixRef<T>& a, std::uint64_t seed) {
    const Grid2D& g = a.grid();
    for (index_t j = 0; j < a.n_loc(); ++j) {
        const index_t jg = a.layout().cols.to_global(j, g.col());
        for (index_t i = 0; i < a.m_loc(); ++i) {
            const index_t ig = a.layout().rows.to_global(i, g.row());
            a.local(i, j) = element<T>(seed, std::max(ig, jg), std::min(ig, jg));
        }
    }
}

// max|x − y| / (eps·k·max|y|) over the grid (x, y with one layout).
template <class T>
double check_error(const DistMatrix<T>& x, const DistMatrix<T>& y, index_t k) {
    double v[2] = {0, 0};
    for (index_t j = 0; j < x.n_loc(); ++j)
        for (index_t i = 0; i < x.m_loc(); ++i) {
            v[0] = std::max(v[0], static_cast<double>(std::abs(x.local(i, j) - y.local(i, j))));
            v[1] = std::max(v[1], static_cast<double>(std::abs(y.local(i, j))));
        }
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return v[0] == 0 ? 0 : v[0] / (static_cast<double>(eps<T>()) * static_cast<double>(std::max<index_t>(k, 1)) * v[1]);
}

// The concurrent reference of the symmetric engines' tile product m x n x k (C := A·op(B)), one
// BLAS call on all threads, every rank at once (concurrent_ref.hpp): 5 repeats, then 5 more.
template <class T>
Reference symm_reference(index_t m, index_t n, index_t k, Op opb) {
    cala::bench::progress("symm", std::string("the concurrent reference: ") + std::to_string(m) + "x" + std::to_string(n) + "x" +
             std::to_string(k) + " on every rank at once");
    return gemm_reference<T>(m, n, k, opb, Threading::Blas, omp_get_max_threads(), MPI_COMM_WORLD);
}

// The symmetric layout --layout names on P ranks (the chooser's message when none fits).
SymmetricLayout pick_layout(const std::string& which, int P, index_t m, index_t nb) {
    for (const auto& c : choose_symmetric_layout(P, m, nb))
        if ((which == "tbc") == (c.kind == SymmetricKind::TBC)) return make_symmetric_layout(c, m, nb);
    throw Error("cala-bench symm: " + std::to_string(P) + " ranks fit no " + which + " pattern (SBC: P = r²/2, r even, " +
                "or r(r-1)/2; TBC: P = c(c+1), c prime)");
}

template <class T>
void run_symm(const SymmArgs& args) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    const int P = world.size(), me = world.rank();
    const index_t m = args.m, n = args.n, nb = args.nb;
    std::uint64_t seed = std::random_device{}();
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    const T alpha = T(1), beta = T(0.5);

    // 2DBC operands: the reference, the 2dbc/gemm runs and ScaLAPACK's.
    DistMatrix<T> a2(grid, m, m, nb, nb), b2(grid, m, n, nb, nb), c0(grid, m, n, nb, nb), c2(grid, m, n, nb, nb),
        ref(grid, m, n, nb, nb);
    fill_symmetric(a2.view(), seed);
    fill_random(b2.view(), seed + 1);
    fill_random(c0.view(), seed + 2);
    copy_local(c0.view(), ref.view());
    gemm(Op::N, Op::N, alpha, a2.view(), b2.view(), beta, ref.view());

    const index_t tile = std::min(nb, m);
    Reference kref;  // before and after the runs
    if (args.layout != "gemm") kref = symm_reference<T>(tile, n, tile, Op::N);
    nlohmann::ordered_json line;
    line["bench"] = "symm";
    line["layout"] = args.layout;
    Times times;
    Traffic t;
    Cost model_sum;
    double table_q = 0, err = 0;
    std::int64_t storage_max = 0;
    const double mn = double(m) * double(n);
    auto add_model = [&](const Cost& c) {
        model_sum.words += c.words, model_sum.words_recv += c.words_recv, model_sum.msgs += c.msgs;
    };
    if (args.layout == "2dbc" || args.layout == "gemm") {
        const bool g = args.layout == "gemm";
        GemmOptions opts;
        opts.variant = Variant::StationaryA;
        auto body = [&] {
            if (g) gemm(Op::N, Op::N, alpha, a2.view(), b2.view(), beta, c2.view(), opts);
            else symm(Side::Left, Uplo::Lower, alpha, a2.view(), b2.view(), beta, c2.view());
        };
        auto reset = [&] { copy_local(c0.view(), c2.view()); };
        times = time_runs("symm", args.layout, args.runs, MPI_COMM_WORLD, reset, body);
        reset();
        reset_traffic();
        body();
        t = traffic();
        err = check_error(c2, ref, m);
        for (int r = 0; r < P; ++r)
            add_model(g ? gemm_cost(Op::N, Op::N, a2.layout(), b2.layout(), c2.layout(), opts, grid.order(), r, sizeof(T),
                                    is_complex_v<T>)
                        : symm_cost(Side::Left, Uplo::Lower, a2.layout(), b2.layout(), grid.order(), r, is_complex_v<T>));
        const int p = grid.p(), q = grid.q();
        table_q = (g ? 1.0 : 2.0) * (p + q - 2) * mn;
        line["grid"] = std::to_string(p) + "x" + std::to_string(q);
        std::int64_t s = a2.m_loc() * a2.n_loc();
        if (!g) {  // what the lower half needs: the blocks on or below the diagonal
            s = 0;
            for (index_t jb = 0; jb < a2.layout().cols.num_blocks(); ++jb)
                for (index_t ib = jb; ib < a2.layout().rows.num_blocks(); ++ib)
                    if (a2.layout().rows.block_owner(ib) == grid.row() && a2.layout().cols.block_owner(jb) == grid.col())
                        s += a2.layout().rows.block_size(ib) * a2.layout().cols.block_size(jb);
        }
        storage_max = max_over_ranks(s, MPI_COMM_WORLD);
    } else {
        const SymmetricLayout sym = pick_layout(args.layout, P, m, nb);
        const TileLayout al = TileLayout::lower(sym), bl = TileLayout::paired(sym, Side::Left, n, nb);
        TiledMatrix<T> a(grid, al), b(grid, bl), c(grid, bl), c0t(grid, bl);
        redistribute(a2.view(), a);
        redistribute(b2.view(), b);
        redistribute(c0.view(), c0t);
        auto reset = [&] { redistribute(c0t, c); };  // same layout: local copies only
        auto body = [&] { symm(Side::Left, Uplo::Lower, alpha, a, b, beta, c); };
        times = time_runs("symm", args.layout, args.runs, MPI_COMM_WORLD, reset, body);
        reset();
        reset_traffic();
        body();
        t = traffic();
        redistribute(c, c2.view());
        err = check_error(c2, ref, m);
        for (int r = 0; r < P; ++r) add_model(symm_cost(Side::Left, al, bl, r, is_complex_v<T>));
        const int x = sym.param();
        table_q = 2.0 * (sym.kind() == SymmetricKind::TBC ? x : x - 1) * mn;  // Table 5.1, lines 3 and 4
        line["pattern"] = sym.describe();
        line["row_set"] = sym.row_set(0).size();
        storage_max = max_over_ranks(sym.local_elements(me), MPI_COMM_WORLD);
    }
    const Sums s = sum_over_ranks(t);
    const double flops = 2.0 * double(m) * double(m) * double(n) * (is_complex_v<T> ? 4.0 : 1.0);
    line["ranks"] = P;
    line["m"] = m;
    line["n"] = n;
    line["nb"] = nb;
    line["type"] = args.type;
    line["threads"] = omp_get_max_threads();
    line["threads_from"] = threads_from(false);
    line["runs"] = args.runs;
    line["time_median_s"] = times.median();
    line["time_best_s"] = times.best();
    line["gflops"] = flops / times.median() * 1e-9;
    line["words_sum"] = s.words_recv;
    line["model_words_sum"] = model_sum.words_recv;
    line["words_moved_sum"] = s.words;
    line["model_words_moved_sum"] = model_sum.words;
    line["msgs_sum"] = s.msgs;
    line["model_msgs_sum"] = model_sum.msgs;
    line["table_q"] = table_q;
    line["words_sum_over_table_q"] = table_q > 0 ? double(s.words_recv) / table_q : 0.0;
    line["q_over_mn"] = mn > 0 ? double(s.words_recv) / mn : 0.0;
    line["storage_max_words"] = storage_max;
    line["storage_bound_words"] = double(m) * double(m) / (2.0 * P) + double(m) * double(nb);
    line["check_error"] = err;
    if (args.compare == "scalapack") {
        const BlacsGrid bg(grid.p(), grid.q());
        auto reset = [&] { copy_local(c0.view(), c2.view()); };
        auto body = [&] { psymm(bg, Side::Left, Uplo::Lower, alpha, a2.view(), b2.view(), beta, c2.view()); };
        const Times st = time_runs("symm", "scalapack", args.runs, MPI_COMM_WORLD, reset, body);
        line["scalapack_gflops"] = flops / st.median() * 1e-9;
        line["scalapack_check_error"] = check_error(c2, ref, m);
        line["speedup_vs_scalapack"] = st.median() / times.median();
    }
    if (args.layout != "gemm") {
        // The engine's kernel (lib/symm/engine.cpp): per stored tile of A, W(i) += A(i, j)·B(j, :),
        // nb x n x nb, one BLAS call on all the rank's threads; every rank at once, before and
        // after the runs. (--layout gemm runs cala::gemm's stationary-A loop: no efficiency.)
        kref.add(symm_reference<T>(tile, n, tile, Op::N));
        add_efficiency(line, "symm", flops / times.median() * 1e-9, kref, P * omp_get_max_threads());
    }
    if (line["model_words_sum"] != line["words_sum"] || line["model_msgs_sum"] != line["msgs_sum"]) {
        line["error"] = "measured traffic differs from the model";
        report_error("symm", line["error"]);
    }
    emit(line);
}

// cala-bench syrk: C := alpha·A·Aᵀ + beta·C, C n x n (lower half) on 2DBC, SBC or TBC, A n x k;
// words received summed over ranks vs the model ((s − 1)·n·k) and PBLAS p?syrk (--compare).
template <class T>
void run_syrk(const SymmArgs& args) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const Grid2D grid(world);
    const int P = world.size(), me = world.rank();
    const index_t n = args.m, k = args.n, nb = args.nb;
    std::uint64_t seed = std::random_device{}();
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    const T alpha = T(1), beta = T(0.5);
    DistMatrix<T> a2(grid, n, k, nb, nb), c0(grid, n, n, nb, nb), c2(grid, n, n, nb, nb), ref(grid, n, n, nb, nb);
    fill_random(a2.view(), seed);
    fill_symmetric(c0.view(), seed + 1);
    copy_local(c0.view(), ref.view());
    gemm(Op::N, Op::T, alpha, a2.view(), a2.view(), beta, ref.view());  // the whole C; the lower half is checked
    const index_t tile = std::min(nb, n);
    Reference kref = symm_reference<T>(tile, tile, k, Op::T);  // before and after the runs
    nlohmann::ordered_json line;
    line["bench"] = "syrk";
    line["layout"] = args.layout;
    Times times;
    Traffic t;
    std::int64_t model_recv = 0, model_msgs = 0, s_size = 0;
    if (args.layout == "2dbc") {
        auto body = [&] { syrk(Uplo::Lower, alpha, a2.view(), beta, c2.view()); };
        auto reset = [&] { copy_local(c0.view(), c2.view()); };
        times = time_runs("syrk", args.layout, args.runs, MPI_COMM_WORLD, reset, body);
        reset();
        reset_traffic();
        body();
        t = traffic();
        for (int r = 0; r < P; ++r) {
            const Cost c = syrk_cost(Uplo::Lower, a2.layout(), c2.layout(), grid.order(), r, is_complex_v<T>);
            model_recv += c.words_recv, model_msgs += c.msgs;
        }
        line["grid"] = std::to_string(grid.p()) + "x" + std::to_string(grid.q());
        s_size = grid.p() + grid.q() - 1;
    } else {
        const SymmetricLayout sym = pick_layout(args.layout, P, n, nb);
        const TileLayout cl = TileLayout::lower(sym), al = TileLayout::paired(sym, Side::Left, k, nb);
        TiledMatrix<T> a(grid, al), c(grid, cl), c0t(grid, cl);
        redistribute(a2.view(), a);
        redistribute(c0.view(), c0t);
        auto reset = [&] { redistribute(c0t, c); };
        auto body = [&] { syrk(Uplo::Lower, alpha, a, beta, c); };
        times = time_runs("syrk", args.layout, args.runs, MPI_COMM_WORLD, reset, body);
        reset();
        reset_traffic();
        body();
        t = traffic();
        copy_local(c0.view(), c2.view());
        redistribute(c, c2.view());
        for (int r = 0; r < P; ++r) {
            const Cost cc = syrk_cost(al, cl, r, is_complex_v<T>);
            model_recv += cc.words_recv, model_msgs += cc.msgs;
        }
        line["pattern"] = sym.describe();
        s_size = static_cast<std::int64_t>(sym.row_set(0).size());
        (void)me;
    }
    // The lower triangle of C against the reference.
    for (index_t j = 0; j < c2.n_loc(); ++j)
        for (index_t i = 0; i < c2.m_loc(); ++i)
            if (c2.layout().rows.to_global(i, grid.row()) < c2.layout().cols.to_global(j, grid.col())) c2.local(i, j) = ref.local(i, j);
    const double err = check_error(c2, ref, k);
    const Sums s = sum_over_ranks(t);
    const double flops = double(n) * double(n + 1) * double(k) * (is_complex_v<T> ? 4.0 : 1.0);
    line["ranks"] = P;
    line["n"] = n;
    line["k"] = k;
    line["nb"] = nb;
    line["type"] = args.type;
    line["threads"] = omp_get_max_threads();
    line["threads_from"] = threads_from(false);
    line["time_median_s"] = times.median();
    line["gflops"] = flops / times.median() * 1e-9;
    line["words_sum"] = s.words_recv;
    line["model_words_sum"] = model_recv;
    line["msgs_sum"] = s.msgs;
    line["model_msgs_sum"] = model_msgs;
    line["row_set_volume"] = (s_size - 1) * n * k;
    line["check_error"] = err;
    if (args.compare == "scalapack") {
        const BlacsGrid bg(grid.p(), grid.q());
        auto reset = [&] { copy_local(c0.view(), c2.view()); };
        auto body = [&] { psyrk(bg, Uplo::Lower, alpha, a2.view(), beta, c2.view()); };
        const Times st = time_runs("syrk", "scalapack", args.runs, MPI_COMM_WORLD, reset, body);
        line["scalapack_gflops"] = flops / st.median() * 1e-9;
        line["speedup_vs_scalapack"] = st.median() / times.median();
    }
    {
        // The engine's kernel (lib/symm/syrk.cpp): per stored tile of C, C(i, j) := alpha·A(i, :)·A(j, :)ᵀ
        // + beta·C(i, j), nb x nb x k, one BLAS call on all the rank's threads; every rank at once.
        kref.add(symm_reference<T>(tile, tile, k, Op::T));
        add_efficiency(line, "syrk", flops / times.median() * 1e-9, kref, P * omp_get_max_threads());
    }
    if (model_recv != s.words_recv || model_msgs != s.msgs) {
        line["error"] = "measured traffic differs from the model";
        report_error("syrk", line["error"]);
    }
    emit(line);
}

// cala-bench symm-pattern: the owner of every lower block of an N x N block matrix, for each
// symmetric layout on P ranks (pure arithmetic; what scripts/plots pattern draws).
void run_pattern(int ranks, index_t blocks) {
    for (const auto& c : choose_symmetric_layout(ranks, blocks, 1)) {
        const SymmetricLayout l = make_symmetric_layout(c, blocks, 1);
        nlohmann::ordered_json line;
        line["bench"] = "symm-pattern";
        line["layout"] = to_string(l.kind());
        line["pattern"] = l.describe();
        line["ranks"] = l.nprocs();
        line["blocks"] = blocks;
        line["pattern_size"] = l.pattern_size();
        auto owners = nlohmann::json::array();
        for (index_t i = 0; i < blocks; ++i) {
            auto row = nlohmann::json::array();
            for (index_t j = 0; j <= i; ++j) row.push_back(l.owner(i, j));
            owners.push_back(row);
        }
        line["owners"] = owners;
        auto cells = nlohmann::json::array();  // the pattern, -1 on cells filled block by block
        for (int x = 0; x < l.pattern_size(); ++x) {
            auto row = nlohmann::json::array();
            for (int y = 0; y <= x; ++y) row.push_back(l.cell(x, y));
            cells.push_back(row);
        }
        line["cells"] = cells;
        emit(line);
    }
}

void run(const SymmArgs& args) {
    if (args.type == "d") run_symm<double>(args);
    else if (args.type == "s") run_symm<float>(args);
    else if (args.type == "z") run_symm<std::complex<double>>(args);
    else run_symm<std::complex<float>>(args);
}

}  // namespace

void add_symm_command(CLI::App& app) {
    auto args = std::make_shared<SymmArgs>();
    auto* cmd = app.add_subcommand("symm", "C := alpha·A·B + beta·C, A symmetric (lower half): cala::symm on 2DBC, "
                                           "SBC or TBC vs ScaLAPACK p?symm; traffic vs model and Table 5.1");
    cmd->add_option("--layout", args->layout, "layout of A (gemm: cala::gemm, stationary-A, on the full A)")
        ->check(CLI::IsMember({"2dbc", "sbc", "tbc", "gemm"}))->capture_default_str();
    cmd->add_option("--m", args->m, "order of A, rows of B and C")->check(CLI::NonNegativeNumber)->capture_default_str();
    cmd->add_option("--n", args->n, "columns of B and C")->check(CLI::NonNegativeNumber)->capture_default_str();
    cmd->add_option("--nb", args->nb, "block size")->check(CLI::PositiveNumber)->capture_default_str();
    cmd->add_option("--runs", args->runs, "reported runs (after one warm-up)")->check(CLI::PositiveNumber)->capture_default_str();
    cmd->add_option("--compare", args->compare, "reference to run on the same data")
        ->check(CLI::IsMember({"none", "scalapack"}))->capture_default_str();
    cmd->add_option("--type", args->type, "element type: d, s, z, c")
        ->check(CLI::IsMember({"d", "s", "z", "c"}))->capture_default_str();
    cmd->callback([args] { run(*args); });

    auto sargs = std::make_shared<SymmArgs>();
    auto* sc = app.add_subcommand("syrk", "C := alpha·A·Aᵀ + beta·C, C symmetric (lower half): cala::syrk on 2DBC, SBC or "
                                          "TBC vs ScaLAPACK p?syrk; traffic vs model");
    sc->add_option("--layout", sargs->layout, "layout of C")->check(CLI::IsMember({"2dbc", "sbc", "tbc"}))->capture_default_str();
    sc->add_option("--n", sargs->m, "order of C, rows of A")->check(CLI::NonNegativeNumber)->capture_default_str();
    sc->add_option("--k", sargs->n, "columns of A")->check(CLI::NonNegativeNumber)->capture_default_str();
    sc->add_option("--nb", sargs->nb, "block size")->check(CLI::PositiveNumber)->capture_default_str();
    sc->add_option("--runs", sargs->runs, "reported runs (after one warm-up)")->check(CLI::PositiveNumber)->capture_default_str();
    sc->add_option("--compare", sargs->compare, "reference to run on the same data")
        ->check(CLI::IsMember({"none", "scalapack"}))->capture_default_str();
    sc->add_option("--type", sargs->type, "element type: d, s, z, c")->check(CLI::IsMember({"d", "s", "z", "c"}))->capture_default_str();
    sc->callback([sargs] {
        if (sargs->type == "d") run_syrk<double>(*sargs);
        else if (sargs->type == "s") run_syrk<float>(*sargs);
        else if (sargs->type == "z") run_syrk<std::complex<double>>(*sargs);
        else run_syrk<std::complex<float>>(*sargs);
    });

    auto pat = std::make_shared<std::pair<int, index_t>>(12, 27);
    auto* pc = app.add_subcommand("symm-pattern", "owners of the lower blocks of the symmetric layouts on P ranks (JSON, "
                                                  "for scripts/plots pattern)");
    pc->add_option("--ranks", pat->first, "P")->check(CLI::PositiveNumber)->capture_default_str();
    pc->add_option("--blocks", pat->second, "blocks per dimension")->check(CLI::PositiveNumber)->capture_default_str();
    pc->callback([pat] {
        if (world_rank() == 0) run_pattern(pat->first, pat->second);
    });
}

}  // namespace cala::bench

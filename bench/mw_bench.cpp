// cala-bench mw: the master-worker product of Dongarra, Pineau, Robert and Vivien (2008).
//
// cala-bench mw -> cala::mw::simulate (--simulate) | cala::mw::gemm (real run, prediction beside)
//
//   cala-bench mw --simulate --platforms paper
//       one line per (platform, strategy): makespan_s, enrolled, relative_cost (makespan over the
//       best strategy's on that platform), relative_work (makespan x enrolled over the smallest
//       such product), then one summary line: het_mean_relative_cost, het_gain_vs_bmm (mean of
//       1 - Het/BMM), and per strategy the mean relative cost and work.
//   mpiexec.mpich -n 3 cala-bench mw --m 1536 --n 3072 --k 1536 --strategies Het,ODDOML
//       --memory-mib 2 --compute-slowdown 1,2 --link-slowdown 1,4 --runs 3
//       real runs on the ranks it was started with (rank 0 the master): per strategy the measured
//       makespan (median over --runs, after one warm-up), the simulator's prediction for the
//       platform discovered in the same call, the master's CPU use, the tracked one-port and
//       memory rules, the master's words against the model, and a probe check of C.
//   mpiexec.mpich -n 3 cala-bench mw --strategies Het --compute-slowdown 1,2 --trace mw.json
//       after the timed runs, one traced run: a Chrome/Perfetto trace (lib/core/trace.hpp) of the
//       master's block transfers and the workers' block products and waits, one row per rank.
//
// The paper's platforms (Section 6): 8 workers; q = 80; A 8000 x 8000, B 8000 x n. Link and
// compute costs of the reference worker, c0 = 8 ms per 80 x 80 double block and w0 = 0.34 ms
// per block update, put Het's makespans in the paper's range (2000-3500 s for n = 64000..128000
// on the memory class). Classes: memory (2 x 256, 4 x 512, 2 x 1024 MB), links (bandwidths
// 10:5:1, 2/4/2 workers), compute (speeds 1 : 1/2 : 1/4, 2/4/2 workers), each for n = 64000,
// 80000, 96000, 112000, 128000; fully heterogeneous with ratio 2 and 4 (the 8 combinations of
// two values of c, w and m); 10 random platforms (seed 2008) with c in [c0, 4 c0], w in
// [w0, 4 w0], m in [1024 MB / 4, 1024 MB], n = 80000.

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cala/cala.hpp"
#include "cala/mw.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "output.hpp"

namespace cala::bench {

namespace {

struct MwArgs {
    bool simulate = false;
    std::string platforms = "paper", type = "d";
    index_t m = 1536, n = 3072, k = 1536, q = 0;
    std::vector<std::string> strategies;
    std::vector<double> memory_mib{2}, compute_slowdown, link_slowdown;
    double poll_us = 100;
    int runs = 3;
    std::string trace;
};

int rank_of_world() {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

void progress(const std::string& s) { cala::bench::progress("mw", s); }

double median(const std::vector<double>& v) { return median_of(v); }

double loadavg() {
    std::ifstream f("/proc/loadavg");
    double l = -1;
    f >> l;
    return l;
}

// ---- simulation on the paper's platforms

struct Instance {
    std::string name;
    mw::Platform p;
    index_t m, n, k;
};

std::vector<Instance> paper_platforms() {
    const double c0 = 8e-3, w0 = 0.34e-3;
    const index_t q = 80;
    auto mem = [&](double mib) {
        return static_cast<std::int64_t>(mib * 1024 * 1024 / (q * q * 8));
    };
    std::vector<Instance> out;
    for (index_t n : {64000, 80000, 96000, 112000, 128000}) {
        mw::Platform memory{q, {}}, links{q, {}}, compute{q, {}};
        for (int i = 0; i < 8; ++i) {
            const int g = i < 2 ? 0 : i < 6 ? 1 : 2;
            memory.workers.push_back({c0, w0, mem(256 << g)});
            links.workers.push_back({c0 * (g == 0 ? 1 : g == 1 ? 2 : 10), w0, mem(1024)});
            compute.workers.push_back({c0, w0 * (1 << g), mem(1024)});
        }
        const std::string b = "-n" + std::to_string(n);
        out.push_back({"memory" + b, memory, 8000, n, 8000});
        out.push_back({"links" + b, links, 8000, n, 8000});
        out.push_back({"compute" + b, compute, 8000, n, 8000});
    }
    for (double ratio : {2.0, 4.0}) {
        mw::Platform p{q, {}};
        for (int i = 0; i < 8; ++i)
            p.workers.push_back({(i & 1) ? ratio * c0 : c0, (i & 2) ? ratio * w0 : w0,
                                 mem((i & 4) ? 1024 : 1024 / ratio)});
        out.push_back(
            {"full-ratio" + std::to_string(static_cast<int>(ratio)), p, 8000, 80000, 8000});
    }
    std::mt19937_64 g(2008);
    std::uniform_real_distribution<double> u(1, 4);
    for (int t = 0; t < 10; ++t) {
        mw::Platform p{q, {}};
        for (int i = 0; i < 8; ++i) {
            const double fc = u(g), fw = u(g), fm = u(g);
            p.workers.push_back({c0 * fc, w0 * fw, mem(1024 / fm)});
        }
        out.push_back({"random-" + std::to_string(t), p, 8000, 80000, 8000});
    }
    return out;
}

nlohmann::ordered_json platform_json(const mw::Platform& p) {
    auto ws = nlohmann::ordered_json::array();
    for (const mw::Worker& w : p.workers) ws.push_back({{"c", w.c}, {"w", w.w}, {"m", w.m}});
    return ws;
}

void run_simulation(const MwArgs& args) {
    if (args.platforms != "paper")
        throw CLI::ValidationError("--platforms", "only 'paper' is known");
    if (rank_of_world() != 0) return;
    const auto instances = paper_platforms();
    const std::size_t ns = mw::all_strategies.size();
    std::vector<double> cost_sum(ns, 0), work_sum(ns, 0);
    double het_cost = 0, het_cost_max = 0, gain = 0, gain_min = INFINITY, bound_ratio = 0,
           het_enrolled = 0;
    for (const Instance& in : instances) {
        const auto all = mw::simulate_all(in.p, in.m, in.n, in.k);
        const mw::SteadyState ss = mw::steady_state(in.p, in.m, in.n, in.k);
        double best = INFINITY, best_work = INFINITY;
        for (const auto& pr : all) {
            best = std::min(best, pr.makespan_s);
            best_work =
                std::min(best_work, pr.makespan_s * static_cast<double>(pr.enrolled.size()));
        }
        for (std::size_t s = 0; s < ns; ++s) {
            const auto& pr = all[s];
            const double rc = pr.makespan_s / best;
            const double rw = pr.makespan_s * static_cast<double>(pr.enrolled.size()) / best_work;
            cost_sum[s] += rc;
            work_sum[s] += rw;
            nlohmann::ordered_json j = {
                {"bench", "mw"},
                {"mode", "simulate"},
                {"platform", in.name},
                {"strategy", mw::to_string(pr.strategy)},
                {"variant", pr.variant},
                {"makespan_s", pr.makespan_s},
                {"enrolled", pr.enrolled.size()},
                {"enrolled_workers", pr.enrolled},
                {"relative_cost", rc},
                {"relative_work", rw},
                {"port_busy_fraction", pr.port_busy_s / pr.makespan_s},
                {"lp_makespan_bound_s", ss.makespan_bound_s},
                {"m", in.m},
                {"n", in.n},
                {"k", in.k},
                {"q", in.p.q},
                {"workers", platform_json(in.p)},
            };
            emit(j);
        }
        het_cost += all[0].makespan_s / best;
        het_cost_max = std::max(het_cost_max, all[0].makespan_s / best);
        const double g = 1 - all[0].makespan_s / all[ns - 1].makespan_s;
        gain += g;
        gain_min = std::min(gain_min, g);
        bound_ratio += all[0].makespan_s / ss.makespan_bound_s;
        het_enrolled += static_cast<double>(all[0].enrolled.size());
    }
    const double np = static_cast<double>(instances.size());
    nlohmann::ordered_json per = nlohmann::ordered_json::object();
    for (std::size_t s = 0; s < ns; ++s)
        per[mw::to_string(mw::all_strategies[s])] = {{"mean_relative_cost", cost_sum[s] / np},
                                                     {"mean_relative_work", work_sum[s] / np}};
    nlohmann::ordered_json j = {
        {"bench", "mw"},
        {"mode", "simulate"},
        {"summary", true},
        {"platforms", instances.size()},
        {"het_mean_relative_cost", het_cost / np},
        {"het_max_relative_cost", het_cost_max},
        {"het_gain_vs_bmm", gain / np},
        {"het_gain_vs_bmm_min", gain_min},
        {"het_mean_enrolled", het_enrolled / np},
        {"het_mean_makespan_over_lp_bound", bound_ratio / np},
        {"strategies", per},
    };
    emit(j);
}

// ---- real runs

template <class T>
T random_element(std::mt19937_64& g) {
    std::uniform_real_distribution<real_t<T>> u(-1, 1);
    if constexpr (is_complex_v<T>)
        return T(u(g), u(g));
    else
        return u(g);
}

// |(C - C0)·x - A·(B·x)| / (|A|·|B|·|x|·k·eps) with a random x (max norms): a cheap probe.
template <class T>
double probe_error(index_t m, index_t n, index_t k, const std::vector<T>& a,
                   const std::vector<T>& b, const std::vector<T>& c0, const std::vector<T>& c,
                   std::mt19937_64& g) {
    std::vector<T> x(n), bx(k, T(0)), d(m, T(0));
    for (auto& v : x) v = random_element<T>(g);
    for (index_t j = 0; j < n; ++j)
        for (index_t l = 0; l < k; ++l) bx[l] += b[l + j * k] * x[j];
    for (index_t l = 0; l < k; ++l)
        for (index_t i = 0; i < m; ++i) d[i] += a[i + l * m] * bx[l];
    for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < m; ++i) d[i] -= (c[i + j * m] - c0[i + j * m]) * x[j];
    double err = 0, na = 0, nb = 0, nx = 0;
    for (const auto& v : d) err = std::max(err, static_cast<double>(std::abs(v)));
    for (const auto& v : a) na = std::max(na, static_cast<double>(std::abs(v)));
    for (const auto& v : b) nb = std::max(nb, static_cast<double>(std::abs(v)));
    for (const auto& v : x) nx = std::max(nx, static_cast<double>(std::abs(v)));
    return err / (na * nb * nx * static_cast<double>(k) * static_cast<double>(n) *
                  static_cast<double>(eps<T>()));
}

template <class T>
void run_real(const MwArgs& args) {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const int np = world.size() - 1;
    const bool master = world.rank() == 0;
    const index_t m = args.m, n = args.n, k = args.k;
    std::vector<T> a, b, c0, c;
    std::mt19937_64 g(12345);
    if (master) {
        a.resize(m * k), b.resize(k * n), c0.resize(m * n);
        for (auto* v : {&a, &b, &c0})
            for (auto& x : *v) x = random_element<T>(g);
    }
    std::vector<mw::Strategy> strategies;
    for (const auto& s : args.strategies) strategies.push_back(mw::strategy_from_string(s));
    if (strategies.empty()) strategies.assign(mw::all_strategies.begin(), mw::all_strategies.end());

    mw::Options o;
    o.q = args.q;
    o.memory_bytes.clear();
    for (double mib : args.memory_mib)
        o.memory_bytes.push_back(static_cast<std::int64_t>(mib * 1024 * 1024));
    o.emulation.compute_slowdown = args.compute_slowdown;
    o.emulation.link_slowdown = args.link_slowdown;
    o.poll_interval_s = args.poll_us * 1e-6;

    for (mw::Strategy s : strategies) {
        o.strategy = s;
        progress(std::string(mw::to_string(s)) + ": 1 warm-up and " + std::to_string(args.runs) +
                 " runs");
        std::vector<double> meas, pred, times, cpu, disc, plan;
        mw::Report rep;
        for (int r = 0; r <= args.runs; ++r) {
            c = c0;
            MPI_Barrier(MPI_COMM_WORLD);
            const double t0 = MPI_Wtime();
            rep = mw::gemm<T>(m, n, k, master ? a.data() : nullptr, m, master ? b.data() : nullptr,
                              k, master ? c.data() : nullptr, m, world, o);
            MPI_Barrier(MPI_COMM_WORLD);
            double dt = MPI_Wtime() - t0;
            MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (r == 0) continue;
            times.push_back(dt);
            meas.push_back(rep.makespan_s);
            pred.push_back(rep.predicted_makespan_s);
            cpu.push_back(rep.master_cpu_s / rep.makespan_s);
            disc.push_back(rep.discovery_s);
            plan.push_back(rep.planning_s);
        }
        double trace_s = 0;
        if (!args.trace.empty()) {
            progress(std::string(mw::to_string(s)) + ": one traced run, written to " + args.trace);
            c = c0;
            trace_s = traced_run(MPI_COMM_WORLD, args.trace, [&] {
                mw::gemm<T>(m, n, k, master ? a.data() : nullptr, m, master ? b.data() : nullptr, k,
                            master ? c.data() : nullptr, m, world, o);
            });
        }
        if (!master) continue;
        std::vector<double> err;
        for (std::size_t i = 0; i < meas.size(); ++i) err.push_back(meas[i] / pred[i] - 1);
        std::vector<double> blas;
        std::vector<std::int64_t> mem;
        for (const mw::Worker& w : rep.platform.workers) {
            const double q = static_cast<double>(rep.platform.q);
            blas.push_back((is_complex_v<T> ? 8.0 : 2.0) * q * q * q / w.w / 1e9);
            mem.push_back(w.m);
        }
        const double flops = (is_complex_v<T> ? 8.0 : 2.0) * static_cast<double>(m) *
                             static_cast<double>(n) * static_cast<double>(k);
        nlohmann::ordered_json j = {
            {"bench", "mw"},
            {"mode", "run"},
            {"type", args.type},
            {"strategy", mw::to_string(s)},
            {"variant", rep.variant},
            {"m", m},
            {"n", n},
            {"k", k},
            {"q", rep.platform.q},
            {"ranks", np + 1},
            {"workers", np},
            {"runs", args.runs},
            {"memory_mib", args.memory_mib},
            {"compute_slowdown", args.compute_slowdown},
            {"link_slowdown", args.link_slowdown},
            {"poll_us", args.poll_us},
            {"platform", platform_json(rep.platform)},
            {"worker_blas_gflops", blas},
            {"enrolled_ranks", rep.enrolled_ranks},
            {"makespan_s", median(meas)},
            {"makespans_s", meas},
            {"predicted_makespan_s", median(pred)},
            {"predictions_s", pred},
            {"prediction_error", median(err)},
            {"prediction_errors", err},
            {"time_s", median(times)},
            {"discovery_s", median(disc)},
            {"planning_s", median(plan)},
            {"gflops", flops / median(meas) / 1e9},
            {"master_cpu_fraction", median(cpu)},
            {"max_port_transfers", rep.max_port_transfers},
            {"port_busy_s", rep.port_busy_s},
            {"port_blocks", rep.port_blocks},
            {"blocks_peak", rep.blocks_peak},
            {"memory_blocks", mem},
            {"words_master", rep.traffic.words()},
            {"words_model", rep.model.words_sent + rep.model.words_recv},
            {"msgs_master", rep.traffic.msgs()},
            {"msgs_model", rep.model.msgs_sent + rep.model.msgs_recv},
            {"check_error", probe_error<T>(m, n, k, a, b, c0, c, g)},
            {"loadavg_1min", loadavg()},
            {"threads", local_threads()},
        };
        if (!args.trace.empty()) {
            j["trace_file"] = args.trace;
            j["trace_time_s"] = trace_s;
        }
        emit(j);
    }
}

}  // namespace

void add_mw_command(CLI::App& app) {
    auto args = std::make_shared<MwArgs>();
    CLI::App* sub = app.add_subcommand(
        "mw", "master-worker product on a heterogeneous star (Dongarra et al. 2008)");
    sub->add_flag("--simulate", args->simulate,
                  "simulate every strategy on --platforms instead of running");
    sub->add_option("--platforms", args->platforms, "platform set for --simulate: paper")
        ->capture_default_str();
    sub->add_option("--m", args->m, "rows of A and C")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    sub->add_option("--n", args->n, "columns of B and C")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    sub->add_option("--k", args->k, "columns of A, rows of B")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    sub->add_option("--q", args->q, "block size (0: from the BLAS rate)")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    sub->add_option("--strategies", args->strategies,
                    "Het,Hom,HomI,ORROML,OMMOML,ODDOML,BMM (default: all)")
        ->delimiter(',');
    sub->add_option("--memory-mib", args->memory_mib,
                    "memory budget per worker, one value or one per worker")
        ->delimiter(',')
        ->capture_default_str();
    sub->add_option("--compute-slowdown", args->compute_slowdown,
                    "per-worker compute slowdown factors (>= 1)")
        ->delimiter(',');
    sub->add_option("--link-slowdown", args->link_slowdown,
                    "per-worker link slowdown factors (>= 1)")
        ->delimiter(',');
    sub->add_option("--poll-us", args->poll_us,
                    "sleep between MPI polls of idle ranks, microseconds (0: spin)")
        ->capture_default_str();
    sub->add_option("--runs", args->runs, "timed runs per strategy, after one warm-up")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    sub->add_option("--type", args->type, "element type: s, d, c, z")
        ->capture_default_str()
        ->check(CLI::IsMember({"s", "d", "c", "z"}));
    sub->add_option("--trace", args->trace,
                    "after the timed runs, one traced run: a Chrome/Perfetto trace of all ranks to this file "
                    "(one strategy)");
    sub->callback([args] {
        if (!args->trace.empty() && (args->simulate || args->strategies.size() != 1))
            throw CLI::ValidationError("--trace", "traces one real run: give one strategy (--strategies Het), no --simulate");
        if (args->simulate) return run_simulation(*args);
        if (args->type == "s")
            run_real<float>(*args);
        else if (args->type == "d")
            run_real<double>(*args);
        else if (args->type == "c")
            run_real<std::complex<float>>(*args);
        else
            run_real<std::complex<double>>(*args);
    });
}

}  // namespace cala::bench

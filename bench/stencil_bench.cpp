// cala-bench stencil: cala::stencil at several halo depths s, against the model and against a
// copy bandwidth measured in the same run.
//
// cala-bench stencil -> cala::stencil (HaloExchange + sweep) | cala::stencil_cost / stencil_time
//
//   mpiexec.mpich -n 2 cala-bench stencil --dim 2 --n 4096 --grid 1x2 --stencil 5pt
//       --depth 1,2,4,8,16 --steps 64 --model-latency-us 2 --model-bandwidth-gbs 10 --model-ranks 4096
//
// --n is the extent per rank along every dimension (weak scaling: the global domain is
// n·px × n·py [× n·pz]). Measured in the same run, all ranks at once:
//   copy_gbs       per-rank copy bandwidth, the concurrent reference: every rank at once, on all
//                  its threads, over two arrays of the size of this rank's field (--copy-mib
//                  overrides; allocated as the field's), so that a field that fits in cache is
//                  compared with a copy that does too; bytes = read + written = 2·sizeof(T)·len,
//                  time max over ranks. Two kinds alternate: a loop b[i] = a[i] with ordinary
//                  stores (copy_loop_gbs) and memcpy of each thread's share (copy_memcpy_gbs:
//                  non-temporal stores when large, as the sweep's large boxes); the reference is
//                  per repeat the faster, median over 5 repeats just before and 5 just after
//                  the depth's sweeps (copy_gbs_run: over all repeats of the run);
//   update_rate    local sweep rate: min(--steps, 16) steps of the same stencil on this rank's
//                  block alone (no halo, no message), owned points per second, best of --runs,
//                  minimum over ranks;
//   latency_us,    ping-pong between ranks 0 and 1 (8 bytes: half the round trip; 4 MiB: bytes
//   bandwidth_gbs  over half the round trip); used by the model of this run.
// Per depth: one warm-up call, then --runs timed calls of --steps steps (barrier, time,
// barrier; max over ranks); time_per_step_s is the best, time_per_step_median_s the median.
//   cached_update_rate  the compute roof: cala::stencil's rate on a block alone that stays in
//                  cache (stencil_refs.hpp), halo points included;
//   roofline_fraction = max(memory_bound_s, compute_bound_s) / time_per_step_median_s, where
//   memory_bound_s = 2·sizeof(T)·owned points / c / (copy_gbs·1e9): the least memory traffic
//   per step at depth c (the c steps of a cycle together in cache: every point read once and
//   written once per cycle), and
//   compute_bound_s = updates_per_step / cached_update_rate (roofline_bound says which is larger).
//   sweep_gbs = 2·sizeof(T)·owned / time_per_step_median_s. Above 1 is reported as an error
//   (output.hpp). local_roofline_fraction: 2·sizeof(T)·update_rate / copy_gbs_run (depth 1).
// Model: model_time_per_step_s = stencil_time(cost of this rank, {latency, bandwidth,
// update_rate} measured above) / steps, max over ranks. With --model-ranks P the same local
// block on P ranks (squarest grid) and --model-latency-us / --model-bandwidth-gbs (default:
// measured) gives target_time_per_step_s and the model's choice model_best_depth.

#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cala/cala.hpp"
#include "cala/stencil.hpp"
#include "commands.hpp"
#include "output.hpp"
#include "stencil_refs.hpp"
#include "stencil/sweep.hpp"

namespace cala::bench {



namespace {

using namespace stencil_ref;

struct StencilArgs {
    int dim = 2;
    index_t n = 1024;
    std::string grid, stencil, boundary = "periodic", type = "d";
    std::vector<int> depths{1, 2, 4, 8, 16};
    std::int64_t steps = 64;
    int runs = 3, threads = 0, model_ranks = 0;
    double model_latency_us = -1, model_bandwidth_gbs = -1, copy_mib = 0;
    bool no_overlap = false;
};

void progress(const std::string& s) { cala::bench::progress("stencil", s); }

std::int64_t max_over_ranks(std::int64_t v) {
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    return v;
}
// The double overload beside it: declared here alone, this one hid stencil_ref's, and the model's
// time per step was cut to a whole number of seconds (0) in every line until stop 61.
using stencil_ref::max_over_ranks;

// ---- grids

std::array<int, 3> parse_grid(const std::string& g, int dim, int size) {
    std::array<int, 3> p{1, 1, 1};
    if (g.empty()) {
        // squarest factorization
        if (dim == 2) {
            auto [a, b] = Grid2D::squarest(size);
            p = {a, b, 1};
        } else {
            p = {size, 1, 1};
            for (int a = 1; a * a * a <= size; ++a)
                for (int b = a; a * b * b <= size; ++b)
                    if (size % (a * b) == 0 && size / (a * b) >= b) {
                        const int c = size / (a * b);
                        if (c - a < std::max({p[0], p[1], p[2]}) - std::min({p[0], p[1], p[2]})) p = {a, b, c};
                    }
        }
        return p;
    }
    std::vector<int> v;
    std::stringstream ss(g);
    std::string part;
    while (std::getline(ss, part, 'x')) {
        try {
            v.push_back(std::stoi(part));
        } catch (...) {
            v.push_back(0);
        }
    }
    if (static_cast<int>(v.size()) != dim || *std::min_element(v.begin(), v.end()) < 1)
        throw CLI::ValidationError("--grid", "is '" + g + "', expected " + (dim == 2 ? "PxQ" : "PxQxR") +
                                                 " with positive factors");
    for (int d = 0; d < dim; ++d) p[d] = v[d];
    return p;
}

StencilDomain weak_domain(int dim, index_t n, std::array<int, 3> p, Boundary bc) {
    return dim == 2 ? StencilDomain::make_2d(n * p[0], n * p[1], p[0], p[1], bc, bc)
                    : StencilDomain::make_3d(n * p[0], n * p[1], n * p[2], p[0], p[1], p[2], bc, bc, bc);
}

std::string grid_name(const std::array<int, 3>& p, int dim) {
    std::string s = std::to_string(p[0]) + "x" + std::to_string(p[1]);
    if (dim == 3) s += "x" + std::to_string(p[2]);
    return s;
}

// ---- the benchmark

template <class T>
void run_stencil(const StencilArgs& args, const std::array<int, 3>& procs) {
    const Boundary bc = args.boundary == "periodic" ? Boundary::Periodic : Boundary::Dirichlet;
    const StencilDomain dom = weak_domain(args.dim, args.n, procs, bc);
    const Stencil<T> st = Stencil<T>::preset(args.stencil);
    if (st.dim() != args.dim)
        throw CLI::ValidationError("--stencil", args.stencil + " is not a " + std::to_string(args.dim) + "D stencil");
    const int max_depth = *std::max_element(args.depths.begin(), args.depths.end());
    if (*std::min_element(args.depths.begin(), args.depths.end()) < 1)
        throw CLI::ValidationError("--depth", "depths must be >= 1");
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const StencilGrid grid(world, dom);
    StencilField<T> u(grid, max_depth * st.radius());  // cala::Error on every rank if too deep
    const index_t owned = grid.n_loc(0) * grid.n_loc(1) * grid.n_loc(2);
    auto init = [&] {
        u.fill([](index_t i, index_t j, index_t k) {
            return static_cast<T>(((i * 7 + j * 13 + k * 17) % 101) * 0.01);
        });
    };
    init();

    const double copy_mib = args.copy_mib > 0 ? args.copy_mib : static_cast<double>(sizeof(T) * owned) / 1048576.0;
    progress("copy bandwidth over 2 x " + std::to_string(copy_mib) + " MiB per rank, all ranks at once");
    CopyArrays<T> arrays(copy_mib);
    CopySamples copies = copy_gbs(arrays, 10);  // and around every depth, and after the sweeps
    progress("ping-pong");
    const PingPong pp = ping_pong();

    progress("local sweep rate");
    double rate = 0;
    {
        const Comm self = Comm::borrow(MPI_COMM_SELF);
        const StencilGrid alone(self, args.dim == 2 ? StencilDomain::make_2d(grid.n_loc(0), grid.n_loc(1), 1, 1)
                                                    : StencilDomain::make_3d(grid.n_loc(0), grid.n_loc(1),
                                                                             grid.n_loc(2), 1, 1, 1));
        StencilField<T> v(alone, st.radius());
        v.fill([](index_t i, index_t j, index_t k) { return static_cast<T>((i + j + k) % 3); });
        const std::int64_t steps = std::max<std::int64_t>(1, std::min<std::int64_t>(args.steps, 16));
        std::vector<double> t;
        for (int r = -1; r < args.runs; ++r) {
            const double dt = timed([&] { stencil(v, st, steps); });
            if (r >= 0) t.push_back(dt);
        }
        rate = static_cast<double>(owned) * steps / best(t);
        rate = -max_over_ranks(-rate);  // the slowest rank
    }
    progress("in-cache sweep rate");
    const double cached_rate = cached_update_rate(st, args.dim, grid.n_loc(0), args.steps, args.runs);
    const double sweep_bytes = 2.0 * sizeof(T) * static_cast<double>(owned);

    const StencilMachine here{pp.latency_s, pp.bandwidth, rate, cached_rate};
    const int model_ranks = args.model_ranks > 0 ? args.model_ranks : world.size();
    const std::array<int, 3> tprocs = parse_grid("", args.dim, model_ranks);
    const StencilDomain target = weak_domain(args.dim, args.n, tprocs, bc);
    const StencilMachine there{args.model_latency_us >= 0 ? args.model_latency_us * 1e-6 : pp.latency_s,
                               args.model_bandwidth_gbs > 0 ? args.model_bandwidth_gbs * 1e9 : pp.bandwidth, rate,
                               cached_rate};
    const int best_depth = choose_stencil_depth(target, st.shape(), there, sizeof(T));

    std::vector<nlohmann::ordered_json> lines;
    std::vector<double> median_step;
    std::vector<CopySamples> around;  // per depth: 5 repeats just before and 5 just after
    for (int s : args.depths) {
        progress("depth " + std::to_string(s) + ", " + std::to_string(args.runs) + " runs of " +
                 std::to_string(args.steps) + " steps");
        const StencilOptions opts{s, !args.no_overlap};
        CopySamples near = copy_gbs(arrays, 5);
        stencil(u, st, std::min<std::int64_t>(args.steps, 2 * s), opts);  // warm-up
        std::vector<double> t;
        Traffic tr;
        StencilStats stats;
        for (int r = 0; r < args.runs; ++r) {
            reset_traffic();
            t.push_back(timed([&] { stats = stencil(u, st, args.steps, opts); }) / args.steps);
            tr = traffic();
        }
        const StencilCost model = stencil_cost(dom, grid.coords(), st.shape(), s, args.steps);
        const double steps = static_cast<double>(args.steps);
        const double tbest = best(t);
        nlohmann::ordered_json j = {
            {"bench", "stencil"}, {"dim", args.dim}, {"stencil", args.stencil}, {"type", args.type},
            {"boundary", args.boundary}, {"n_per_rank", args.n},
            {"global", args.dim == 2 ? std::vector<index_t>{dom.n[0], dom.n[1]} : std::vector<index_t>{dom.n[0], dom.n[1], dom.n[2]}},
            {"grid", grid_name(procs, args.dim)}, {"ranks", world.size()}, {"threads", args.threads},
            {"overlap", !args.no_overlap}, {"steps", args.steps}, {"runs", args.runs},
            {"depth", s},
            {"time_per_step_s", tbest}, {"time_per_step_median_s", median(t)},
            {"model_time_per_step_s", max_over_ranks(stencil_time(model, here, sizeof(T)) / steps)},
            {"msgs_per_step", static_cast<double>(max_over_ranks(tr.msgs())) / steps},
            {"model_msgs_per_step", static_cast<double>(max_over_ranks(model.msgs)) / steps},
            {"words_per_step", static_cast<double>(max_over_ranks(tr.words())) / steps},
            {"model_words_per_step", static_cast<double>(max_over_ranks(model.words)) / steps},
            {"redundant_updates_per_step", static_cast<double>(max_over_ranks(stats.redundant_updates)) / steps},
            {"model_redundant_updates_per_step", static_cast<double>(max_over_ranks(model.redundant_updates)) / steps},
            {"exchanges", max_over_ranks(stats.exchanges)},
            {"roofline_fraction", 0.0},  // set below, once the copy bandwidth is final
            {"sweep_gbs", 0.0},  // (median) set below
            {"copy_gbs", 0.0},
            {"local_roofline_fraction", 0.0},
            {"update_rate", rate}, {"cached_update_rate", cached_rate},
            {"updates_per_step", static_cast<double>(max_over_ranks(stats.updates)) / steps},
            {"latency_us", pp.latency_s * 1e6}, {"bandwidth_gbs", pp.bandwidth / 1e9},
            {"model_ranks", model_ranks}, {"model_grid", grid_name(tprocs, args.dim)},
            {"model_latency_us", there.latency_s * 1e6}, {"model_bandwidth_gbs", there.bandwidth_bytes_per_s / 1e9},
            {"target_time_per_step_s", stencil_time_per_step(target, st.shape(), s, there, sizeof(T))},
            {"model_best_depth", best_depth},
            {"window_bytes", detail::window_choice().bytes}, {"window_reason", detail::window_choice().reason},
        };
        near.add(copy_gbs(arrays, 5));
        copies.add(near);
        around.push_back(near);
        lines.push_back(j);
        median_step.push_back(median(t));
    }
    progress("copy bandwidth again");
    copies.add(copy_gbs(arrays, 10));
    const double copy = copies.reference();
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const double near = around[i].reference();
        // The roofline of depth c: the c steps of a cycle together in cache, so at least
        // sweep_bytes per cycle to and from memory, and no update faster than the kernel runs in
        // cache.
        const int c = std::min<int>(lines[i]["depth"].get<int>(), static_cast<int>(args.steps));
        const double memory_s = sweep_bytes / c / (near * 1e9);
        const double compute_s = lines[i]["updates_per_step"].get<double>() / cached_rate;
        const double fraction = std::max(memory_s, compute_s) / median_step[i];
        lines[i]["roofline_fraction"] = fraction;
        lines[i]["roofline_bound"] = memory_s >= compute_s ? "memory" : "compute";
        lines[i]["memory_bound_s"] = memory_s;
        lines[i]["compute_bound_s"] = compute_s;
        lines[i]["sweep_gbs"] = sweep_bytes / median_step[i] / 1e9;
        lines[i]["copy_gbs"] = near;
        lines[i]["copy_loop_gbs"] = median(around[i].loop);
        lines[i]["copy_memcpy_gbs"] = median(around[i].memcpy);
        lines[i]["copy_gbs_run"] = copy;
        lines[i]["copy_mib"] = copy_mib;
        if (fraction > 1.0) {
            const std::string msg = "roofline_fraction " + std::to_string(fraction) +
                                    " > 1: the sweep beat its roofline (a noisy copy or in-cache reference)";
            lines[i]["error"] = msg;
            report_error("stencil", msg);
        }
        lines[i]["local_roofline_fraction"] = sweep_bytes * rate / static_cast<double>(owned) / (copy * 1e9);
        emit(lines[i]);
    }
}

void run(const StencilArgs& in) {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    StencilArgs args = in;
    if (args.stencil.empty()) args.stencil = args.dim == 2 ? "5pt" : "7pt";
    const std::array<int, 3> procs = parse_grid(args.grid, args.dim, size);
    if (procs[0] * procs[1] * procs[2] != size)
        throw CLI::ValidationError("--grid", grid_name(procs, args.dim) + " needs " +
                                                 std::to_string(procs[0] * procs[1] * procs[2]) + " ranks, running on " +
                                                 std::to_string(size));
    if (args.threads > 0) omp_set_num_threads(args.threads);
    args.threads = omp_get_max_threads();
    if (args.type == "d") run_stencil<double>(args, procs);
    else run_stencil<float>(args, procs);
}

}  // namespace

void add_stencil_command(CLI::App& app) {
    auto args = std::make_shared<StencilArgs>();
    auto* cmd = app.add_subcommand("stencil", "communication-avoiding stencil sweeps (halo depth s) vs model and copy bandwidth");
    cmd->add_option("--dim", args->dim, "2 or 3")->check(CLI::IsMember({2, 3}))->capture_default_str();
    cmd->add_option("--n", args->n, "points per rank along every dimension")
        ->check(CLI::PositiveNumber)->capture_default_str();
    cmd->add_option("--grid", args->grid, "ranks PxQ (2D) or PxQxR (3D); default: the squarest");
    cmd->add_option("--stencil", args->stencil, "5pt, 9pt (2D), 7pt, 27pt (3D); default 5pt / 7pt")
        ->check(CLI::IsMember({"5pt", "9pt", "7pt", "27pt"}));
    cmd->add_option("--depth", args->depths, "halo depths s, comma-separated")->delimiter(',')->capture_default_str();
    cmd->add_option("--steps", args->steps, "steps per timed run")->check(CLI::PositiveNumber)->capture_default_str();
    cmd->add_option("--runs", args->runs, "timed runs per depth (after one warm-up)")
        ->check(CLI::PositiveNumber)->capture_default_str();
    cmd->add_option("--boundary", args->boundary, "periodic or dirichlet (every dimension)")
        ->check(CLI::IsMember({"periodic", "dirichlet"}))->capture_default_str();
    cmd->add_option("--type", args->type, "element type: d, s")->check(CLI::IsMember({"d", "s"}))->capture_default_str();
    cmd->add_option("--threads", args->threads, "OpenMP threads per rank (default: OpenMP's max)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_flag("--no-overlap", args->no_overlap, "wait for the halo before computing the interior");
    cmd->add_option("--copy-mib", args->copy_mib, "size of each copy-bandwidth array, MiB (0: this rank's field)")
        ->check(CLI::NonNegativeNumber)->capture_default_str();
    cmd->add_option("--model-latency-us", args->model_latency_us, "model latency per message (default: measured)");
    cmd->add_option("--model-bandwidth-gbs", args->model_bandwidth_gbs, "model bandwidth per rank (default: measured)");
    cmd->add_option("--model-ranks", args->model_ranks, "ranks of the modelled machine (default: this run's)")
        ->check(CLI::NonNegativeNumber);
    cmd->callback([args] { run(*args); });
}

}  // namespace cala::bench

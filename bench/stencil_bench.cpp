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
//                  cache (cached_update_rate() below), halo points included;
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
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cala/cala.hpp"
#include "cala/stencil.hpp"
#include "commands.hpp"
#include "output.hpp"

namespace cala::bench {

namespace {

// The compute roof of the temporally blocked steps: the rate, in point updates per second
// (halo points included), of cala::stencil on a block alone whose two buffers take 4 x the L2
// (half the wavefront's budget, so that the whole block stays in cache; rows as long as this
// rank's, up to 16384 points; at least 8 rows, or 8 x 8 in 3D), at the deepest depth it takes
// (at most 32), at least 64 steps; best of --runs (at least 5), minimum over ranks. Measured on one
// thread and multiplied by the rank's threads.
template <class T>
double cached_update_rate(const Stencil<T>& st, int dim, index_t nx, std::int64_t steps, int runs) {
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l2 <= 0) l2 = 512 * 1024;
    const index_t x = std::min<index_t>(nx, 16384);
    const index_t fit = 4 * l2 / (2 * static_cast<index_t>(sizeof(T)) * x);  // rows (2D) or y·z (3D) that fit
    const index_t len = std::max<index_t>(8, dim == 2 ? fit : static_cast<index_t>(std::sqrt(static_cast<double>(fit))));
    const int depth = static_cast<int>(std::clamp<index_t>(std::min(x, len) / st.radius(), 1, 32));
    const Comm self = Comm::borrow(MPI_COMM_SELF);
    const StencilGrid alone(self, dim == 2 ? StencilDomain::make_2d(x, len, 1, 1)
                                           : StencilDomain::make_3d(x, len, len, 1, 1, 1));
    StencilField<T> v(alone, depth * st.radius());
    v.fill([](index_t i, index_t j, index_t k) { return static_cast<T>((i + j + k) % 3); });
    const std::int64_t n = (std::max<std::int64_t>(64, steps) + depth - 1) / depth * depth;
    // On one thread, times the threads: a roof that no thread count can beat by sharing the block
    // (one thread per rank: the rate itself).
    const int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    double tbest = 1e300;
    StencilStats stats;
    for (int r = -1; r < std::max(runs, 5); ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        stats = stencil(v, st, n, StencilOptions{depth, true});
        if (r >= 0) tbest = std::min(tbest, MPI_Wtime() - t0);
    }
    omp_set_num_threads(threads);
    const double rate = static_cast<double>(stats.updates) / tbest * threads;
    double slowest = rate;
    MPI_Allreduce(&rate, &slowest, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    return slowest;
}

}  // namespace


namespace {

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

int world_rank() {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

void progress(const std::string& s) { cala::bench::progress("stencil", s); }

double max_over_ranks(double v) {
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return v;
}

std::int64_t max_over_ranks(std::int64_t v) {
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    return v;
}

// Barrier, body, barrier; the time is the maximum over ranks.
template <class F>
double timed(F&& body) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    body();
    MPI_Barrier(MPI_COMM_WORLD);
    return max_over_ranks(MPI_Wtime() - t0);
}

double best(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }
double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// ---- references measured in the same run

// A copy loop the compiler may not turn into memcpy: ordinary loads and stores, split over the
// OpenMP threads like the sweep.
template <class T>
__attribute__((optimize("no-tree-loop-distribute-patterns"))) void copy_loop(const T* __restrict a,
                                                                               T* __restrict b, std::int64_t len) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < len; ++i) b[i] = a[i];
}

// memcpy of each thread's contiguous share (glibc streams large copies past the cache with
// non-temporal stores, as the sweep does large boxes; small ones it copies through the cache).
template <class T>
void copy_memcpy(const T* a, T* b, std::int64_t len) {
#pragma omp parallel
    {
        const std::int64_t nt = omp_get_num_threads(), id = omp_get_thread_num();
        const std::int64_t lo = len * id / nt, hi = len * (id + 1) / nt;
        std::memcpy(b + lo, a + lo, sizeof(T) * static_cast<std::size_t>(hi - lo));
    }
}

// Two arrays allocated as a StencilField's buffers are (2 MiB aligned, transparent huge pages
// asked for, from 4 MiB on), first touched by the threads that copy them.
template <class T>
struct CopyArrays {
    std::int64_t len = 0;
    T* a = nullptr;
    T* b = nullptr;
    explicit CopyArrays(double mib) : len(static_cast<std::int64_t>(mib * 1024 * 1024 / sizeof(T))) {
        a = allocate(len);
        b = allocate(len);
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < len; ++i) {
            a[i] = T(1);
            b[i] = T(0);
        }
    }
    CopyArrays(const CopyArrays&) = delete;
    CopyArrays& operator=(const CopyArrays&) = delete;
    ~CopyArrays() {
        std::free(a);
        std::free(b);
    }
    static T* allocate(std::int64_t n) {
        constexpr std::size_t huge = std::size_t{2} << 20;
        const std::size_t want = sizeof(T) * static_cast<std::size_t>(std::max<std::int64_t>(n, 1));
        const std::size_t align = want >= 2 * huge ? huge : 64;
        const std::size_t bytes = (want + align - 1) / align * align;
        T* p = static_cast<T*>(std::aligned_alloc(align, bytes));
        if (p == nullptr) throw std::bad_alloc();
        if (align == huge) madvise(p, bytes, MADV_HUGEPAGE);
        return p;
    }
};

// Copy bandwidth samples (GB/s per rank, 2·sizeof(T) bytes per element: read + written), every
// rank at once: `reps` repeats of each kind of copy, after one untimed of each.
struct CopySamples {
    std::vector<double> loop, memcpy;  ///< ordinary stores; memcpy (non-temporal when large)
    /// The reference: per repeat the faster of the two kinds, median over the repeats.
    double reference() const {
        std::vector<double> m;
        for (std::size_t i = 0; i < loop.size(); ++i) m.push_back(std::max(loop[i], memcpy[i]));
        return m.empty() ? 0.0 : median(m);
    }
    void add(const CopySamples& o) {
        loop.insert(loop.end(), o.loop.begin(), o.loop.end());
        memcpy.insert(memcpy.end(), o.memcpy.begin(), o.memcpy.end());
    }
};

template <class T>
CopySamples copy_gbs(CopyArrays<T>& c, int reps) {
    CopySamples out;
    const double bytes = 2.0 * sizeof(T) * static_cast<double>(c.len);
    for (int r = -1; r < reps; ++r) {
        const double tl = timed([&] { copy_loop(c.a, c.b, c.len); });
        const double tm = timed([&] { copy_memcpy(c.a, c.b, c.len); });
        if (r < 0) continue;
        out.loop.push_back(bytes / tl / 1e9);
        out.memcpy.push_back(bytes / tm / 1e9);
    }
    return out;
}

struct PingPong {
    double latency_s = 0, bandwidth = 1e30;  // bandwidth in bytes/s
};

PingPong ping_pong() {
    PingPong pp;
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) return pp;
    const int me = world_rank();
    auto round_trips = [&](std::vector<char>& buf, int reps) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        for (int i = 0; i < reps && me < 2; ++i) {
            const int n = static_cast<int>(buf.size());
            if (me == 0) {
                MPI_Send(buf.data(), n, MPI_CHAR, 1, 7, MPI_COMM_WORLD);
                MPI_Recv(buf.data(), n, MPI_CHAR, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf.data(), n, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf.data(), n, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
            }
        }
        double dt = (MPI_Wtime() - t0) / reps;
        MPI_Bcast(&dt, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        return dt;
    };
    std::vector<char> small(8), large(4 << 20);
    round_trips(small, 10);
    pp.latency_s = round_trips(small, 200) / 2;
    round_trips(large, 2);
    const double t = round_trips(large, 10) / 2;
    pp.bandwidth = static_cast<double>(large.size()) / std::max(t - pp.latency_s, 1e-12);
    return pp;
}

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

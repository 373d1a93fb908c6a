// The trace recorder (lib/core/trace.hpp) on real runs: a traced cala::potrf and a traced
// mw::gemm write one Trace Event file (parsed here with nlohmann-json) with events from every
// rank and from every thread the run used, kinds from the documented set, and no two events of
// one (pid, tid) overlapping; with tracing off nothing is recorded; an unwritable path is a
// cala::Error on every rank.
// (run as: mpiexec.mpich -n 2 test_trace with OMP_NUM_THREADS=2, and -n 3 with 1 thread; the
// master-worker product has 1 and 2 workers then)

#include <doctest/doctest.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cala/mw.hpp"
#include "core/trace.hpp"
#include "support/helpers.hpp"

using namespace cala;
namespace trace = cala::detail::trace;

namespace {

const std::set<std::string> kKinds = {"potrf", "trsm", "gemm", "herk", "panel", "bcast", "wait", "transfer"};

int world_rank() {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

int world_size() {
    int s = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    return s;
}

bool everywhere(bool ok) {
    int v = ok ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return v == 1;
}

// A file name rank 0 picks in the temporary directory, the same on every rank.
std::string temp_path(const std::string& stem) {
    char buf[512] = {};
    if (world_rank() == 0) {
        const auto p = std::filesystem::temp_directory_path() /
                       (stem + "-" + std::to_string(getpid()) + ".json");
        std::snprintf(buf, sizeof buf, "%s", p.c_str());
    }
    MPI_Bcast(buf, sizeof buf, MPI_CHAR, 0, MPI_COMM_WORLD);
    return buf;
}

// What a trace file holds, read on rank 0 (empty elsewhere), and the checks that do not depend
// on the run: the format, the kinds, no overlap within a (pid, tid).
struct Trace {
    bool parsed = false;
    std::string format_problem;                 // first format violation, or ""
    std::map<int, std::set<int>> tids;          // pid -> tids seen
    std::map<int, std::set<std::string>> kinds;  // pid -> kinds seen
    std::size_t events = 0;
    double worst_overlap_us = 0;                // max over (pid, tid) of end(i) - start(i+1)
};

Trace read_trace(const std::string& path) {
    Trace t;
    if (world_rank() != 0) return t;
    std::ifstream f(path);
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(f);
    } catch (const nlohmann::json::parse_error& e) {
        t.format_problem = e.what();
        return t;
    }
    t.parsed = true;
    if (!j.contains("traceEvents") || !j["traceEvents"].is_array()) t.format_problem = "no traceEvents array";
    if (j.value("displayTimeUnit", std::string()) != "ms") t.format_problem = "displayTimeUnit is not ms";
    std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> spans;
    for (const auto& e : j.value("traceEvents", nlohmann::json::array())) {
        ++t.events;
        const bool ok = e.contains("name") && e["name"].is_string() && e.contains("cat") && e["cat"].is_string() &&
                        e.value("ph", std::string()) == "X" && e.contains("ts") && e["ts"].is_number() &&
                        e.contains("dur") && e["dur"].is_number() && e.contains("pid") &&
                        e["pid"].is_number_integer() && e.contains("tid") && e["tid"].is_number_integer();
        if (!ok) {
            t.format_problem = "malformed event " + e.dump();
            continue;
        }
        const std::string cat = e["cat"];
        if (!kKinds.count(cat)) t.format_problem = "undocumented kind " + cat;
        const double ts = e["ts"], dur = e["dur"];
        if (ts < 0 || dur < 0) t.format_problem = "negative ts or dur in " + e.dump();
        const int pid = e["pid"], tid = e["tid"];
        t.tids[pid].insert(tid);
        t.kinds[pid].insert(cat);
        spans[{pid, tid}].push_back({ts, ts + dur});
    }
    for (auto& [key, v] : spans) {
        std::sort(v.begin(), v.end());
        for (std::size_t i = 0; i + 1 < v.size(); ++i)
            t.worst_overlap_us = std::max(t.worst_overlap_us, v[i].second - v[i + 1].first);
    }
    return t;
}

// A Hermitian positive definite matrix: random entries, n on the diagonal.
void fill_spd(DistMatrix<double>& a) {
    const Grid2D& g = a.grid();
    for (index_t jl = 0; jl < a.n_loc(); ++jl)
        for (index_t il = 0; il < a.m_loc(); ++il) {
            const index_t i = a.layout().rows.to_global(il, g.row()), j = a.layout().cols.to_global(jl, g.col());
            const double h = double((i * 7919 + j * 104729 + std::min(i, j) * std::max(i, j)) % 1000) / 1000.0;
            a.local(il, jl) = i == j ? double(a.n()) : h - 0.5;
        }
}

}  // namespace

TEST_CASE("a traced potrf: events of every rank and every thread, documented kinds, no overlap") {
    Grid2D grid(Comm::borrow(MPI_COMM_WORLD));
    DistMatrix<double> a(grid, 1024, 1024, 64, 64);
    fill_spd(a);
    const std::string path = temp_path("cala-test-trace-potrf");
    const int threads = omp_get_max_threads();

    trace::start(grid.comm().get());
    const index_t info = potrf<double>(Uplo::Lower, a, CholeskyOptions{.lookahead = 1, .panel = PanelMode::Shared});
    trace::stop();
    trace::write(grid.comm().get(), path);

    CHECK(everywhere(info == 0));
    Trace t = read_trace(path);
    if (world_rank() == 0) {
        CHECK(t.parsed);
        CHECK(t.format_problem == "");
        CHECK(t.tids.size() == static_cast<std::size_t>(world_size()));
        for (int r = 0; r < world_size(); ++r) {
            CAPTURE(r);
            // Threads are numbered 0, 1, ... in order of their first event, so the tids are
            // 0 .. k-1 for the k <= threads threads that ran a task (which of the OpenMP team
            // took a task is the scheduler's choice: asking for all of them would be a race).
            CHECK(!t.tids[r].empty());
            CHECK(t.tids[r].size() <= static_cast<std::size_t>(threads));
            CHECK(*t.tids[r].rbegin() == static_cast<int>(t.tids[r].size()) - 1);
            CHECK(t.kinds[r].count("gemm") == 1);
        }
        CHECK(t.kinds[0].count("potrf") == 1);  // rank 0 owns the first diagonal tile
        CHECK(t.worst_overlap_us <= 1e-3);
    }

    // Off: another factorization records nothing; the file written again is the same size.
    fill_spd(a);
    potrf<double>(Uplo::Lower, a);
    trace::write(grid.comm().get(), path);
    Trace again = read_trace(path);
    if (world_rank() == 0) {
        CHECK(again.events == t.events);
        std::filesystem::remove(path);
    }
}

TEST_CASE("a trace file rank 0 cannot write is a cala::Error on every rank") {
    trace::start(MPI_COMM_WORLD);
    trace::stop();

    const std::string msg = test::error_message([] { trace::write(MPI_COMM_WORLD, "/nonexistent-dir/x/trace.json"); });

    CHECK(everywhere(msg.find("/nonexistent-dir/x/trace.json") != std::string::npos));
}

TEST_CASE("a traced master-worker product: transfers on the master, products and waits on the workers") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const index_t m = 96, n = 128, k = 64;
    std::vector<double> a, b, c;
    if (world.rank() == 0) {
        a.assign(m * k, 0.5), b.assign(k * n, 0.25), c.assign(m * n, 1.0);
    }
    mw::Options o;
    o.strategy = mw::Strategy::Het;
    o.platform = mw::Platform{16, {}};
    for (int w = 0; w < world.size() - 1; ++w) o.platform->workers.push_back({1e-4, 2e-4 * (1 + w), 12});
    o.emulation.link_slowdown.assign(static_cast<std::size_t>(world.size() - 1), 1.5);
    const std::string path = temp_path("cala-test-trace-mw");

    trace::start(MPI_COMM_WORLD);
    mw::gemm<double>(m, n, k, a.data(), m, b.data(), k, c.data(), m, world, o);
    trace::stop();
    trace::write(MPI_COMM_WORLD, path);

    Trace t = read_trace(path);
    if (world.rank() == 0) {
        CHECK(t.parsed);
        CHECK(t.format_problem == "");
        CHECK(t.kinds[0].count("transfer") == 1);
        for (int r = 1; r < world.size(); ++r) {
            CAPTURE(r);
            CHECK(t.kinds[r].count("gemm") == 1);
            CHECK(t.kinds[r].count("wait") == 1);
        }
        CHECK(t.worst_overlap_us <= 1e-3);
        // The product is right too: C = 1 + k·0.5·0.25 everywhere.
        CHECK(std::all_of(c.begin(), c.end(), [&](double x) { return std::abs(x - (1.0 + k * 0.125)) < 1e-12; }));
        std::filesystem::remove(path);
    }
}

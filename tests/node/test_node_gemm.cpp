// node::gemm (issue 19) on a cpu unit and emulated HostDevice units: every strategy against a
// naive product (all transposes, sizes the tile does not divide), Static's tiles moved == the
// allocation's projections, stealing never takes a prefetched task, two tasks of one C tile
// never overlap (from the recorded intervals), small memories, bad input.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cala/error.hpp"
#include "cala/device.hpp"
#include "cala/node.hpp"

using cala::index_t;
using cala::Op;
namespace node = cala::node;

namespace {

template <class T>
T pick(std::mt19937& g) {
    std::uniform_real_distribution<double> u(-1, 1);
    if constexpr (cala::is_complex_v<T>) return T(u(g), u(g));
    else return T(u(g));
}

template <class T>
struct Case {
    index_t m, n, k, lda, ldb, ldc;
    Op oa, ob;
    std::vector<T> a, b, c, c0, ref;
    T alpha, beta;

    Case(Op oa_, Op ob_, index_t m_, index_t n_, index_t k_, bool beta_zero, unsigned seed)
        : m(m_), n(n_), k(k_), oa(oa_), ob(ob_) {
        std::mt19937 g(seed);
        alpha = pick<T>(g), beta = beta_zero ? T{0} : pick<T>(g);
        const index_t ar = oa == Op::N ? m : k, ac = oa == Op::N ? k : m;
        const index_t br = ob == Op::N ? k : n, bc = ob == Op::N ? n : k;
        lda = ar + 3, ldb = br + 1, ldc = m + 2;
        a.resize(static_cast<std::size_t>(lda * ac)), b.resize(static_cast<std::size_t>(ldb * bc));
        c.resize(static_cast<std::size_t>(ldc * std::max<index_t>(n, 1)));
        for (auto& x : a) x = pick<T>(g);
        for (auto& x : b) x = pick<T>(g);
        for (auto& x : c) x = beta_zero ? T(std::numeric_limits<double>::quiet_NaN()) : pick<T>(g);
        c0 = c, ref = c;
        auto A = [&](index_t i, index_t l) { return oa == Op::N ? a[i + l * lda] : cala::conj_if(a[l + i * lda], oa == Op::C); };
        auto B = [&](index_t l, index_t j) { return ob == Op::N ? b[l + j * ldb] : cala::conj_if(b[j + l * ldb], ob == Op::C); };
        for (index_t j = 0; j < n; ++j)
            for (index_t i = 0; i < m; ++i) {
                T s{0};
                for (index_t l = 0; l < k; ++l) s += A(i, l) * B(l, j);
                ref[i + j * ldc] = alpha * s + (beta == T{0} ? T{0} : beta * c[i + j * ldc]);
            }
    }
    node::NodeReport run(node::NodeOptions o) {
        node::NodeReport rep;
        o.report = &rep;
        node::gemm<T>(oa, ob, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc, o);
        return rep;
    }
    double error() const {
        double e = 0, r = 0;
        for (index_t j = 0; j < n; ++j)
            for (index_t i = 0; i < m; ++i) {
                e = std::max(e, static_cast<double>(std::abs(c[i + j * ldc] - ref[i + j * ldc])));
                r = std::max(r, static_cast<double>(std::abs(ref[i + j * ldc])));
            }
        if (std::isnan(e)) return 1e300;
        return e / std::max(r, 1.0);
    }
    bool untouched() const {
        for (std::size_t q = 0; q < c.size(); ++q)
            if (!(c[q] == c0[q]) && !(std::isnan(std::abs(c[q])) && std::isnan(std::abs(c0[q])))) return false;
        return true;
    }
};

template <class T>
double bound(index_t k) {
    return 8.0 * static_cast<double>(cala::eps<T>()) * static_cast<double>(k + 2);
}

struct Config {
    const char* units;
    std::vector<double> speeds;
};

const std::vector<Config>& configs() {
    static const std::vector<Config> c{{"cpu", {1}},
                                       {"host", {3}},
                                       {"cpu,host", {1, 4}},
                                       {"host,host", {1, 1}},
                                       {"cpu,host,host", {1, 4, 4}},
                                       {"cpu,host,host,host", {1, 4, 4, 8}},
                                       {"cpu,cpu,host", {1, 1, 4}}};  // two aggregated cpu teams
    return c;
}

std::vector<node::Strategy> strategies() {
    auto s = node::all_strategies();
    s.push_back({node::Placement::Columns, node::Steal::Rand});
    s.push_back({node::Placement::Cyclic, node::Steal::Effective});
    return s;
}

// Checks that hold for every run: tasks and steals add up, a task runs where it was prefetched
// (so no prefetched task was stolen), and two tasks of one C tile never overlap.
void check_records(const node::NodeReport& rep, index_t mt, index_t nt, index_t kt) {
    REQUIRE(static_cast<index_t>(rep.tasks.size()) == mt * nt * kt);
    std::int64_t tasks = 0, stolen = 0, moved = 0;
    for (const auto& u : rep.units) tasks += u.tasks, stolen += u.stolen, moved += u.tiles_in + u.tiles_out;
    CHECK(tasks == mt * nt * kt);
    CHECK(stolen == rep.steals);
    CHECK(moved == rep.tiles_moved);
    std::int64_t ran_elsewhere = 0;
    std::map<std::pair<index_t, index_t>, std::vector<std::pair<double, double>>> by_c;
    std::vector<int> seen(static_cast<std::size_t>(mt * nt * kt), 0);
    for (const auto& t : rep.tasks) {
        CHECK(t.prefetched == t.ran);
        CHECK(t.ran >= 0);
        CHECK(t.t0 <= t.t1);
        ran_elsewhere += t.ran != t.planned;
        ++seen[static_cast<std::size_t>(t.i + t.j * mt + t.l * mt * nt)];
        by_c[{t.i, t.j}].emplace_back(t.t0, t.t1);
    }
    CHECK(ran_elsewhere == rep.steals);
    CHECK(std::count(seen.begin(), seen.end(), 1) == mt * nt * kt);
    for (auto& [ij, iv] : by_c) {
        std::sort(iv.begin(), iv.end());
        for (std::size_t q = 1; q < iv.size(); ++q) CHECK(iv[q - 1].second <= iv[q].first);
    }
}

}  // namespace

TEST_CASE_TEMPLATE("node::gemm: every strategy and unit set matches the reference, all transposes", T, double,
                   std::complex<float>) {
    const Op ops[] = {Op::N, Op::T, Op::C};
    unsigned seed = 11;
    for (const auto& cfg : configs())
        for (const auto& st : strategies())
            for (Op oa : ops)
                for (Op ob : ops) {
                    if (!cala::is_complex_v<T> && (oa == Op::C || ob == Op::C)) continue;
                    const std::string units_name = cfg.units;
                    CAPTURE(units_name);
                    CAPTURE(node::strategy_name(st));
                    CAPTURE(cala::op_char(oa));
                    CAPTURE(cala::op_char(ob));
                    ++seed;
                    Case<T> cs(oa, ob, 37, 29, 23, seed % 4 == 0, seed);
                    node::NodeOptions o;
                    o.units = cfg.units, o.speeds = cfg.speeds, o.strategy = st, o.tile = 8, o.record_tasks = true;

                    const auto rep = cs.run(o);

                    CHECK(cs.error() <= bound<T>(cs.k));
                    CHECK(rep.strategy == node::strategy_name(st));
                    CHECK(rep.units.size() == cfg.speeds.size());
                    check_records(rep, 5, 4, 3);
                }
}

TEST_CASE("node::gemm: Static moves exactly the allocation's projections; the cpu unit moves nothing") {
    const std::vector<double> speeds{1, 4, 4, 8};
    const index_t m = 61, n = 50, k = 33, t = 8;  // 8 x 7 tiles, kt = 5
    const index_t mt = 8, nt = 7, kt = 5;
    for (auto p : {node::Placement::NrrpRounded, node::Placement::NrrpPrecise, node::Placement::Columns,
                   node::Placement::Cyclic}) {
        CAPTURE(static_cast<int>(p));
        Case<double> cs(Op::N, Op::T, m, n, k, false, 5);
        node::NodeOptions o;
        o.units = "cpu,host,host,host", o.speeds = speeds, o.strategy = {p, node::Steal::Static}, o.tile = t;
        o.record_tasks = true;
        const node::Allocation al = p == node::Placement::NrrpRounded
                                        ? node::nrrp_allocation(speeds, mt, nt, node::Discretization::Rounded)
                                    : p == node::Placement::NrrpPrecise
                                        ? node::nrrp_allocation(speeds, mt, nt, node::Discretization::Precise)
                                    : p == node::Placement::Columns ? node::column_blocks(speeds, mt, nt)
                                                                    : node::cyclic_columns(4, mt, nt);

        const auto rep = cs.run(o);

        CHECK(cs.error() <= bound<double>(k));
        CHECK(rep.steals == 0);
        std::int64_t model = 0;
        for (int u = 0; u < 4; ++u) {
            CAPTURE(u);
            const auto& s = rep.units[static_cast<std::size_t>(u)];
            CHECK(s.tasks == al.tiles(u) * kt);
            const std::int64_t in = u == 0 ? 0 : kt * (al.rows(u) + al.cols(u)) + al.tiles(u);
            const std::int64_t out = u == 0 ? 0 : al.tiles(u);
            CHECK(s.tiles_in == in);
            CHECK(s.tiles_out == out);
            model += in + out;
        }
        CHECK(rep.tiles_moved == model);
        check_records(rep, mt, nt, kt);
        for (const auto& r : rep.tasks) CHECK(r.ran == al.owner(r.i, r.j));
    }
}

TEST_CASE("node::gemm: emulated speeds; stealing takes only listed tasks, C tiles never overlap") {
    // One column of C tiles: cyclic dealing gives every task to unit 0 (speed 1); the others
    // have empty lists from the start and must steal.
    for (const char* name : {"cyclic-effective", "cyclic-rand"}) {
        CAPTURE(name);
        Case<double> cs(Op::N, Op::N, 40, 8, 24, false, 3);
        node::NodeOptions o;
        o.units = "cpu,host,host,host", o.speeds = {1, 4, 4, 8}, o.strategy = node::parse_strategy(name), o.tile = 8;
        o.emulate_tile_s = 0.004, o.emulate_link_s = 0.0002, o.record_tasks = true;

        const auto rep = cs.run(o);

        CHECK(cs.error() <= bound<double>(24));
        check_records(rep, 5, 1, 3);
        CHECK(rep.steals > 0);
        CHECK(rep.units[0].tasks + rep.steals == 15);
    }
    for (const char* name : {"nrrp-rounded-effective", "nrrp-precise-rand", "dmda", "columns-effective"}) {
        CAPTURE(name);
        Case<double> cs(Op::T, Op::N, 48, 40, 16, false, 4);
        node::NodeOptions o;
        o.units = "cpu,host,host,host", o.speeds = {1, 4, 4, 8}, o.strategy = node::parse_strategy(name), o.tile = 8;
        o.emulate_tile_s = 0.002, o.emulate_link_s = 0.0002, o.record_tasks = true;

        const auto rep = cs.run(o);

        CHECK(cs.error() <= bound<double>(16));
        check_records(rep, 6, 5, 2);
        for (const auto& u : rep.units) CHECK(u.busy_s + u.idle_s >= rep.seconds * 0.999);
    }
}

TEST_CASE("node::gemm: units with memory for a few tiles evict and write back, results unchanged") {
    for (std::int64_t tiles : {3, 4, 7}) {
        for (const char* name : {"nrrp-rounded-effective", "dmda", "cyclic", "nrrp-precise-static"}) {
            CAPTURE(tiles);
            CAPTURE(name);
            Case<double> cs(Op::N, Op::N, 45, 38, 27, true, 9);
            node::NodeOptions o;
            o.units = "cpu,host,host", o.speeds = {1, 2, 4}, o.strategy = node::parse_strategy(name), o.tile = 8;
            o.max_device_bytes = tiles * 8 * 8 * static_cast<std::int64_t>(sizeof(double));
            o.record_tasks = true;

            const auto rep = cs.run(o);

            CHECK(cs.error() <= bound<double>(27));
            check_records(rep, 6, 5, 4);
            for (std::size_t u = 1; u < rep.units.size(); ++u) CHECK(rep.units[u].peak_tiles <= tiles);
        }
    }
}

TEST_CASE("node::gemm: empty sizes, alpha == 0, beta == 0 with NaN in C") {
    for (auto [m, n, k] : {std::array<index_t, 3>{0, 5, 5}, {5, 0, 5}, {5, 5, 0}, {1, 1, 1}, {3, 2, 1}}) {
        Case<double> cs(Op::N, Op::N, m, n, k, true, 2);
        node::NodeOptions o;
        o.units = "cpu,host", o.speeds = {1, 4}, o.tile = 4;

        cs.run(o);

        CHECK(cs.error() <= bound<double>(k));
    }
    Case<double> cs(Op::N, Op::N, 9, 9, 9, false, 3);
    cs.alpha = 0;
    for (auto& x : cs.ref) x = 0;
    for (index_t j = 0; j < 9; ++j)
        for (index_t i = 0; i < 9; ++i) cs.ref[i + j * cs.ldc] = cs.beta * cs.c[i + j * cs.ldc];
    node::NodeOptions o;
    o.units = "host", o.tile = 4;
    cs.run(o);
    CHECK(cs.error() <= bound<double>(1));
}

TEST_CASE("node::gemm: bad input names the argument and leaves C untouched") {
    Case<double> cs(Op::N, Op::N, 10, 10, 10, false, 1);
    auto expect = [&](node::NodeOptions o, const char* what) {
        CAPTURE(what);
        CHECK_THROWS_WITH_AS(cs.run(o), doctest::Contains(what), cala::Error);
        CHECK(cs.untouched());
    };
    node::NodeOptions o;
    o.units = "cpu,host", o.tile = 4;
    o.speeds = {1, 2, 3};
    expect(o, "more speeds than units");
    o.speeds = {1};
    expect(o, "fewer speeds than units");
    o.speeds = {1, 0};
    expect(o, "speeds[1]");
    o.speeds = {-2, 1};
    expect(o, "speeds[0]");
    o.speeds = {1, std::numeric_limits<double>::quiet_NaN()};
    expect(o, "speeds[1]");
    o.speeds = {1, 1};
    o.units = "cpu,gpu";
    expect(o, "'gpu'");
    o.units = "cpu,host";
    o.max_device_bytes = 2 * 4 * 4 * 8;
    expect(o, "one task needs 3");
    o.max_device_bytes = 0;
    o.strategy = {node::Placement::Dmda, node::Steal::Effective};
    expect(o, "dmda");
    CHECK_THROWS_WITH_AS(node::parse_strategy("nrrp-fast"), doctest::Contains("nrrp-fast"), cala::Error);
    o.strategy = {};
    o.tile = -1;
    expect(o, "tile");
    node::NodeOptions ok;
    ok.units = "cpu";
    CHECK_THROWS_WITH_AS(node::gemm<double>(Op::N, Op::N, 10, 10, 10, 1.0, cs.a.data(), 9, cs.b.data(), cs.ldb, 1.0,
                                            cs.c.data(), cs.ldc, ok),
                         doctest::Contains("lda"), cala::Error);
    CHECK(cs.untouched());
}

TEST_CASE("strategy names round-trip") {
    for (const auto& s : strategies()) {
        const auto back = node::parse_strategy(node::strategy_name(s));
        CHECK(back.placement == s.placement);
        CHECK(back.steal == s.steal);
    }
    CHECK(node::strategy_name({node::Placement::NrrpRounded, node::Steal::Effective}) == "nrrp-rounded-effective");
    CHECK(node::strategy_name({node::Placement::NrrpPrecise, node::Steal::Static}) == "nrrp-precise-static");
    CHECK(node::strategy_name({node::Placement::Cyclic, node::Steal::Static}) == "cyclic");
    CHECK(node::strategy_name({node::Placement::Dmda, node::Steal::Static}) == "dmda");
}

TEST_CASE("device_gemm on a list of several kinds of unit runs on the node, one allocation per chunk of C") {
    for (const char* strategy : {"nrrp-rounded-effective", "nrrp-precise-static", "dmda", "cyclic"}) {
        CAPTURE(strategy);
        Case<double> cs(Op::T, Op::N, 70, 61, 35, false, 21);
        cala::DeviceGemmReport rep;
        cala::DeviceGemmOptions o;
        o.devices = "cpu,host,host", o.speeds = {1, 4, 4}, o.strategy = strategy, o.tile = 8, o.report = &rep;
        o.max_device_bytes = 8 * 8 * 8 * static_cast<std::int64_t>(sizeof(double));  // 8 tiles each

        cala::device_gemm<double>(cs.oa, cs.ob, cs.m, cs.n, cs.k, cs.alpha, cs.a.data(), cs.lda, cs.b.data(), cs.ldb,
                                  cs.beta, cs.c.data(), cs.ldc, o);

        CHECK(cs.error() <= bound<double>(cs.k));
        CHECK(rep.regime == 'n');
        CHECK(rep.c < 8);  // 8 tile columns: C came in several chunks
        REQUIRE(rep.devices.size() == 3);
        CHECK(rep.devices[0].h2d + rep.devices[0].d2h == 0);  // the cpu unit reads host memory
        for (int u = 1; u < 3; ++u) CHECK(rep.devices[u].peak_bytes <= rep.devices[u].budget_bytes);
        // Without emulated speeds the cpu unit (no copies) may steal every task; Static and the
        // DMDA plan keep the devices' share on the devices. Cyclic on one-column chunks deals
        // every chunk to unit 0.
        if (std::string(strategy) == "nrrp-precise-static" || std::string(strategy) == "dmda")
            CHECK(rep.devices[1].h2d + rep.devices[2].h2d > 0);
    }
    CHECK(cala::uses_node("cpu,0,1"));
    CHECK(cala::uses_node("host,0"));
    CHECK(cala::uses_node("cpu"));
    CHECK_FALSE(cala::uses_node("host,host"));
    CHECK_FALSE(cala::uses_node("0,1"));
}

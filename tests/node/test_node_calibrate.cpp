// node::calibrate (issue 19, item 1): each unit's speed from one tile GEMM on the unit, cached
// per process. Emulated units whose real GEMM fits their hold give their emulated speeds back
// (the calibration times a unit as at least its hold); real units give positive, finite speeds,
// the slowest 1; a second call times nothing; node::gemm without speeds calibrates and computes
// right; bad input is a cala::Error naming the argument, C untouched. No timing is asserted.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cala/error.hpp"
#include "cala/node.hpp"

using cala::index_t;
using cala::Op;
namespace node = cala::node;

namespace {
template <class F>
std::string error_message(F&& f) {
    try {
        f();
    } catch (const cala::Error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("calibration of real units: positive, finite, the slowest 1, cached") {
    node::NodeOptions o;
    o.units = "cpu,host";
    o.tile = 24;
    const std::int64_t before = node::calibrations();

    const std::vector<double> s = node::calibrate(o);
    const std::int64_t timed = node::calibrations() - before;
    const std::vector<double> again = node::calibrate(o);

    REQUIRE(s.size() == 2);
    CHECK(timed == 2);
    CHECK(node::calibrations() - before == 2);  // the second call measured nothing
    CHECK(again == s);
    for (double x : s) CHECK((std::isfinite(x) && x >= 1.0));
    CHECK(*std::min_element(s.begin(), s.end()) == 1.0);
}

TEST_CASE("calibration of emulated units gives their emulated speeds back") {
    node::NodeOptions o;
    o.units = "cpu,host,host";
    o.tile = 16;  // microseconds of real GEMM against holds of 20 to 80 ms
    o.emulate_tile_s = 0.08;
    o.emulate_speeds = {1, 4, 2};

    const std::vector<double> s = node::calibrate(o);

    REQUIRE(s.size() == 3);
    CHECK(s[0] == doctest::Approx(1).epsilon(1e-12));
    CHECK(s[1] == doctest::Approx(4).epsilon(1e-12));
    CHECK(s[2] == doctest::Approx(2).epsilon(1e-12));
}

TEST_CASE("node::gemm without speeds runs on calibrated speeds and computes right") {
    const index_t m = 29, n = 23, k = 19;
    std::vector<double> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n)),
        c(static_cast<std::size_t>(m * n), std::numeric_limits<double>::quiet_NaN()), ref(c.size(), 0.0);
    for (std::size_t x = 0; x < a.size(); ++x) a[x] = std::sin(0.3 * double(x));
    for (std::size_t x = 0; x < b.size(); ++x) b[x] = std::cos(0.7 * double(x));
    for (index_t j = 0; j < n; ++j)
        for (index_t l = 0; l < k; ++l)
            for (index_t i = 0; i < m; ++i) ref[i + j * m] += a[i + l * m] * b[l + j * k];
    node::NodeReport rep;
    node::NodeOptions o;
    o.units = "cpu,host,host";
    o.tile = 8;
    o.emulate_tile_s = 0.004;  // 8^3 GEMMs take microseconds
    o.emulate_speeds = {1, 4, 4};
    o.record_tasks = true;
    o.report = &rep;
    const std::int64_t before = node::calibrations();

    node::gemm<double>(Op::N, Op::N, m, n, k, 1.0, a.data(), m, b.data(), k, 0.0, c.data(), m, o);
    const std::int64_t timed = node::calibrations() - before;
    node::gemm<double>(Op::N, Op::N, m, n, k, 1.0, a.data(), m, b.data(), k, 0.0, c.data(), m, o);

    double err = 0;
    for (std::size_t x = 0; x < c.size(); ++x) err = std::max(err, std::abs(c[x] - ref[x]));
    CHECK(err < 1e-12);
    CHECK(timed == 3);
    CHECK(node::calibrations() - before == 3);
    REQUIRE(rep.units.size() == 3);
    CHECK(rep.units[0].speed == doctest::Approx(1).epsilon(1e-12));
    CHECK(rep.units[1].speed == doctest::Approx(4).epsilon(1e-12));
    CHECK(rep.units[2].speed == doctest::Approx(4).epsilon(1e-12));
    CHECK(std::int64_t(rep.tasks.size()) == rep.mt * rep.nt * rep.kt);
}

TEST_CASE("bad calibration input is a cala::Error naming the argument, C untouched") {
    auto msg = [](node::NodeOptions o) { return error_message([&] { node::calibrate(o); }); };
    node::NodeOptions o;
    o.units = "cpu,host";
    o.tile = 64;

    node::NodeOptions small = o;
    small.max_device_bytes = 2 * 64 * 64 * 8;  // two tiles of doubles
    node::NodeOptions zero = o, nan = o, count = o, unit = o, tile = o;
    zero.emulate_tile_s = 1, zero.emulate_speeds = {1, 0};
    nan.emulate_tile_s = 1, nan.emulate_speeds = {std::numeric_limits<double>::quiet_NaN(), 1};
    count.emulate_speeds = {1};
    unit.units = "cpu,gpu";
    tile.tile = -1;

    CHECK(msg(small).find("max_device_bytes") != std::string::npos);
    CHECK(msg(zero).find("node::calibrate: emulate_speeds: speeds[1] is 0") != std::string::npos);
    CHECK(msg(nan).find("node::calibrate: emulate_speeds: speeds[0] is nan") != std::string::npos);
    CHECK(msg(count).find("emulate_speeds: 1 speeds given for 2 units") != std::string::npos);
    CHECK(msg(unit).find("'gpu'") != std::string::npos);
    CHECK(msg(tile).find("tile is -1") != std::string::npos);
    std::vector<double> a(16, 1.0), c(16, 7.0);
    node::NodeOptions g = zero;
    g.tile = 2;
    const std::string e = error_message(
        [&] { node::gemm<double>(Op::N, Op::N, 4, 4, 4, 1.0, a.data(), 4, a.data(), 4, 0.0, c.data(), 4, g); });
    CHECK(e.find("node::gemm: emulate_speeds: speeds[1] is 0") != std::string::npos);
    CHECK(std::all_of(c.begin(), c.end(), [](double x) { return x == 7.0; }));
}

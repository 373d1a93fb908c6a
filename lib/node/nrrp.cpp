// NRRP (non-rectangular recursive partitioning, Beaumont et al., used by the seed of issue 19):
// the region is cut recursively, each level trying
//   - a cut across its longer side between two groups of units (the largest unit alone, and the
//     prefix of the units sorted by speed whose sum is closest to half), zones of area
//     proportional to each group's speed;
//   - the "square corner": all units but the largest in a square at the corner, the largest
//     taking the L around it (two rectangles);
// and keeping the candidate whose finished sub-partition has the smaller sum of half-perimeters.
// Every candidate the rule-based NRRP would take is among these, so the result is never worse;
// tests/node/test_allocation.cpp checks the 2/√3 bound on random speeds.
//
// Worked example, speeds {1, 4, 4, 8} on the unit square (areas 1/17, 4/17, 4/17, 8/17):
//   level 0: cut x at 8/17: unit 3 (speed 8) gets [0, 8/17) x [0, 1), the rest [8/17, 1) x [0, 1);
//   level 1 (9/17 x 1, longer side y): unit 1 gets y in [0, 4/9), units {2, 0} the rest;
//   level 2 (9/17 x 5/9): square corner, unit 0 a square of side 1/√17 at (1, 1), unit 2 the L.
//   Half-perimeters 1 + 8/17, 9/17 + 4/9, 9/17 + 5/9, 2/√17: sum 4.014, bound 2·Σ√s = 3.797 (ratio 1.057).

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "cala/error.hpp"
#include "cala/node.hpp"
#include "core/check.hpp"

namespace cala::node {

void check_speeds(std::span<const double> speeds, int units, const char* what) {
    if (speeds.empty()) throw Error(detail::cat(what, ": no speeds given"));
    if (units >= 0 && static_cast<int>(speeds.size()) > units)
        throw Error(detail::cat(what, ": ", speeds.size(), " speeds given for ", units, " units (more speeds than units)"));
    if (units >= 0 && static_cast<int>(speeds.size()) < units)
        throw Error(detail::cat(what, ": ", speeds.size(), " speeds given for ", units, " units (fewer speeds than units)"));
    for (std::size_t u = 0; u < speeds.size(); ++u)
        if (!std::isfinite(speeds[u]) || !(speeds[u] > 0))
            throw Error(detail::cat(what, ": speeds[", u, "] is ", speeds[u], ", must be a finite number > 0"));
}

namespace {

struct Item {
    double area;
    int unit;
};

struct Result {
    double cost = 0;
    std::vector<Rect> rects;
};

Result part(double x0, double x1, double y0, double y1, std::span<const Item> items) {
    if (items.size() == 1) return {(x1 - x0) + (y1 - y0), {Rect{x0, x1, y0, y1, items[0].unit}}};
    const double w = x1 - x0, h = y1 - y0;
    double total = 0;
    for (const Item& it : items) total += it.area;
    // Split points: the largest alone, and the prefix whose sum is closest to half.
    std::vector<std::size_t> ks{1};
    {
        double s = 0, best = 2 * total;
        std::size_t kb = 1;
        for (std::size_t k = 1; k < items.size(); ++k) {
            s += items[k - 1].area;
            if (std::abs(s - total / 2) < best) best = std::abs(s - total / 2), kb = k;
        }
        if (kb != 1) ks.push_back(kb);
    }
    Result best;
    bool have = false;
    for (std::size_t k : ks) {
        double s = 0;
        for (std::size_t q = 0; q < k; ++q) s += items[q].area;
        const double f = s / total;
        Result r1, r2;
        if (w >= h) {
            const double xm = x0 + f * w;
            r1 = part(x0, xm, y0, y1, items.first(k));
            r2 = part(xm, x1, y0, y1, items.subspan(k));
        } else {
            const double ym = y0 + f * h;
            r1 = part(x0, x1, y0, ym, items.first(k));
            r2 = part(x0, x1, ym, y1, items.subspan(k));
        }
        if (!have || r1.cost + r2.cost < best.cost) {
            best.cost = r1.cost + r2.cost;
            best.rects = std::move(r1.rects);
            best.rects.insert(best.rects.end(), r2.rects.begin(), r2.rects.end());
            have = true;
        }
    }
    // Square corner: the rest in a square at (x1, y1), the largest around it.
    const double side = std::sqrt(std::max(0.0, total - items[0].area) / total * w * h);
    if (side < std::min(w, h)) {
        const double xs = x1 - side, ys = y1 - side;
        Result r2 = part(xs, x1, ys, y1, items.subspan(1));
        const double cost = w + h + r2.cost;
        if (cost < best.cost) {
            best.cost = cost;
            best.rects = {Rect{x0, xs, y0, y1, items[0].unit}, Rect{xs, x1, y0, ys, items[0].unit}};
            best.rects.insert(best.rects.end(), r2.rects.begin(), r2.rects.end());
        }
    }
    return best;
}

}  // namespace

std::vector<Rect> nrrp(std::span<const double> speeds, double width, double height) {
    check_speeds(speeds, -1, "nrrp");
    if (!std::isfinite(width) || !(width > 0) || !std::isfinite(height) || !(height > 0))
        throw Error(detail::cat("nrrp: width ", width, " and height ", height, " must be finite and > 0"));
    const double sum = std::accumulate(speeds.begin(), speeds.end(), 0.0);
    std::vector<Item> items;
    for (std::size_t u = 0; u < speeds.size(); ++u)
        items.push_back({speeds[u] / sum * width * height, static_cast<int>(u)});
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.area > b.area; });
    return part(0, width, 0, height, items).rects;
}

namespace {
double union_length(std::vector<std::pair<double, double>> iv) {
    std::sort(iv.begin(), iv.end());
    double len = 0, lo = 0, hi = 0;
    bool open = false;
    for (auto [a, b] : iv) {
        if (!open || a > hi) {
            if (open) len += hi - lo;
            lo = a, hi = b, open = true;
        } else {
            hi = std::max(hi, b);
        }
    }
    if (open) len += hi - lo;
    return len;
}
}  // namespace

double half_perimeter_sum(std::span<const Rect> zones, int units) {
    double sum = 0;
    for (int u = 0; u < units; ++u) {
        std::vector<std::pair<double, double>> xs, ys;
        for (const Rect& r : zones)
            if (r.unit == u && r.x1 > r.x0 && r.y1 > r.y0) xs.emplace_back(r.x0, r.x1), ys.emplace_back(r.y0, r.y1);
        sum += union_length(std::move(xs)) + union_length(std::move(ys));
    }
    return sum;
}

}  // namespace cala::node

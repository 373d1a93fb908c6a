// Tile allocations: ROUNDED and PRECISE (seed Algorithm 1) discretizations of an NRRP partition,
// the 1D column-block baseline and today's cyclic dealing.

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "cala/error.hpp"
#include "cala/node.hpp"
#include "core/check.hpp"

namespace cala::node {

Allocation::Allocation(index_t mt, index_t nt, int units)
    : mt_(mt), nt_(nt), units_(units), owner_(static_cast<std::size_t>(mt * nt), -1) {
    if (mt < 0 || nt < 0 || units < 1)
        throw Error(detail::cat("Allocation: mt=", mt, " nt=", nt, " units=", units, " (need mt, nt >= 0, units >= 1)"));
}

index_t Allocation::tiles(int u) const { return std::count(owner_.begin(), owner_.end(), u); }

index_t Allocation::rows(int u) const {
    index_t r = 0;
    for (index_t i = 0; i < mt_; ++i)
        for (index_t j = 0; j < nt_; ++j)
            if (owner(i, j) == u) {
                ++r;
                break;
            }
    return r;
}

index_t Allocation::cols(int u) const {
    index_t c = 0;
    for (index_t j = 0; j < nt_; ++j)
        for (index_t i = 0; i < mt_; ++i)
            if (owner(i, j) == u) {
                ++c;
                break;
            }
    return c;
}

namespace {
// Round() of the seed: halves go up.
index_t round_half_up(double x) { return static_cast<index_t>(std::floor(x + 0.5)); }

void check_grid(const char* what, index_t mt, index_t nt) {
    if (mt < 0 || nt < 0) throw Error(detail::cat(what, ": tile grid ", mt, " x ", nt, " has a negative size"));
}
}  // namespace

std::vector<index_t> precise_shares(std::span<const double> speeds, index_t total) {
    check_speeds(speeds, -1, "precise_shares");
    if (total < 0) throw Error(detail::cat("precise_shares: total is ", total, ", must be >= 0"));
    const double sum = std::accumulate(speeds.begin(), speeds.end(), 0.0);
    std::vector<index_t> n(speeds.size());
    double part = 0;
    index_t given = 0;
    for (std::size_t u = 0; u < speeds.size(); ++u) {
        part += speeds[u];
        const index_t upto = u + 1 == speeds.size() ? total : std::min(total, round_half_up(part / sum * static_cast<double>(total)));
        n[u] = std::max<index_t>(0, upto - given);
        given += n[u];
    }
    return n;
}

Allocation rounded(std::span<const Rect> zones, int units, index_t mt, index_t nt) {
    check_grid("rounded", mt, nt);
    Allocation al(mt, nt, units);
    std::vector<int> hits(static_cast<std::size_t>(mt * nt), 0);
    for (const Rect& r : zones) {
        const index_t i0 = std::clamp<index_t>(round_half_up(r.x0), 0, mt), i1 = std::clamp<index_t>(round_half_up(r.x1), 0, mt);
        const index_t j0 = std::clamp<index_t>(round_half_up(r.y0), 0, nt), j1 = std::clamp<index_t>(round_half_up(r.y1), 0, nt);
        for (index_t j = j0; j < j1; ++j)
            for (index_t i = i0; i < i1; ++i) {
                al.set(i, j, r.unit);
                ++hits[static_cast<std::size_t>(i + j * mt)];
            }
    }
    for (index_t j = 0; j < nt; ++j)
        for (index_t i = 0; i < mt; ++i)
            if (hits[static_cast<std::size_t>(i + j * mt)] != 1)
                throw Error(detail::cat("rounded: tile (", i, ", ", j, ") is covered ", hits[static_cast<std::size_t>(i + j * mt)],
                                        " times by the rounded zones (the zones do not tile [0, ", mt, ") x [0, ", nt, "))"));
    return al;
}

Allocation precise(std::span<const Rect> zones, std::span<const double> speeds, index_t mt, index_t nt) {
    check_grid("precise", mt, nt);
    const int units = static_cast<int>(speeds.size());
    auto owed = precise_shares(speeds, mt * nt);
    Allocation al(mt, nt, units);
    // Wave 1: inner rectangles (tiles wholly inside a rectangle), while the unit is owed tiles.
    for (const Rect& r : zones) {
        if (r.unit < 0 || r.unit >= units) throw Error(detail::cat("precise: a zone names unit ", r.unit, " of ", units));
        const index_t i0 = std::max<index_t>(0, static_cast<index_t>(std::ceil(r.x0)));
        const index_t i1 = std::min<index_t>(mt, static_cast<index_t>(std::floor(r.x1)));
        const index_t j0 = std::max<index_t>(0, static_cast<index_t>(std::ceil(r.y0)));
        const index_t j1 = std::min<index_t>(nt, static_cast<index_t>(std::floor(r.y1)));
        for (index_t j = j0; j < j1; ++j)
            for (index_t i = i0; i < i1; ++i)
                if (al.owner(i, j) < 0 && owed[r.unit] > 0) al.set(i, j, r.unit), --owed[r.unit];
    }
    // Wave 2: every tile left, to the neighbour owed the fewest (still > 0), else to the unit
    // owed the fewest (> 0).
    for (index_t j = 0; j < nt; ++j)
        for (index_t i = 0; i < mt; ++i) {
            if (al.owner(i, j) >= 0) continue;
            int pick = -1;
            for (index_t dj = -1; dj <= 1; ++dj)
                for (index_t di = -1; di <= 1; ++di) {
                    const index_t ii = i + di, jj = j + dj;
                    if (ii < 0 || jj < 0 || ii >= mt || jj >= nt) continue;
                    const int p = al.owner(ii, jj);
                    if (p >= 0 && owed[p] > 0 && (pick < 0 || owed[p] < owed[pick] || (owed[p] == owed[pick] && p < pick)))
                        pick = p;
                }
            if (pick < 0)
                for (int p = 0; p < units; ++p)
                    if (owed[p] > 0 && (pick < 0 || owed[p] < owed[pick])) pick = p;
            if (pick < 0) throw Error("precise: internal error, a tile is left with no unit owed tiles");
            al.set(i, j, pick);
            --owed[pick];
        }
    return al;
}

Allocation column_blocks(std::span<const double> speeds, index_t mt, index_t nt) {
    check_grid("column_blocks", mt, nt);
    const auto w = precise_shares(speeds, nt);
    Allocation al(mt, nt, static_cast<int>(speeds.size()));
    index_t j = 0;
    for (std::size_t u = 0; u < w.size(); ++u)
        for (index_t q = 0; q < w[u]; ++q, ++j)
            for (index_t i = 0; i < mt; ++i) al.set(i, j, static_cast<int>(u));
    return al;
}

Allocation cyclic_columns(int units, index_t mt, index_t nt) {
    check_grid("cyclic_columns", mt, nt);
    Allocation al(mt, nt, units);
    for (index_t j = 0; j < nt; ++j)
        for (index_t i = 0; i < mt; ++i) al.set(i, j, static_cast<int>(j % units));
    return al;
}

Allocation nrrp_allocation(std::span<const double> speeds, index_t mt, index_t nt, Discretization d) {
    check_speeds(speeds, -1, "nrrp_allocation");
    check_grid("nrrp_allocation", mt, nt);
    const int units = static_cast<int>(speeds.size());
    if (mt == 0 || nt == 0) return Allocation(mt, nt, units);
    const auto zones = nrrp(speeds, static_cast<double>(mt), static_cast<double>(nt));
    return d == Discretization::Rounded ? rounded(zones, units, mt, nt) : precise(zones, speeds, mt, nt);
}

}  // namespace cala::node

// Analytic cost of cala::stencil: messages, words and updates per rank, predicted time, choice
// of the depth s. Written from the algorithm (stencil.cpp's and exchange.hpp's header comments);
// it shares no code with what it models.
//
// Per cycle of c steps (width w = c·r) on a rank owning n_x × n_y (× n_z), the halo moving
// dimension by dimension (faces only; edges and corners ride in the later faces):
//   messages sent = received = #{faces (d, ±) with a neighbour, not past a Dirichlet side,
//                               not oneself}                      (at most 2·dim, any stencil)
//   words sent = received    = sum over those faces of w · prod_{e<d} (n_e + a_e) · prod_{e>d} n_e,
//     a_e = w·(sides of e with a neighbour, oneself included) when the cycle reads corners (a box,
//     or a star with c >= 2), else 0;
//   updates                  = sum_{t=1..c} prod_d (n_d + g_d·(c - t)·r),
//   cached_updates           = the same sum over t = 2..c (swept together, in cache),
// where g_d (0, 1 or 2) counts the sides of d that are not a Dirichlet boundary of the domain.
//   2D 5-point, interior rank, s = c >= 2: per step 4/s messages sent,
//   (2·n_x + 2·(n_y + 2·s·r))·s·r / s words sent, and
//   sum_t (n_x + 2(s-t)r)(n_y + 2(s-t)r)/s updates.

#include <algorithm>
#include <limits>
#include <set>

#include "cala/stencil.hpp"
#include "core/check.hpp"
#include "stencil/internal.hpp"

namespace cala {

using detail::cat;

namespace {

void check_args(const StencilDomain& dom, const StencilShape& sh, int depth, std::int64_t steps) {
    if (std::string e = dom.check(); !e.empty()) throw Error(e);
    if (sh.dim != dom.dim) throw Error(cat("stencil model: a ", sh.dim, "D stencil on a ", dom.dim, "D domain"));
    if (sh.radius < 0) throw Error(cat("stencil model: radius is ", sh.radius));
    if (depth < 1) throw Error(cat("stencil model: depth is ", depth, " (must be >= 1)"));
    if (steps < 0) throw Error(cat("stencil model: steps is ", steps, " (must be >= 0)"));
    for (int d = 0; d < dom.dim; ++d)
        if (static_cast<std::int64_t>(depth) * sh.radius > dom.min_extent(d))
            throw Error(cat("stencil model: depth ", depth, " x radius ", sh.radius,
                            " exceeds the smallest local extent ", dom.min_extent(d), " along ", "xyz"[d]));
}

StencilCost cycle_cost(const StencilDomain& dom, const std::array<int, 3>& c, const StencilShape& sh, int cycle) {
    StencilCost k;
    k.exchanges = 1;
    const int me = dom.rank_of(c);
    const index_t w = static_cast<index_t>(cycle) * sh.radius;
    std::array<index_t, 3> n{};
    for (int d = 0; d < 3; ++d) n[d] = dom.extent(d, c[d]);
    const bool corners = sh.radius > 0 && (!sh.star || cycle >= 2);
    std::array<index_t, 3> halo_grow{0, 0, 0};  // a_e: the halo along e carried by later faces
    for (int d = 0; d < dom.dim; ++d)
        for (int side : {-1, 1}) {
            std::array<int, 3> o{0, 0, 0};
            o[d] = side;
            if (corners && dom.neighbor(c, o) >= 0) halo_grow[d] += w;
        }
    for (int d = 0; d < dom.dim && sh.radius > 0; ++d)
        for (int side : {-1, 1}) {
            std::array<int, 3> o{0, 0, 0};
            o[d] = side;
            const int nbr = dom.neighbor(c, o);
            if (nbr < 0 || nbr == me) continue;
            index_t vol = w;
            for (int e = 0; e < dom.dim; ++e)
                if (e != d) vol *= e < d ? n[e] + halo_grow[e] : n[e];
            k.msgs_sent += 1;
            k.words_sent += vol;
        }
    std::array<index_t, 3> grow{0, 0, 0};
    for (int d = 0; d < dom.dim; ++d) {
        const bool dir = dom.boundary[d] == Boundary::Dirichlet;
        grow[d] = (dir && c[d] == 0 ? 0 : 1) + (dir && c[d] == dom.procs[d] - 1 ? 0 : 1);
    }
    const index_t owned = n[0] * n[1] * n[2];
    for (int t = 1; t <= cycle; ++t) {
        const index_t e = static_cast<index_t>(cycle - t) * sh.radius;
        const index_t v = (n[0] + grow[0] * e) * (n[1] + grow[1] * e) * (n[2] + grow[2] * e);
        k.updates += v;
        k.redundant_updates += v - owned;
        if (t >= 2) k.cached_updates += v;
    }
    k.msgs = 2 * k.msgs_sent;
    k.words = 2 * k.words_sent;
    return k;
}

StencilCost scaled_sum(const StencilCost& a, std::int64_t qa, const StencilCost& b) {
    StencilCost s;
    s.msgs = qa * a.msgs + b.msgs;
    s.words = qa * a.words + b.words;
    s.msgs_sent = qa * a.msgs_sent + b.msgs_sent;
    s.words_sent = qa * a.words_sent + b.words_sent;
    s.exchanges = qa * a.exchanges + b.exchanges;
    s.updates = qa * a.updates + b.updates;
    s.redundant_updates = qa * a.redundant_updates + b.redundant_updates;
    s.cached_updates = qa * a.cached_updates + b.cached_updates;
    return s;
}

// Coordinates along d that stand for every class of ranks (extent, neighbour on each side).
std::vector<int> representatives(const StencilDomain& dom, int d) {
    const int p = dom.procs[d];
    const int rem = static_cast<int>(dom.n[d] % p);
    std::set<int> s;
    for (int c : {0, 1, rem - 1, rem, p - 2, p - 1})
        if (c >= 0 && c < p) s.insert(c);
    return {s.begin(), s.end()};
}

}  // namespace

StencilCost stencil_cost(const StencilDomain& dom, std::array<int, 3> coords, const StencilShape& sh, int depth,
                         std::int64_t steps) {
    check_args(dom, sh, depth, steps);
    for (int d = 0; d < 3; ++d)
        if (coords[d] < 0 || coords[d] >= dom.procs[d])
            throw Error(cat("stencil_cost: coordinate ", coords[d], " along ", "xyz"[d], " is outside [0, ",
                            dom.procs[d], ")"));
    const std::int64_t q = steps / depth, rem = steps % depth;
    const StencilCost full = q > 0 ? cycle_cost(dom, coords, sh, depth) : StencilCost{};
    const StencilCost last = rem > 0 ? cycle_cost(dom, coords, sh, static_cast<int>(rem)) : StencilCost{};
    return scaled_sum(full, q, last);
}

double stencil_time(const StencilCost& c, const StencilMachine& m, std::size_t elem_size) {
    return m.latency_s * static_cast<double>(c.msgs_sent) +
           static_cast<double>(elem_size) * static_cast<double>(c.words_sent) / m.bandwidth_bytes_per_s +
           static_cast<double>(c.updates - c.cached_updates) / m.update_rate +
           static_cast<double>(c.cached_updates) / (m.cached_update_rate > 0 ? m.cached_update_rate : m.update_rate);
}

double stencil_time_per_step(const StencilDomain& dom, const StencilShape& sh, int depth, const StencilMachine& m,
                             std::size_t elem_size) {
    check_args(dom, sh, depth, depth);
    double worst = 0;
    const auto rx = representatives(dom, 0), ry = representatives(dom, 1), rz = representatives(dom, 2);
    for (int cz : rz)
        for (int cy : ry)
            for (int cx : rx) {
                const StencilCost c = cycle_cost(dom, {cx, cy, cz}, sh, depth);
                worst = std::max(worst, stencil_time(c, m, elem_size) / depth);
            }
    return worst;
}

int choose_stencil_depth(const StencilDomain& dom, const StencilShape& sh, const StencilMachine& m,
                         std::size_t elem_size, int max_depth) {
    check_args(dom, sh, 1, 0);
    std::int64_t smax = std::max(1, max_depth);
    if (sh.radius > 0)
        for (int d = 0; d < dom.dim; ++d) smax = std::min<std::int64_t>(smax, dom.min_extent(d) / sh.radius);
    int best = 1;
    double best_t = std::numeric_limits<double>::infinity();
    for (int s = 1; s <= smax; ++s) {
        const double t = stencil_time_per_step(dom, sh, s, m, elem_size);
        if (t < best_t) {
            best_t = t;
            best = s;
        }
    }
    return best;
}

}  // namespace cala

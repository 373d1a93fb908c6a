// cala::stencil: PA1 (Demmel et al.) over a field with a deep halo.
//
// cala::stencil -> HaloExchange (every cycle of <= depth steps) -> sweep_steps / sweep_box
//
// A cycle of c steps (c = depth, or what is left of `steps`), step t over E(c-t), where E(e) is
// the owned block grown by e on every side that is not a Dirichlet boundary of the domain (the
// last one is the owned block):
//   1. start the exchange of a halo of width w = c·r, faces only, dimension by dimension
//      (exchange.hpp: the later phases follow as the earlier ones arrive);
//   2. while the messages are in flight, every step over its core, in one temporally blocked
//      pass (sweep_steps: a point goes to and from memory about once per cycle, not once per
//      step), with MPI progress in between (which also moves the exchange to its next phase).
//      Step t's core is E(c-t) along the dimensions whose halo the exchange completed at start
//      (faces to oneself only), and the owned block shrunk by t·r along the others (it reads no
//      halo point in flight). The exchange packed at start what its later phases send, so the
//      core may overwrite those strips;
//   3. finish the exchange; then, step by step, the rest of each E(c-t) (shells: a point there
//      reads no point that a later step of the interior overwrote).
// Where the shells would add up to more than half of E(c-1) (small or 3D blocks, deep cycles),
// step 2 covers step 1's core only (in chunks, with progress in between), step 3 its shell,
// and steps 2..c follow in one sweep_steps pass. Without overlap: finish the exchange, then all c
// steps over E(c-t) in one sweep_steps pass.
// Each step reads one buffer and writes the other; points outside E(c-t) are never read again
// before the next exchange, so stale values there are harmless.

#include <algorithm>
#include <string>
#include <vector>

#include "cala/stencil.hpp"
#include "core/check.hpp"
#include "stencil/exchange.hpp"
#include "stencil/internal.hpp"
#include "stencil/sweep.hpp"

namespace cala {

using detail::Box;
using detail::cat;

namespace {

// The owned block grown by e on every side except the domain's Dirichlet boundaries.
Box grown(const StencilGrid& g, index_t e) {
    const StencilDomain& dom = g.domain();
    Box b;
    for (int d = 0; d < 3; ++d) {
        b.lo[d] = 0;
        b.hi[d] = g.n_loc(d);
        if (d >= dom.dim) continue;
        const bool at_lo = g.coords()[d] == 0, at_hi = g.coords()[d] == dom.procs[d] - 1;
        const bool dirichlet = dom.boundary[d] == Boundary::Dirichlet;
        if (!(dirichlet && at_lo)) b.lo[d] -= e;
        if (!(dirichlet && at_hi)) b.hi[d] += e;
    }
    return b;
}

// Points of the owned block that read no received halo point (shrunk by r where a face
// neighbour, or this rank itself through a periodic wrap, fills the halo).
Box interior(const StencilGrid& g, index_t r) {
    Box b;
    for (int d = 0; d < 3; ++d) {
        b.lo[d] = 0;
        b.hi[d] = g.n_loc(d);
        if (d >= g.domain().dim) continue;
        std::array<int, 3> o{0, 0, 0};
        o[d] = -1;
        if (g.neighbor(o) >= 0) b.lo[d] += r;
        o[d] = 1;
        if (g.neighbor(o) >= 0) b.hi[d] -= r;
    }
    return b;
}

// Step t's part of E(c-t) that reads no halo point still in flight: along the first `ready`
// dimensions (whose halo the exchange completed at start) all of E(c-t), e; along the others the
// owned block shrunk by t·r on every side that receives a halo.
Box core_box(const StencilGrid& g, const Box& e, int t, index_t r, int ready) {
    Box b = interior(g, t * r);
    for (int d = 0; d < ready; ++d) {
        b.lo[d] = e.lo[d];
        b.hi[d] = e.hi[d];
    }
    return b;
}

// e minus i (i inside e, not empty) as up to 6 slabs.
std::vector<Box> shell(const Box& e, const Box& i) {
    std::vector<Box> out;
    Box rest = e;
    for (int d = 0; d < 3; ++d) {
        Box lo = rest, hi = rest;
        lo.hi[d] = i.lo[d];
        hi.lo[d] = i.hi[d];
        if (!lo.empty()) out.push_back(lo);
        if (!hi.empty()) out.push_back(hi);
        rest.lo[d] = i.lo[d];
        rest.hi[d] = i.hi[d];
    }
    return out;
}

template <class T>
std::uint64_t fingerprint(const Stencil<T>& st, std::int64_t steps, const StencilOptions& o) {
    detail::Fingerprint f;
    f.add(st.dim()).add(steps).add(o.depth).add(o.overlap);
    for (const auto& p : st.points()) f.add(p.dx).add(p.dy).add(p.dz).add(p.coef);
    return f.value();
}

}  // namespace

template <class T>
StencilStats stencil(StencilField<T>& u, const Stencil<T>& st, std::int64_t steps, const StencilOptions& opts) {
    using A = detail::StencilAccess;
    const StencilGrid& g = u.grid();
    const StencilDomain& dom = g.domain();
    // Identical checks on every rank (same field, stencil and options), then agreement.
    std::string err;
    const std::int64_t h = static_cast<std::int64_t>(opts.depth) * st.radius();
    if (st.dim() != dom.dim) err = cat("stencil: a ", st.dim(), "D stencil on a ", dom.dim, "D domain");
    else if (steps < 0) err = cat("stencil: steps is ", steps, " (must be >= 0)");
    else if (opts.depth < 1) err = cat("stencil: depth is ", opts.depth, " (must be >= 1)");
    for (int d = 0; d < dom.dim && err.empty(); ++d)
        if (h > dom.min_extent(d))
            err = cat("stencil: depth ", opts.depth, " x radius ", st.radius(), " = ", h,
                      " exceeds the smallest local extent ", dom.min_extent(d), " along ", "xyz"[d], " (",
                      dom.n[d], " points over ", dom.procs[d], " ranks)");
    if (err.empty() && h > u.halo())
        err = cat("stencil: depth ", opts.depth, " x radius ", st.radius(), " = ", h, " exceeds the field's halo ",
                  u.halo());
    g.comm().agree(err, fingerprint(st, steps, opts), "stencil");

    StencilStats stats;
    stats.steps = steps;
    if (steps == 0) return stats;
    const detail::Layout L = A::layout(u);
    const detail::Taps<T> taps = detail::make_taps(st, L);
    const int s = static_cast<int>(std::min<std::int64_t>(opts.depth, steps));
    detail::HaloExchange<T> ex(g, L, st.shape(), s);
    const index_t r = st.radius();
    const index_t owned = g.n_loc(0) * g.n_loc(1) * g.n_loc(2);
    auto step = [&](const Box& b) {
        stats.updates += b.volume();
        stats.redundant_updates += b.volume() - owned;
    };

    for (std::int64_t done = 0; done < steps;) {
        const int c = static_cast<int>(std::min<std::int64_t>(s, steps - done));
        int cur = A::current(u);
        ex.start(A::buffer(u, cur), c);
        ++stats.exchanges;
        T* in = A::buffer(u, cur);
        T* out = A::buffer(u, 1 - cur);
        std::vector<Box> e;  // E(c-1), ..., E(0)
        for (int t = 1; t <= c; ++t) {
            e.push_back(grown(g, (c - t) * r));
            step(e.back());
        }
        // While the halo travels, the core of every step, temporally blocked (core_box: what
        // reads no halo point in flight; the exchange packed at start what it sends later, so
        // the core may overwrite it). The rest of each E(c-t), its shell, then follows step by
        // step from memory: where the shells add up to more than half of E(c-1), only step 1's
        // core goes first.
        std::vector<Box> core;
        if (opts.overlap) {
            for (int t = 1; t <= c; ++t) {
                const Box b = core_box(g, e[t - 1], t, r, ex.ready());
                if (b.empty()) break;
                core.push_back(b);
            }
            index_t shells = 0;
            for (int t = 1; t <= c; ++t)
                shells += e[t - 1].volume() - (t <= static_cast<int>(core.size()) ? core[t - 1].volume() : 0);
            if (2 * shells > e[0].volume()) core.resize(std::min<std::size_t>(core.size(), 1));
        }
        if (core.size() >= 2) {
            detail::sweep_steps(L, in, out, core, taps, {}, [&] { ex.progress(); });
            ex.finish();
            for (int t = 1; t <= c; ++t) {
                const T* src = t % 2 ? in : out;
                T* dst = t % 2 ? out : in;
                if (t <= static_cast<int>(core.size()))
                    for (const Box& b : shell(e[t - 1], core[t - 1])) detail::sweep_box(L, src, dst, b, taps);
                else
                    detail::sweep_box(L, src, dst, e[t - 1], taps);
            }
        } else if (core.size() == 1) {
            // Step 1's core in chunks along the slowest dimension, with MPI progress in
            // between; then its shell; then steps 2..c together.
            const Box& inner = core[0];
            const int slow = dom.dim - 1;
            const int chunks = static_cast<int>(std::min<index_t>(4, inner.extent(slow)));
            for (int q = 0; q < chunks; ++q) {
                Box part = inner;
                part.lo[slow] = inner.lo[slow] + inner.extent(slow) * q / chunks;
                part.hi[slow] = inner.lo[slow] + inner.extent(slow) * (q + 1) / chunks;
                detail::sweep_box(L, in, out, part, taps);
                ex.progress();
            }
            ex.finish();
            for (const Box& b : shell(e[0], inner)) detail::sweep_box(L, in, out, b, taps);
            detail::sweep_steps(L, out, in, std::vector<Box>(e.begin() + 1, e.end()), taps);
        } else {
            ex.finish();
            detail::sweep_steps(L, in, out, e, taps);
        }
        if (c % 2) A::set_current(u, 1 - cur);
        done += c;
    }
    return stats;
}

template StencilStats stencil<float>(StencilField<float>&, const Stencil<float>&, std::int64_t, const StencilOptions&);
template StencilStats stencil<double>(StencilField<double>&, const Stencil<double>&, std::int64_t,
                                      const StencilOptions&);

}  // namespace cala

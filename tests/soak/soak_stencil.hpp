#pragma once
// The soak's stencil call: a drawn 2D or 3D domain over the subset's ranks, a drawn stencil,
// boundaries, halo depth and step count; the gathered field equals the sequential reference bit
// for bit, and traffic and work equal stencil_cost.

#include <doctest/doctest.h>

#include <cstring>

#include "soak/soak.hpp"
#include "stencil/stencil_reference.hpp"

namespace cala::soak {

template <class T>
Stencil<T> draw_stencil(Draw& d, int dim, index_t min_extent) {
    const int kind = d.pick(min_extent >= 2 ? 3 : 2);
    if (kind == 0) return dim == 2 ? Stencil<T>::five_point() : Stencil<T>::seven_point();
    if (kind == 1) return dim == 2 ? Stencil<T>::nine_point() : Stencil<T>::twenty_seven_point();
    std::vector<T> coefs(static_cast<std::size_t>(1 + 2 * dim * 2));  // star of radius 2
    for (auto& c : coefs) c = static_cast<T>(d.between(-100, 100)) / T(800);
    return Stencil<T>::star(dim, 2, coefs);
}

/// Collective over `comm` (the subset's communicator, `size` ranks laid out p x q).
template <class T>
std::string stencil_call(Draw& d, const Comm& comm, int p, int q, std::uint64_t cs) {
    const int dim = d.coin() ? 2 : 3;
    std::array<int, 3> procs{p, q, 1};
    if (dim == 3) {  // split q further: p x a x (q / a)
        std::vector<int> div;
        for (int a = 1; a <= q; ++a)
            if (q % a == 0) div.push_back(a);
        const int a = div[static_cast<std::size_t>(d.pick(static_cast<int>(div.size())))];
        procs = {p, a, q / a};
    }
    std::array<Boundary, 3> bc{};
    std::array<index_t, 3> n{1, 1, 1};
    for (int k = 0; k < dim; ++k) {
        n[static_cast<std::size_t>(k)] =
            d.between(procs[static_cast<std::size_t>(k)], 5 * procs[static_cast<std::size_t>(k)] + 4);
        bc[static_cast<std::size_t>(k)] = d.coin() ? Boundary::Dirichlet : Boundary::Periodic;
    }
    const StencilDomain dom =
        dim == 2 ? StencilDomain::make_2d(n[0], n[1], procs[0], procs[1], bc[0], bc[1])
                 : StencilDomain::make_3d(n[0], n[1], n[2], procs[0], procs[1], procs[2], bc[0], bc[1], bc[2]);
    index_t ext = dom.min_extent(0);
    for (int k = 1; k < dim; ++k) ext = std::min(ext, dom.min_extent(k));
    const Stencil<T> st = draw_stencil<T>(d, dim, ext);
    const int depth = static_cast<int>(d.between(1, std::min<index_t>(4, ext / st.radius())));
    const int halo = static_cast<int>(d.between(depth * st.radius(), std::min<index_t>(ext, depth * st.radius() + 2)));
    const std::int64_t steps = d.between(0, 7);
    const StencilOptions o{.depth = depth, .overlap = d.coin()};
    const std::string what = "stencil " + std::to_string(dim) + "D " + std::to_string(n[0]) + "x" +
                             std::to_string(n[1]) + "x" + std::to_string(n[2]) + " on " + std::to_string(procs[0]) +
                             "x" + std::to_string(procs[1]) + "x" + std::to_string(procs[2]) +
                             " r=" + std::to_string(st.radius()) + " depth=" + std::to_string(depth) +
                             " steps=" + std::to_string(steps);
    INFO(what);
    const StencilGrid grid(comm, dom);
    StencilField<T> u(grid, halo);
    u.fill([cs](index_t i, index_t j, index_t k) { return test::field_value<T>(cs, i, j, k); });
    reset_traffic();

    const StencilStats stats = stencil(u, st, steps, o);

    const Traffic t = traffic();
    const std::vector<T> got = u.gather(0);
    bool same = true;
    if (comm.rank() == 0) {
        const std::vector<T> ref = test::reference_sweep(dom, st, cs, steps);
        same = ref.size() == got.size() && std::memcmp(ref.data(), got.data(), ref.size() * sizeof(T)) == 0;
    }
    const StencilCost m = stencil_cost(dom, grid.coords(), st.shape(), depth, steps);
    const bool traffic_ok =
        t.msgs() == m.msgs && t.words() == m.words && t.msgs_sent == m.msgs_sent && t.words_sent == m.words_sent;
    const bool work_ok =
        stats.exchanges == m.exchanges && stats.updates == m.updates && stats.redundant_updates == m.redundant_updates;
    int v[3] = {same, traffic_ok, work_ok};
    MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_INT, MPI_MIN, comm.get());
    CAPTURE(t.msgs());
    CAPTURE(m.msgs);
    CAPTURE(t.words());
    CAPTURE(m.words);
    CHECK(v[0] == 1);
    CHECK(v[1] == 1);
    CHECK(v[2] == 1);
    return what;
}

}  // namespace cala::soak

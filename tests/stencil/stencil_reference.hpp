#pragma once
// Sequential reference of cala::stencil on the whole domain, and the data the tests sweep.
//
// The reference sums each point's taps in the stencil's order, acc = c0·u0, acc += c1·u1, ...,
// the order cala::stencil documents, so a correct distributed sweep matches it bit for bit.

#include <array>
#include <cstdint>
#include <vector>

#include "cala/stencil.hpp"

namespace cala::test {

/// Deterministic value in [-1, 1) of global point (i, j, k), also defined past the domain
/// (Dirichlet boundary values).
template <class T>
T field_value(std::uint64_t seed, index_t i, index_t j, index_t k) {
    std::uint64_t x = seed ^ (static_cast<std::uint64_t>(i + 1000) * 0x9e3779b97f4a7c15ull) ^
                      (static_cast<std::uint64_t>(j + 1000) * 0xc2b2ae3d27d4eb4full) ^
                      (static_cast<std::uint64_t>(k + 1000) * 0x165667b19e3779f9ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    return static_cast<T>(static_cast<double>(x >> 11) * 0x1.0p-52 - 1.0);
}

/// `steps` sweeps of st over the domain, starting from u0 = field_value(seed, ·) and with
/// field_value(seed, ·) past Dirichlet boundaries (periodic coordinates wrapped first).
/// Returns the n[0]·n[1]·n[2] values, x fastest.
template <class T>
std::vector<T> reference_sweep(const StencilDomain& dom, const Stencil<T>& st, std::uint64_t seed,
                               std::int64_t steps) {
    const index_t nx = dom.n[0], ny = dom.n[1], nz = dom.n[2];
    auto idx = [&](index_t i, index_t j, index_t k) { return i + nx * (j + ny * k); };
    std::vector<T> u(static_cast<std::size_t>(nx * ny * nz)), v(u.size());
    for (index_t k = 0; k < nz; ++k)
        for (index_t j = 0; j < ny; ++j)
            for (index_t i = 0; i < nx; ++i) u[idx(i, j, k)] = field_value<T>(seed, i, j, k);
    auto value = [&](const std::vector<T>& a, std::array<index_t, 3> g) -> T {
        bool outside = false;
        for (int d = 0; d < dom.dim; ++d) {
            if (dom.boundary[d] == Boundary::Periodic) g[d] = ((g[d] % dom.n[d]) + dom.n[d]) % dom.n[d];
            else if (g[d] < 0 || g[d] >= dom.n[d]) outside = true;
        }
        return outside ? field_value<T>(seed, g[0], g[1], g[2]) : a[idx(g[0], g[1], g[2])];
    };
    const auto& pts = st.points();
    for (std::int64_t s = 0; s < steps; ++s) {
        for (index_t k = 0; k < nz; ++k)
            for (index_t j = 0; j < ny; ++j)
                for (index_t i = 0; i < nx; ++i) {
                    T acc = pts[0].coef * value(u, {i + pts[0].dx, j + pts[0].dy, k + pts[0].dz});
                    for (std::size_t p = 1; p < pts.size(); ++p)
                        acc += pts[p].coef * value(u, {i + pts[p].dx, j + pts[p].dy, k + pts[p].dz});
                    v[idx(i, j, k)] = acc;
                }
        u.swap(v);
    }
    return u;
}

}  // namespace cala::test

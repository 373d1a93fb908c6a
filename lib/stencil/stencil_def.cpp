// Stencil<T>: points, shapes and presets.

#include <algorithm>
#include <cstdlib>

#include "cala/stencil.hpp"
#include "core/check.hpp"

namespace cala {

using detail::cat;

template <class T>
Stencil<T>::Stencil(int dim, std::vector<StencilPoint<T>> points) : dim_(dim), points_(std::move(points)) {
    if (dim != 2 && dim != 3) throw Error(cat("Stencil: dim is ", dim, ", not 2 or 3"));
    if (points_.empty()) throw Error("Stencil: no points");
    radius_ = 0;
    star_ = true;
    for (const auto& p : points_) {
        if (dim == 2 && p.dz != 0) throw Error(cat("Stencil: a 2D stencil has a point with dz = ", p.dz));
        radius_ = std::max({radius_, std::abs(p.dx), std::abs(p.dy), std::abs(p.dz)});
        if ((p.dx != 0) + (p.dy != 0) + (p.dz != 0) > 1) star_ = false;
    }
}

template <class T>
Stencil<T> Stencil<T>::star(int dim, int radius, std::span<const T> coefs) {
    if (dim != 2 && dim != 3) throw Error(cat("Stencil::star: dim is ", dim, ", not 2 or 3"));
    if (radius < 1) throw Error(cat("Stencil::star: radius is ", radius, " (must be >= 1)"));
    const std::size_t want = 1 + 2 * static_cast<std::size_t>(dim) * radius;
    if (coefs.size() != want)
        throw Error(cat("Stencil::star: ", coefs.size(), " coefficients for a ", dim, "D star of radius ", radius,
                        " (needs ", want, ")"));
    std::vector<StencilPoint<T>> pts;
    pts.push_back({0, 0, 0, coefs[0]});
    std::size_t c = 1;
    for (int d = 0; d < dim; ++d)
        for (int s = -radius; s <= radius; ++s) {
            if (s == 0) continue;
            StencilPoint<T> p{0, 0, 0, coefs[c++]};
            (d == 0 ? p.dx : d == 1 ? p.dy : p.dz) = s;
            pts.push_back(p);
        }
    return Stencil(dim, std::move(pts));
}

template <class T>
Stencil<T> Stencil<T>::box(int dim, int radius, std::span<const T> coefs) {
    if (dim != 2 && dim != 3) throw Error(cat("Stencil::box: dim is ", dim, ", not 2 or 3"));
    if (radius < 1) throw Error(cat("Stencil::box: radius is ", radius, " (must be >= 1)"));
    std::size_t want = 1;
    for (int d = 0; d < dim; ++d) want *= 2 * static_cast<std::size_t>(radius) + 1;
    if (coefs.size() != want)
        throw Error(cat("Stencil::box: ", coefs.size(), " coefficients for a ", dim, "D box of radius ", radius,
                        " (needs ", want, ")"));
    std::vector<StencilPoint<T>> pts;
    std::size_t c = 0;
    const int rz = dim == 3 ? radius : 0;
    for (int z = -rz; z <= rz; ++z)
        for (int y = -radius; y <= radius; ++y)
            for (int x = -radius; x <= radius; ++x) pts.push_back({x, y, z, coefs[c++]});
    return Stencil(dim, std::move(pts));
}

template <class T>
Stencil<T> Stencil<T>::five_point(T center, T side) {
    const T c[] = {center, side, side, side, side};
    return star(2, 1, c);
}

template <class T>
Stencil<T> Stencil<T>::seven_point(T center, T face) {
    const T c[] = {center, face, face, face, face, face, face};
    return star(3, 1, c);
}

template <class T>
Stencil<T> Stencil<T>::nine_point(T center, T side, T corner) {
    const T c[] = {corner, side, corner, side, center, side, corner, side, corner};
    return box(2, 1, c);
}

template <class T>
Stencil<T> Stencil<T>::twenty_seven_point(T center, T face, T edge, T corner) {
    std::vector<T> c;
    for (int z = -1; z <= 1; ++z)
        for (int y = -1; y <= 1; ++y)
            for (int x = -1; x <= 1; ++x) {
                const int nz = (x != 0) + (y != 0) + (z != 0);
                c.push_back(nz == 0 ? center : nz == 1 ? face : nz == 2 ? edge : corner);
            }
    return box(3, 1, c);
}

template <class T>
Stencil<T> Stencil<T>::preset(const std::string& name) {
    if (name == "5pt") return five_point();
    if (name == "9pt") return nine_point();
    if (name == "7pt") return seven_point();
    if (name == "27pt") return twenty_seven_point();
    throw Error(cat("Stencil::preset: unknown preset '", name, "' (5pt, 9pt, 7pt, 27pt)"));
}

template class Stencil<float>;
template class Stencil<double>;

}  // namespace cala

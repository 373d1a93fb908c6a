#pragma once
// One random entry, uniform in [-1, 1] (both parts for a complex type): the unit tests' and the
// MPI helpers' common source of fresh inputs.

#include <complex>
#include <random>

#include "cala/types.hpp"

namespace cala::test {

template <class T>
T random_value(std::mt19937_64& g) {
    std::uniform_real_distribution<real_t<T>> u(-1, 1);
    if constexpr (is_complex_v<T>) return T(u(g), u(g));
    else return u(g);
}

}  // namespace cala::test

#pragma once
// Shared by the resident gemm tests (tests/device/test_resident.cpp, test_resident_3d.cpp): a
// random resident operand, and the shape of one product case.

#include "cala/resident.hpp"
#include "support/helpers.hpp"

namespace cala::test {

/// A random host matrix and its resident copy on dev (collective over g).
template <class T>
ResidentMatrix<T> random_resident(const Grid2D& g, const BlockCyclic& l, const ResidentDevice& dev) {
    DistMatrix<T> h(g, l);
    randomize(h.view());
    ResidentMatrix<T> r(g, l, dev);
    redistribute(Op::N, h.view(), r);
    return r;
}

/// C (m x n) := op(A)·op(B) (k deep) with these block sizes; all_ops: every op pair, else N·N and T·C.
struct ResidentCase {
    index_t m, n, k, mb_a, nb_a, mb_b, nb_b, mb_c, nb_c;
    bool all_ops;
};

}  // namespace cala::test

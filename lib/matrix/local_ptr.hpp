// Address of a local element of a MatrixRef without forming a reference to it.
//
// `&x.local(i, j)` binds a reference to data()[i + j * ld] first: undefined behaviour where the
// rank holds no local storage (data() == nullptr, e.g. a rank owning no block of an operand), as
// UBSan reports ("reference binding to null pointer"). local_ptr gives nullptr there instead; the
// BLAS calls it feeds have a zero dimension in that case and do not read it.
#pragma once

#include "cala/matrix.hpp"

namespace cala::detail {

template <class T>
T* local_ptr(const MatrixRef<T>& x, index_t i_loc, index_t j_loc) noexcept {
    return x.data() == nullptr ? nullptr : x.data() + (i_loc + j_loc * x.ld());
}

}  // namespace cala::detail

// ScaLAPACK's IPIV and cala's pivot vector (lu_pivots.hpp).

#include "scalapack/lu_pivots.hpp"

#include <algorithm>
#include <climits>

#include "core/check.hpp"

namespace cala::scalapack {

void write_ipiv(const std::vector<index_t>& piv, int ia, const int* desca, const GridPos& g, int* ipiv) {
    const index_t mn = static_cast<index_t>(piv.size());
    const int mb = desca[SL_MB - 1], rsrc = desca[SL_RSRC - 1];
    // p?getf2, panel by panel: rows I .. I+JB-1 (one block), written at IIA .. IIA+JB-1 everywhere.
    for (index_t k0 = 0; k0 < mn; k0 += mb) {
        const index_t jb = std::min<index_t>(mb, mn - k0);
        const index_t iia = local_count(ia - 1 + k0, mb, mb, rsrc, g.p, g.row);  // 0-based
        for (index_t t = 0; t < jb; ++t) ipiv[iia + t] = static_cast<int>(piv[k0 + t] + ia);
    }
}

std::optional<std::vector<index_t>> read_ipiv(MPI_Comm comm, int n, int ia, const int* desca, const GridPos& g,
                                              const int* ipiv) {
    const int mb = desca[SL_MB - 1], rsrc = desca[SL_RSRC - 1];
    // [max over contributions, -min over contributions]; INT_MIN where this process holds no row.
    std::vector<int> v(2 * static_cast<std::size_t>(n), INT_MIN);
    for (int i = 0; i < n; ++i) {
        const index_t row = static_cast<index_t>(ia) - 1 + i;  // 0-based global row
        if ((rsrc + row / mb) % g.p != g.row) continue;
        const int x = ipiv[local_count(row, mb, mb, rsrc, g.p, g.row)];
        v[2 * i] = x;
        v[2 * i + 1] = x == INT_MIN ? INT_MAX : -x;
    }
    CALA_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_INT, MPI_MAX, comm));
    std::vector<index_t> piv(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        const int hi = v[2 * i], lo = v[2 * i + 1] == INT_MAX ? INT_MIN : -v[2 * i + 1];
        const index_t p = static_cast<index_t>(hi) - ia;
        if (hi != lo || p < i || p >= n) return std::nullopt;
        piv[static_cast<std::size_t>(i)] = p;
    }
    return piv;
}

}  // namespace cala::scalapack

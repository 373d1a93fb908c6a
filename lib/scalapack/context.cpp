// BLACS contexts as cala grids, made once per context.

#include "scalapack/context.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include "cala/comm.hpp"
#include "comm/finalize.hpp"
#include "core/check.hpp"
#include "scalapack/blacs.hpp"

namespace cala::scalapack {

namespace {

struct Entry {
    Comm source;  // a duplicate of the BLACS communicator, to recognize it on later calls
    GridPos pos;
    Grid2D grid;
};

std::map<int, Entry>& cache() {
    static std::map<int, Entry> entries;  // freed inside MPI_Finalize (comm/finalize.hpp)
    return entries;
}

void release_cache() { cache().clear(); }

}  // namespace

MPI_Comm grid_communicator(int ctxt) {
    int sys = -1;
    Cblacs_get(ctxt, 10, &sys);
    return Cblacs2sys_handle(sys);
}

Agreement agree(MPI_Comm comm, const GridPos& g, int code, bool cala_layouts, bool cached,
                std::span<const SameArg> same) {
    int rank = 0;
    CALA_CHECK_MPI(MPI_Comm_rank(comm, &rank));
    // One MIN reduction: flags that must hold everywhere travel as 0 (holds) or -1 (fails here);
    // each value that must agree travels as itself and negated (its minimum and maximum).
    const std::size_t k = same.size();
    std::vector<long long> v{code, cala_layouts ? 0 : -1, cached ? 0 : -1, rank == g.row * g.q + g.col ? 0 : -1,
                             rank == g.col * g.p + g.row ? 0 : -1};
    for (const SameArg& s : same) v.push_back(s.value);
    for (const SameArg& s : same) v.push_back(-static_cast<long long>(s.value));
    CALA_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_LONG_LONG, MPI_MIN, comm));
    Agreement a{static_cast<int>(v[0]), v[1] == 0, v[2] == 0, v[3] == 0, v[4] == 0};
    for (std::size_t i = 0; i < k; ++i)
        if (v[5 + i] != -v[5 + k + i]) a.code = std::min(a.code, same[i].code);
    return a;
}

const Grid2D* cached_grid(int ctxt, MPI_Comm comm, const GridPos& g) {
    const auto it = cache().find(ctxt);
    if (it == cache().end()) return nullptr;
    const Entry& e = it->second;
    if (e.pos.p != g.p || e.pos.q != g.q || e.pos.row != g.row || e.pos.col != g.col) return nullptr;
    int result = MPI_UNEQUAL;
    CALA_CHECK_MPI(MPI_Comm_compare(e.source.get(), comm, &result));
    return result == MPI_CONGRUENT || result == MPI_IDENT ? &e.grid : nullptr;
}

const Grid2D& make_grid(int ctxt, MPI_Comm comm, const GridPos& g, const Agreement& a) {
    using detail::cat;
    const Comm blacs = Comm::borrow(comm);
    Comm source = blacs.dup();
    Grid2D grid = [&] {
        if (a.row_major) return Grid2D(blacs, g.p, g.q, GridOrder::RowMajor);
        if (a.col_major) return Grid2D(blacs, g.p, g.q, GridOrder::ColumnMajor);
        // Neither: renumber the processes row-major by their BLACS coordinates.
        if (blacs.rank() == 0) {
            static bool said = false;
            if (!said)
                std::fprintf(stderr,
                             "cala_scalapack: BLACS context %d numbers its %dx%d processes neither row- nor "
                             "column-major; cala renumbers them row-major\n",
                             ctxt, g.p, g.q);
            said = true;
        }
        const Comm renumbered = blacs.split(0, g.row * g.q + g.col);
        return Grid2D(renumbered, g.p, g.q, GridOrder::RowMajor);
    }();
    if (grid.row() != g.row || grid.col() != g.col)
        throw Error(cat("scalapack: cala grid puts this process at (", grid.row(), ",", grid.col(),
                        "), BLACS at (", g.row, ",", g.col, ")"));
    detail::release_at_mpi_finalize<release_cache>();  // LeakSanitizer, hostile_shim_np2
    auto& entries = cache();
    entries.erase(ctxt);
    const auto it = entries.emplace(ctxt, Entry{std::move(source), g, std::move(grid)}).first;
    return it->second.grid;
}

void same_descriptor(std::vector<SameArg>& out, const int* desc, int pos) {
    for (int e : {SL_DTYPE, SL_M, SL_N, SL_MB, SL_NB, SL_RSRC, SL_CSRC})
        out.push_back({desc[e - 1], pos * ArgCheck::kDescMult + e});
}

void same_pblas_descriptor(std::vector<SameArg>& out, const Desc& d, int pos) {
    for (const DescEntry e : {DTYPE_, M_, N_, IMB_, INB_, MB_, NB_, RSRC_, CSRC_})
        out.push_back({d[e], pos * ArgCheck::kDescMult + 1 + e});
}

}  // namespace cala::scalapack

// Soak: a few hundred randomly drawn calls (2D gemm in every variant and op pair, 2.5D/3D gemm,
// potrf + potrs in 2D and 2.5D, trsm, redistribute, stencil) on random grids over random subsets
// of the world, random sizes (0, 1, sizes blocks do not divide) and blocks, every type. Each
// call is checked against the sequential reference and the cost model (soak_calls.hpp); after
// each call the workspace in use, the MPI handles cala holds (cala::live_handles) and the
// communicators and datatypes the whole process holds (counted at the MPI interface, below) are
// back to where they were. (cala makes no derived datatypes today: live_handles().datatypes
// stays 0 unless code registers one; the MPI-interface count catches one made without.)
//
// The seed is printed first; every failure prints the line that reproduces its call:
//   CALA_SOAK_SEED=<s> CALA_SOAK_FROM=<i> CALA_SOAK_CALLS=<i+1> mpiexec.mpich -n N test_soak
// CALA_SOAK_CALLS (default 300) is the index past the last call; CALA_SOAK_FROM (default 0) the first.
// CALA_SOAK_GRID=world: every call on a grid of all ranks, the kinds in turn (call i runs kind
// i mod 6): the model pinned to counted runs at larger P.
// (run as: mpiexec.mpich -n N test_soak, CALA_TEST_NPROCS=N)

#include <doctest/doctest.h>
#include <mpi.h>

#include <cstdio>
#include <map>
#include <set>

#include "gemm/driver.hpp"
#include "soak/soak_calls.hpp"
#include "soak/soak_stencil.hpp"

// Every communicator and committed datatype made through the MPI interface by this process
// (cala's library included: its calls resolve to these definitions; MPICH's own internals do
// not go through them). PMPI_ is the MPI standard's profiling entry.
namespace {
std::int64_t g_mpi_comms = 0, g_mpi_types = 0;
}
extern "C" int MPI_Comm_dup(MPI_Comm c, MPI_Comm* out) {
    const int rc = PMPI_Comm_dup(c, out);
    if (rc == MPI_SUCCESS && *out != MPI_COMM_NULL) ++g_mpi_comms;
    return rc;
}
extern "C" int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm* out) {
    const int rc = PMPI_Comm_split(c, color, key, out);
    if (rc == MPI_SUCCESS && *out != MPI_COMM_NULL) ++g_mpi_comms;
    return rc;
}
extern "C" int MPI_Comm_split_type(MPI_Comm c, int type, int key, MPI_Info info, MPI_Comm* out) {
    const int rc = PMPI_Comm_split_type(c, type, key, info, out);
    if (rc == MPI_SUCCESS && *out != MPI_COMM_NULL) ++g_mpi_comms;
    return rc;
}
extern "C" int MPI_Comm_free(MPI_Comm* c) {
    if (*c != MPI_COMM_NULL) --g_mpi_comms;
    return PMPI_Comm_free(c);
}
extern "C" int MPI_Type_commit(MPI_Datatype* t) {
    ++g_mpi_types;
    return PMPI_Type_commit(t);
}
extern "C" int MPI_Type_free(MPI_Datatype* t) {
    --g_mpi_types;
    return PMPI_Type_free(t);
}

using namespace cala;

namespace {

struct Held {
    Handles cala;
    std::int64_t workspace = 0, mpi_comms = 0, mpi_types = 0;
    bool operator==(const Held&) const = default;
};

Held held() {
    detail::release_grid3d_cache();  // the 3D grids gemm and potrf keep for the next call
    return {live_handles(), memory_stats().current_bytes, g_mpi_comms, g_mpi_types};
}

enum Kind { Gemm, Gemm3d, Cholesky, Trsm, Redist, Sten, Kinds };
const char* const kKindNames[] = {"gemm", "gemm3d", "potrf+potrs", "trsm", "redistribute", "stencil"};

template <class T>
std::string run_kind(Kind kind, soak::Draw& d, const soak::SubGrid& sg, std::uint64_t cs) {
    const Grid2D& g = *sg.grid;
    switch (kind) {
        case Gemm: return soak::gemm_call<T>(d, g, false);
        case Gemm3d: return soak::gemm_call<T>(d, g, true);
        case Cholesky: return soak::cholesky_call<T>(d, g, cs);
        case Trsm: return soak::trsm_call<T>(d, g);
        case Redist: return soak::redistribute_call<T>(d, g);
        default: break;
    }
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
        return soak::stencil_call<T>(d, sg.comm, sg.p, sg.q, cs);
    return {};
}

std::string run_typed(int type, Kind kind, soak::Draw& d, const soak::SubGrid& sg, std::uint64_t cs) {
    switch (type) {
        case 0: return run_kind<float>(kind, d, sg, cs);
        case 1: return run_kind<double>(kind, d, sg, cs);
        case 2: return run_kind<std::complex<float>>(kind, d, sg, cs);
        default: return run_kind<std::complex<double>>(kind, d, sg, cs);
    }
}

}  // namespace

TEST_CASE("soak: random calls on random grids match the reference and the model, and leak nothing") {
    const Comm world = Comm::borrow(MPI_COMM_WORLD);
    const std::uint64_t seed = soak::soak_seed();
    const std::int64_t from = soak::env_int("CALA_SOAK_FROM", 0), calls = soak::env_int("CALA_SOAK_CALLS", 300);
    const char* grid_env = std::getenv("CALA_SOAK_GRID");
    const bool whole = grid_env != nullptr && std::string(grid_env) == "world";
    if (world.rank() == 0)
        std::fprintf(stderr, "soak: CALA_SOAK_SEED=%llu, calls %lld..%lld on %d ranks%s\n",
                     static_cast<unsigned long long>(seed), static_cast<long long>(from),
                     static_cast<long long>(calls - 1), world.size(),
                     whole ? ", every grid of all ranks (CALA_SOAK_GRID=world)" : "");
    // The leak check sees what it must: cala's own communicators go through the counted interface.
    const Held h0 = held();
    {
        const Grid2D probe(world);
        CHECK(soak::world_all(g_mpi_comms > h0.mpi_comms && live_handles().comms > h0.cala.comms));
        int out = world.rank(), in = -1;
        Request r = probe.comm().irecv(&in, 1, probe.comm().rank(), 5);
        Request s = probe.comm().isend(&out, 1, probe.comm().rank(), 5);
        CHECK(soak::world_all(live_handles().requests == h0.cala.requests + 2));
        s.wait();
        r.wait();
        CHECK(soak::world_all(live_handles().requests == h0.cala.requests && in == out));
    }
    const Held base = held();
    CHECK(soak::world_all(base == h0 && base == Held{}));  // nothing held at the start: "back to zero"

    std::map<std::string, int> per_kind;
    std::set<std::string> grids, gemm_forms;  // gemm_forms: "gemm C NT", "gemm3d B CN", ... (on rank 0)
    for (std::int64_t i = from; i < calls; ++i) {
        const std::string repro = std::string("reproduce: ") + (whole ? "CALA_SOAK_GRID=world " : "") +
                                  "CALA_SOAK_SEED=" + std::to_string(seed) + " CALA_SOAK_FROM=" + std::to_string(i) +
                                  " CALA_SOAK_CALLS=" + std::to_string(i + 1) + " (world of " +
                                  std::to_string(world.size()) + ")";
        INFO(repro);
        soak::Draw d(seed, i);
        const std::uint64_t cs = soak::mix(seed, static_cast<std::uint64_t>(i), 2);  // data formulas
        test::rng().seed(soak::mix(seed, static_cast<std::uint64_t>(i), 3 + static_cast<std::uint64_t>(world.rank())));
        std::string what;
        {
            soak::SubGrid sg = soak::draw_grid(d, world, whole);
            const Kind kind = static_cast<Kind>(whole ? i % Kinds : d.pick(Kinds));
            const int type = kind == Sten ? d.pick(2) : d.pick(4);
            what = std::string(kKindNames[kind]) + " on " + sg.describe();
            INFO("call: " << what);
            if (sg.member()) {
                try {
                    const std::string call = run_typed(type, kind, d, sg, cs);
                    what += ": " + call;
                    if (kind == Gemm || kind == Gemm3d) gemm_forms.insert(call.substr(0, call.find(" m=")));
                } catch (const std::exception& e) {
                    FAIL_CHECK("threw: " << e.what());
                }
            }
            ++per_kind[kKindNames[kind]];
            grids.insert(sg.describe());
        }
        const Held now = held();
        if (!(now == base))
            std::fprintf(stderr,
                         "soak rank %d: after call %lld (%s): comms %lld, requests %lld, datatypes %lld, "
                         "workspace %lld bytes, MPI comms %lld, MPI types %lld held beyond the start; %s\n",
                         world.rank(), static_cast<long long>(i), what.c_str(),
                         static_cast<long long>(now.cala.comms - base.cala.comms),
                         static_cast<long long>(now.cala.requests - base.cala.requests),
                         static_cast<long long>(now.cala.datatypes - base.cala.datatypes),
                         static_cast<long long>(now.workspace - base.workspace),
                         static_cast<long long>(now.mpi_comms - base.mpi_comms),
                         static_cast<long long>(now.mpi_types - base.mpi_types), repro.c_str());
        CHECK_MESSAGE(soak::world_all(now == base), "handles or workspace left after " << what);
    }
    std::string kinds;
    for (const auto& [k, c] : per_kind) kinds += " " + k + "=" + std::to_string(c);
    MESSAGE("soak seed ", seed, ": ", calls - from, " calls on ", grids.size(), " distinct grids;", kinds, "; ",
            gemm_forms.size(), " gemm variant x op forms");
    if (world.rank() == 0)
        std::fprintf(stderr, "soak: %lld calls on %zu distinct grids (p x q, order, subset size):%s; %zu gemm "
                     "variant x op forms (of 63: 2D C/A/B/auto, 3D C/A/B, times 9 op pairs)\n",
                     static_cast<long long>(calls - from), grids.size(), kinds.c_str(), gemm_forms.size());
}

// The argument checks the resident drivers share (checks.hpp).

#include "resident/checks.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "comm/traffic.hpp"
#include "core/check.hpp"
#include "resident/transport.hpp"

namespace cala::detail {

int memory_kind(const ResidentDevice& d) noexcept { return !d.on_device() ? 0 : d.is_cuda() ? 2 : 1; }

const char* memory_kind_name(int kind) noexcept {
    return kind == 0 ? "host memory" : kind == 1 ? "a HostDevice" : "a CUDA device";
}

std::pair<int, int> agree_kinds(const Grid2D& g, std::initializer_list<const ResidentDevice*> devs) {
    int kinds[2] = {0, -2};  // max kind, max of -kind
    for (const ResidentDevice* d : devs) {
        kinds[0] = std::max(kinds[0], memory_kind(*d));
        kinds[1] = std::max(kinds[1], -memory_kind(*d));
    }
    if (g.comm().size() > 1) {
        CALA_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, kinds, 2, MPI_INT, MPI_MAX, g.comm().get()));
        count_control();
    }
    return {-kinds[1], kinds[0]};
}

std::string same_device_error(const char* fn, const char* name, const ResidentDevice& x, const char* ref_name,
                              const ResidentDevice& ref, int rank) {
    if (x == ref) return {};
    return cat(fn, ": ", name, " lives on ", x.name(), " but ", ref_name, " on ", ref.name(), " (rank ", rank,
               "): a resident ", fn, " takes its operands on one device; redistribute ", name, " onto ", ref_name,
               "'s device first");
}

std::string memory_error(const char* fn, const char* who, PanelTransport t, int kind_lo, int kind_hi) {
    if (t < PanelTransport::Auto || t > PanelTransport::Nccl)
        return cat(fn, ": transport is ", static_cast<int>(t), ", not a PanelTransport");
    if (kind_lo != kind_hi)
        return cat(fn, ": ", who, " on ", memory_kind_name(kind_lo), " on some ranks and on ",
                   memory_kind_name(kind_hi), " on others");
    if (t == PanelTransport::Nccl && kind_hi != 2)
        return cat(fn, ": transport Nccl needs CUDA devices; ", who, " on ", memory_kind_name(kind_hi));
    if (t == PanelTransport::Nccl && !device_bcast_available())
        return cat(fn, ": transport Nccl requested but libcala_cuda was built without NCCL (or is not loaded)");
    return {};
}

std::string workspace_error(const char* fn, const char* what, std::int64_t need_bytes, const ResidentDevice& d,
                            int rank) {
    const std::int64_t free = d.budget_bytes() - d.used_bytes();
    if (!d.on_device() || need_bytes <= free) return {};
    return cat(fn, ": the resident ", what, " needs ", need_bytes, " bytes of workspace on ", d.name(), " (rank ", rank,
               ") but only ", free, " of its ", d.budget_bytes(), " bytes are free");
}

bool pick_transport(const char* fn, const Grid2D& g, const ResidentDevice& d, PanelTransport t, const char* what,
                    std::string& reason) {
    const bool nccl = choose_nccl(g, d, t, what, reason);
    if (!nccl && t == PanelTransport::Nccl)
        throw Error(cat(fn, ": transport Nccl requested but NCCL cannot serve: ", reason));
    if (!nccl && d.is_cuda() && g.comm().rank() == 0 && g.comm().size() > 1 &&
        std::getenv("CALA_RESIDENT_QUIET") == nullptr) {
        static std::set<std::string> said;  // one line per process and driver
        if (said.insert(fn).second) std::fprintf(stderr, "cala: resident %s: %s\n", fn, reason.c_str());
    }
    return nccl;
}

}  // namespace cala::detail

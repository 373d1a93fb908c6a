#pragma once
// Internal: the argument checks the resident drivers share (gemm.cpp, potrf.cpp, potrs.cpp), so
// that they refuse the same things with the same words: the kind of memory the operands live in
// (agreed over the ranks before the argument agreement, since a rank cannot see it elsewhere),
// operands on one device, the transport option, the device workspace against what is free, and
// the transport choice with its one-line notice.

#include <initializer_list>
#include <string>
#include <utility>

#include "cala/resident.hpp"

namespace cala::detail {

/// The kind of memory a resident matrix lives in: 0 host memory, 1 a HostDevice, 2 a CUDA device.
int memory_kind(const ResidentDevice& d) noexcept;
const char* memory_kind_name(int kind) noexcept;

/// The lowest and highest kind of memory of `devs` over all ranks of g (one control allreduce
/// when g has more than one rank). Collective over g.
std::pair<int, int> agree_kinds(const Grid2D& g, std::initializer_list<const ResidentDevice*> devs);

/// "fn: <name> lives on X but <ref_name> on Y (rank r): ..." when x and ref are not one device.
std::string same_device_error(const char* fn, const char* name, const ResidentDevice& x, const char* ref_name,
                              const ResidentDevice& ref, int rank);

/// The kinds of memory (lo, hi over ranks and operands) and the transport option: one kind
/// everywhere ("fn: <who> on X on some ranks and on Y on others"), t a PanelTransport, Nccl only
/// on CUDA devices with NCCL loaded. `who`: "A lives", "the operands live".
std::string memory_error(const char* fn, const char* who, PanelTransport t, int kind_lo, int kind_hi);

/// need_bytes of device workspace on d do not fit what it has free: "fn: the resident <what>
/// needs N bytes of workspace on D (rank r) but only F of its B bytes are free".
std::string workspace_error(const char* fn, const char* what, std::int64_t need_bytes, const ResidentDevice& d,
                            int rank);

/// Whether panels travel by NCCL (choose_nccl, `what` naming the operands). A Nccl request NCCL
/// cannot serve is a cala::Error; staging on CUDA devices is said once per process and fn on
/// rank 0 (unless CALA_RESIDENT_QUIET is set). Collective over g.
bool pick_transport(const char* fn, const Grid2D& g, const ResidentDevice& d, PanelTransport t, const char* what,
                    std::string& reason);

}  // namespace cala::detail

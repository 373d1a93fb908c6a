// Placeholder until lib/stencil lands (issue 6): the subcommand exists and says so.
#include <cstdio>
#include "commands.hpp"

namespace cala::bench {
void add_stencil_command(CLI::App& app) {
    auto* cmd = app.add_subcommand("stencil", "communication-avoiding stencil sweeps (not built yet)");
    cmd->callback([] { std::fprintf(stderr, "cala-bench stencil: not available in this build\n"); throw CLI::RuntimeError(3); });
}
}  // namespace cala::bench

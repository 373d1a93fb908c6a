// cala-bench model: per-rank words and memory of every modelled algorithm for P = 1, 2, 4, ...
// up to --p-max, beside the communication lower bounds (model_table.hpp says which, and why
// they hold). Pure model: nothing is run, no rank but 0 does anything.
//
// cala-bench model -> model_table (cala::gemm_cost, plan_gemm, potrf_cost, plan_potrf, trsm_cost)
//
//   cala-bench model --n 32768 --p-max 16384 | scripts/plots words -o docs/img/model_words
//
// One JSON object per (algorithm, P) on stdout:
//   words_max, words_recv_max, msgs_max   busiest probed rank (all ranks up to --exact-up-to)
//   held_words_max, extra_bytes_max, memory_words_max (held + workspace), memory_bytes_max
//   bound_words        the largest lower bound that holds for this row (bound_name says which)
//   bound_mem_words, bound_indep_words, bound_2d_words   each bound (null where none applies)
//   words_over_bound   words_max / bound_words

#include <mpi.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "commands.hpp"
#include "model_table.hpp"

namespace cala::bench {

namespace {

nlohmann::ordered_json opt(const std::optional<double>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

void run(const ModelSpec& spec) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) return;
    for (const ModelRow& r : model_rows(spec)) {
        nlohmann::ordered_json j = {
            {"bench", "model"},
            {"family", r.family},
            {"algorithm", r.algorithm},
            {"plan", r.plan},
            {"n", spec.n},
            {"nb", spec.nb},
            {"ranks", r.ranks},
            {"grid", std::to_string(r.p) + "x" + std::to_string(r.q) + "x" + std::to_string(r.c)},
            {"c", r.c},
            {"probed_ranks", r.probed_ranks},
            {"words_max", r.words},
            {"words_recv_max", r.words_recv},
            {"msgs_max", r.msgs},
            {"held_words_max", r.held_words},
            {"extra_bytes_max", r.extra_bytes},
            {"memory_words_max", r.memory_words},
            {"memory_bytes_max", r.memory_words * 8.0},
            {"bound_words", opt(r.bound)},
            {"bound_name", r.bound ? r.bound_name : ""},
            {"bound_mem_words", opt(r.bound_mem)},
            {"bound_indep_words", opt(r.bound_indep)},
            {"bound_2d_words", opt(r.bound_2d)},
            {"words_over_bound",
             r.bound && *r.bound > 0 ? nlohmann::ordered_json(r.words / *r.bound) : nullptr},
        };
        std::cout << j.dump() << std::endl;
    }
}

}  // namespace

void add_model_command(CLI::App& app) {
    auto spec = std::make_shared<ModelSpec>();
    auto* cmd = app.add_subcommand(
        "model",
        "per-rank words and memory of every modelled algorithm vs the lower bounds, P up to 16384");
    cmd->add_option("--n", spec->n, "order of the square problem")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    cmd->add_option("--nb", spec->nb, "block size of the user's layouts")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    cmd->add_option("--p-max", spec->p_max, "largest P (P = 1, 2, 4, ...)")
        ->check(CLI::Range(1, 1 << 20))
        ->capture_default_str();
    cmd->add_option("--exact-up-to", spec->exact_up_to,
                    "every rank's cost up to this P, a sample above")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
    cmd->add_option("--probes", spec->probes, "ranks sampled above --exact-up-to")
        ->check(CLI::Range(2, 1 << 20))
        ->capture_default_str();
    cmd->add_option("--families", spec->families, "gemm, potrf, trsm (comma-separated)")
        ->delimiter(',')
        ->check(CLI::IsMember({"gemm", "potrf", "trsm"}))
        ->capture_default_str();
    cmd->callback([spec] { run(*spec); });
}

}  // namespace cala::bench

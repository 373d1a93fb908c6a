// The table cala-bench prints on a terminal (and `cala-bench table FILE...` prints from saved
// JSON lines): one block per kind of result, one row per result, the columns a reader compares.
//
//   gemm, potrf  case | cala GF/s | ScaLAPACK GF/s | cala/ScaLAPACK | efficiency | words/rank vs model
//   stencil      case | ms/step | roofline | msgs/step vs model | words/step vs model
//   mw           case | makespan | predicted | GF/s | words (master) vs model
// Rates are medians over the timed runs; efficiency is the median rate over the concurrent
// reference (concurrent_ref.hpp). Results that failed a check show it in the last column.

#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <fstream>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "output.hpp"

namespace cala::bench {

namespace {

using Json = nlohmann::ordered_json;

struct Column {
    std::string head;
    std::function<std::string(const Json&)> cell;
};

std::string num(const Json& j, const char* key, const char* fmt = "%.1f", double scale = 1) {
    if (!j.contains(key) || !j[key].is_number()) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, j[key].get<double>() * scale);
    return buf;
}

std::string str(const Json& j, const char* key) {
    if (!j.contains(key)) return "";
    return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

// "measured (= model)" or "measured vs model" for two integer-valued fields.
std::string versus(const Json& j, const char* measured, const char* model, double scale = 1) {
    if (!j.contains(measured) || !j.contains(model)) return "-";
    const double a = j[measured].get<double>() * scale, b = j[model].get<double>() * scale;
    auto fmt = [](double x) {
        char buf[48];
        std::snprintf(buf, sizeof buf, x == std::floor(x) && std::fabs(x) < 1e15 ? "%.0f" : "%.4g", x);
        return std::string(buf);
    };
    return a == b ? fmt(a) + " = model" : fmt(a) + " vs " + fmt(b);
}

std::string ratio(const Json& j, const char* a, const char* b) {
    if (!j.contains(a) || !j.contains(b) || j[b].get<double>() <= 0) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2fx", j[a].get<double>() / j[b].get<double>());
    return buf;
}

std::string status(const Json& j) {
    if (j.contains("error")) return "ERROR: " + str(j, "error");
    if (j.contains("check_error") && j["check_error"].is_number() && j["check_error"].get<double>() >= 1)
        return "WRONG RESULT (check_error " + num(j, "check_error", "%.3g") + ")";
    return "ok";
}

Column efficiency() {
    return {"efficiency", [](const Json& j) { return num(j, "efficiency", "%.1f%%", 100); }};
}

std::vector<Column> columns(const std::string& bench, const Json& first) {
    if (bench == "gemm" || bench == "potrf") {
        const bool g = bench == "gemm";
        return {
            {"case",
             [g](const Json& j) {
                 return (g ? str(j, "m") + "x" + str(j, "n") + "x" + str(j, "k") : "n=" + str(j, "n")) + " " +
                        str(j, "type") + " grid " + str(j, "grid") + " " + str(j, "threads") + " thr/rank " +
                        str(j, "variant") + (g ? "" : " panel " + str(j, "panel")) +
                        (j.contains("resident") ? " resident on " + str(j, "device") + " vs " + str(j, "reference") : "");
             }},
            {"cala GF/s", [](const Json& j) { return num(j, "gflops_median"); }},
            {"ScaLAPACK GF/s", [](const Json& j) { return num(j, "scalapack_gflops_median"); }},
            {"cala/ScaLAPACK", [](const Json& j) { return ratio(j, "gflops_median", "scalapack_gflops_median"); }},
            {"reference GF/s", [](const Json& j) { return num(j, "reference_gflops"); }},
            efficiency(),
            {"words/rank", [g](const Json& j) { return versus(j, "words_max", g ? "words_model" : "words_model_max"); }},
            {"status", status},
        };
    }
    if (bench == "stencil")
        return {
            {"case", [](const Json& j) { return str(j, "stencil") + " " + str(j, "grid") + " n/rank " + str(j, "n_per_rank") + " depth " + str(j, "depth"); }},
            {"ms/step", [](const Json& j) { return num(j, "time_per_step_median_s", "%.3f", 1e3); }},
            {"sweep GB/s", [](const Json& j) { return num(j, "sweep_gbs"); }},
            {"copy GB/s", [](const Json& j) { return num(j, "copy_gbs"); }},
            {"roofline", [](const Json& j) { return num(j, "roofline_fraction", "%.2f"); }},
            {"msgs/step", [](const Json& j) { return versus(j, "msgs_per_step", "model_msgs_per_step"); }},
            {"words/step", [](const Json& j) { return versus(j, "words_per_step", "model_words_per_step"); }},
            {"status", status},
        };
    if (bench == "mw" && first.contains("summary"))
        return {{"strategy", [](const Json& j) { return str(j, "strategy"); }},
                {"mean relative cost", [](const Json& j) { return num(j, "mean_relative_cost", "%.3f"); }},
                {"mean relative work", [](const Json& j) { return num(j, "mean_relative_work", "%.3f"); }}};
    if (bench == "mw")
        return {
            {"case", [](const Json& j) { return str(j, "strategy") + " " + str(j, "m") + "x" + str(j, "n") + "x" + str(j, "k") + " " + str(j, "workers") + " workers"; }},
            {"makespan s", [](const Json& j) { return num(j, "makespan_s", "%.4f"); }},
            {"predicted s", [](const Json& j) { return num(j, "predicted_makespan_s", "%.4f"); }},
            {"GF/s", [](const Json& j) { return num(j, "gflops"); }},
            {"words (master)", [](const Json& j) { return versus(j, "words_master", "words_model"); }},
            {"status", status},
        };
    if (bench == "calibrate")
        return {{"ranks", [](const Json& j) { return str(j, "ranks"); }},
                {"latency us", [](const Json& j) { return num(j, "latency_us", "%.2f"); }},
                {"bandwidth GB/s", [](const Json& j) { return num(j, "bandwidth_gbs", "%.2f"); }},
                {"GF/s per rank", [](const Json& j) { return num(j, "gflops_per_rank"); }}};
    // Anything else: its scalar fields, as they come.
    std::vector<Column> out;
    for (const auto& [k, v] : first.items())
        if (k != "bench" && !v.is_structured() && out.size() < 8) {
            const std::string key = k;
            out.push_back({key, [key](const Json& j) { return j.contains(key) ? str(j, key.c_str()) : ""; }});
        }
    return out;
}

void print_block(std::ostream& out, const std::string& bench, const std::vector<Json>& rows) {
    const auto cols = columns(bench, rows.front());
    std::vector<std::vector<std::string>> cells;
    std::vector<std::size_t> width(cols.size());
    for (std::size_t c = 0; c < cols.size(); ++c) width[c] = cols[c].head.size();
    for (const Json& j : rows) {
        auto& r = cells.emplace_back();
        for (std::size_t c = 0; c < cols.size(); ++c) {
            r.push_back(cols[c].cell(j));
            width[c] = std::max(width[c], r.back().size());
        }
    }
    auto line = [&](const std::vector<std::string>& r) {
        std::string s;
        for (std::size_t c = 0; c < r.size(); ++c) {
            const std::string pad(width[c] - r[c].size(), ' ');
            s += c == 0 || c + 1 == r.size() ? r[c] + pad : pad + r[c];  // text left, numbers right
            s += c + 1 < r.size() ? "  " : "";
        }
        while (!s.empty() && s.back() == ' ') s.pop_back();
        out << s << "\n";
    };
    out << "\ncala-bench " << bench << "\n";
    std::vector<std::string> head;
    for (const auto& c : cols) head.push_back(c.head);
    line(head);
    std::size_t total = 0;  // (the last column, the status, counts as its header's width)
    for (std::size_t c = 0; c < width.size(); ++c) total += (c + 1 < width.size() ? width[c] : cols[c].head.size()) + 2;
    out << std::string(total - 2, '-') << "\n";
    for (const auto& r : cells) line(r);
}

}  // namespace

void print_table(std::ostream& out, const std::vector<nlohmann::ordered_json>& lines) {
    // One block per bench (and per mode of mw), in the order of first appearance.
    std::vector<std::string> order;
    std::map<std::string, std::vector<Json>> blocks;
    for (const Json& j : lines) {
        std::string key = j.contains("bench") ? str(j, "bench") : "?";
        if (key == "mw" && j.contains("summary")) {
            for (const auto& [s, v] : j["strategies"].items()) {
                Json row = v;
                row["strategy"] = s;
                row["summary"] = true;
                if (!blocks.count("mw summary")) order.push_back("mw summary");
                blocks["mw summary"].push_back(row);
            }
            continue;
        }
        if (key == "mw" && str(j, "mode") == "simulate") continue;  // per-platform lines: in the file
        if (!blocks.count(key)) order.push_back(key);
        blocks[key].push_back(j);
    }
    for (const auto& k : order) print_block(out, k == "mw summary" ? "mw" : k, blocks[k]);
}

void add_table_command(CLI::App& app) {
    auto files = std::make_shared<std::vector<std::string>>();
    auto* cmd = app.add_subcommand("table", "print the table of JSON lines saved by cala-bench (files, or - for stdin)");
    cmd->add_option("files", *files, "JSON-lines files")->required();
    cmd->callback([files] {
        std::vector<Json> lines;
        for (const std::string& f : *files) {
            std::ifstream in;
            if (f != "-") {
                in.open(f);
                if (!in) throw CLI::ValidationError("files", "cannot read " + f);
            }
            std::istream& src = f == "-" ? std::cin : in;
            for (std::string l; std::getline(src, l);) {
                if (l.empty() || l[0] != '{') continue;  // not a result line
                try {
                    lines.push_back(Json::parse(l));
                } catch (const Json::parse_error&) {
                    throw CLI::ValidationError("files", f + ": not a JSON line: " + l.substr(0, 60));
                }
            }
        }
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0) print_table(std::cout, lines);
    });
}

}  // namespace cala::bench

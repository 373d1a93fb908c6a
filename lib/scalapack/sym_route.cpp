// The shim's choice between 2DBC in place and a symmetric layout for p?symm_/p?syrk_ (the
// phases and their costs: sym_route.hpp).

#include "scalapack/sym_route.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cala/symm.hpp"
#include "core/check.hpp"

namespace cala::scalapack {

SymForce parse_symmetric_force(const char* text, bool* bad) {
    if (bad) *bad = false;
    if (text == nullptr || *text == '\0' || std::strcmp(text, "auto") == 0) return SymForce::Auto;
    if (std::strcmp(text, "2dbc") == 0) return SymForce::TwoD;
    if (std::strcmp(text, "sbc") == 0) return SymForce::Sbc;
    if (std::strcmp(text, "tbc") == 0) return SymForce::Tbc;
    if (bad) *bad = true;
    return SymForce::Auto;
}

SymForce symmetric_force() {
    const char* text = std::getenv("CALA_SHIM_SYMMETRIC");
    bool bad = false;
    const SymForce f = parse_symmetric_force(text, &bad);
    static bool said = false;
    if (bad && !said) {
        said = true;
        std::fprintf(stderr, "cala_scalapack: ignoring CALA_SHIM_SYMMETRIC=%s (not auto, 2dbc, sbc or tbc)\n", text);
    }
    return f;
}

const char* to_string(SymForce f) noexcept {
    switch (f) {
        case SymForce::Auto: return "auto";
        case SymForce::TwoD: return "2dbc";
        case SymForce::Sbc: return "sbc";
        case SymForce::Tbc: return "tbc";
    }
    return "?";
}

index_t SymProblem::other() const noexcept {
    if (rank_k) return op == Op::N ? a.n() : a.m();
    return side == Side::Left ? c.n() : c.m();
}

BlockCyclic SymProblem::workspace() const {
    return {c.rows, Dist1D(other(), c.cols.nb, c.q(), 0, 0, "workspace columns")};
}

SymLayouts symmetric_layouts(const SymProblem& p, const SymmetricChoice& choice) {
    SymLayouts l{make_symmetric_layout(choice, p.sym_n(), p.sym_nb()), {}, {}, {}};
    if (p.rank_k) {
        l.a = TileLayout::paired(l.sym, Side::Left, p.other(), p.sym_nb());
        l.c = TileLayout::lower(l.sym);
    } else {
        l.a = TileLayout::lower(l.sym);
        l.b = TileLayout::paired(l.sym, p.side, p.other(), p.sym_nb());
        l.c = l.b;
    }
    return l;
}

std::string SymCandidate::name() const {
    if (!layout) return "2dbc";
    return detail::cat(cala::to_string(layout->kind), layout->kind == SymmetricKind::TBC ? " c=" : " r=",
                       layout->param);
}

std::string SymDecision::describe() const {
    std::string s = detail::cat("route=", pick().name(), " (", to_string(force), ") predicted");
    for (const SymCandidate& c : candidates) s += detail::cat(" ", c.name(), "=", c.seconds, "s");
    if (!note.empty()) s += "; " + note;
    return s;
}

namespace {

std::pair<int, int> coords(const SymProblem& p, int rank) {
    return p.order == GridOrder::RowMajor ? std::pair{rank / p.c.q(), rank % p.c.q()}
                                          : std::pair{rank % p.c.p(), rank / p.c.p()};
}

std::vector<Cost> phases_2dbc(const SymProblem& p, int rank) {
    const auto [row, col] = coords(p, rank);
    std::vector<Cost> out;
    if (p.rank_k) {
        const bool move = p.moves_a_2dbc();
        const BlockCyclic w = move ? p.workspace() : p.a;
        if (move) out.push_back(redistribute_cost(p.op, p.a, w, row, col));
        out.push_back(syrk_cost(p.uplo, w, p.c, p.order, rank, p.is_complex));
    } else {
        if (!(p.b == p.c)) out.push_back(redistribute_cost(Op::N, p.b, p.c, row, col));
        out.push_back(symm_cost(p.side, p.uplo, p.a, p.c, p.order, rank, p.is_complex));
    }
    return out;
}

std::vector<Cost> phases_symmetric(const SymProblem& p, const SymLayouts& l, int rank) {
    std::vector<Cost> out;
    if (p.rank_k) {
        BlockCyclic src = p.a;
        if (p.op != Op::N) {
            const auto [row, col] = coords(p, rank);
            src = p.workspace();
            out.push_back(redistribute_cost(p.op, p.a, src, row, col));
        }
        out.push_back(redistribute_cost(src, p.order, l.a, rank));
        out.push_back(redistribute_cost(p.c, p.order, l.c, rank));
        out.push_back(syrk_cost(l.a, l.c, rank, p.is_complex));
    } else {
        out.push_back(redistribute_cost(p.a, p.order, l.a, rank));
        out.push_back(redistribute_cost(p.b, p.order, l.b, rank));
        if (!p.beta_zero) out.push_back(redistribute_cost(p.c, p.order, l.c, rank));
        out.push_back(symm_cost(p.side, l.a, l.b, rank, p.is_complex));
    }
    out.push_back(redistribute_cost(l.c, p.c, p.order, rank));
    return out;
}

// The ranks whose figures the prediction takes: all of them up to 64, else 16 spread evenly (the
// first and last of each stretch are the busiest in both kinds of layout).
std::vector<int> probe_ranks(int nranks) {
    std::vector<int> r;
    if (nranks <= 64) {
        for (int x = 0; x < nranks; ++x) r.push_back(x);
    } else {
        for (int x = 0; x < 16; ++x) r.push_back(static_cast<int>(std::int64_t(x) * (nranks - 1) / 15));
    }
    return r;
}

// Elements rank `rank` copies in the route's redistributions: every element it holds of a source
// is packed once and every element it holds of a destination is unpacked once, whether it crosses
// the network or stays on the rank (the words of the phases count only what crosses). Not
// traffic: only the prediction charges it, at the model's bandwidth.
double copied_elements(const SymProblem& p, const SymLayouts* l, int rank) {
    const auto [row, col] = coords(p, rank);
    auto bc = [&](const BlockCyclic& x) { return double(x.rows.local_size(row)) * double(x.cols.local_size(col)); };
    double e = 0;
    if (p.rank_k) {
        const bool move = l != nullptr ? p.op != Op::N : p.moves_a_2dbc();
        if (move) e += bc(p.a) + bc(p.workspace());
        if (l != nullptr) {
            e += bc(p.op != Op::N ? p.workspace() : p.a) + double(l->a.local_elements(rank));
            e += 2 * (bc(p.c) + double(l->c.local_elements(rank)));  // C in and back
        }
    } else if (l != nullptr) {
        e += bc(p.a) + double(l->a.local_elements(rank)) + bc(p.b) + double(l->b.local_elements(rank));
        e += (p.beta_zero ? 1 : 2) * (bc(p.c) + double(l->c.local_elements(rank)));
    } else if (!(p.b == p.c)) {
        e += bc(p.b) + bc(p.c);
    }
    return e;
}

double predict(const SymProblem& p, const std::optional<SymLayouts>& l, const MachineModel& mm) {
    std::vector<double> worst;
    double copies = 0;
    for (int rank : probe_ranks(p.nranks())) {
        const std::vector<Cost> ph = l ? phases_symmetric(p, *l, rank) : phases_2dbc(p, rank);
        worst.resize(ph.size(), 0.0);
        for (std::size_t i = 0; i < ph.size(); ++i) {
            const double words = double(std::max(ph[i].words - ph[i].words_recv, ph[i].words_recv));
            const double t = mm.latency_s * double(ph[i].msgs) + mm.seconds_per_byte * double(p.elem_size) * words +
                             mm.seconds_per_flop * ph[i].flops;
            worst[i] = std::max(worst[i], t);
        }
        copies = std::max(copies, mm.seconds_per_byte * double(p.elem_size) * copied_elements(p, l ? &*l : nullptr, rank));
    }
    double s = copies;
    for (double w : worst) s += w;
    return s;
}

bool matches(SymForce f, SymmetricKind k) {
    return f == SymForce::Tbc ? k == SymmetricKind::TBC : k != SymmetricKind::TBC;
}

}  // namespace

std::vector<Cost> route_phases(const SymProblem& p, const std::optional<SymmetricChoice>& layout, int rank) {
    return layout ? phases_symmetric(p, symmetric_layouts(p, *layout), rank) : phases_2dbc(p, rank);
}

Cost route_cost(const SymProblem& p, const std::optional<SymmetricChoice>& layout, int rank) {
    Cost sum;
    for (const Cost& c : route_phases(p, layout, rank)) {
        sum.words += c.words, sum.words_recv += c.words_recv, sum.msgs += c.msgs, sum.flops += c.flops;
        sum.extra_bytes = std::max(sum.extra_bytes, c.extra_bytes);
    }
    return sum;
}

SymDecision decide_symmetric(const SymProblem& p, SymForce force, const MachineModel& mm) {
    SymDecision d;
    d.force = force;
    d.candidates.push_back({std::nullopt, predict(p, std::nullopt, mm)});
    std::vector<SymmetricChoice> fit;
    if (p.uplo == Uplo::Upper) {
        d.note = "UPLO = U stays on 2dbc (SBC/TBC hold the lower half only)";
    } else {
        try {
            fit = choose_symmetric_layout(p.nranks(), p.sym_n(), p.sym_nb());
        } catch (const Error&) {
            d.note = detail::cat("no symmetric pattern fits ", p.nranks(), " ranks");
        }
    }
    for (const SymmetricChoice& ch : fit) d.candidates.push_back({ch, predict(p, symmetric_layouts(p, ch), mm)});
    // Auto: the lowest prediction, 2DBC on ties; forced: the lowest of the forced kind.
    if (force == SymForce::TwoD) return d;
    bool found = false;
    for (std::size_t i = 1; i < d.candidates.size(); ++i) {
        if (force != SymForce::Auto && !matches(force, d.candidates[i].layout->kind)) continue;
        const bool better = d.candidates[i].seconds < d.candidates[d.chosen].seconds;
        if ((force != SymForce::Auto && !found) || better) d.chosen = i;
        found = true;
    }
    if (force != SymForce::Auto && !found) {
        const std::string why = p.uplo == Uplo::Upper ? std::string("UPLO = U")
                                                      : detail::cat("no ", to_string(force), " pattern fits ",
                                                                    p.nranks(), " ranks");
        d.note = detail::cat("forced ", to_string(force), " does not fit (", why, "): 2dbc instead");
    }
    return d;
}

}  // namespace cala::scalapack

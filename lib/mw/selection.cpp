// Incremental resource selection (Section 5 of the paper), and min-min (OMMOML).
//
// Phase 1 builds, one step send at a time, the order in which the master feeds the workers, on
// an infinitely tall matrix of sum(mu_i) block columns: choosing worker j means sending it one
// step (mu_j blocks of A and mu_j of B: mu_j^2 block updates). A worker that has been chosen
// ceil(r / mu_j)·t times has filled a panel of mu_j block columns: it gets the next mu_j block
// columns of C. The phase stops when every block column of C is dealt. Phase 2 (the run) sends
// the steps in that order, dropping the choices of workers whose last panel was never filled.
//
// Each choice is scored on a model of the master's port and the workers' buffers:
//   start = max(port free, worker j has a free buffer), end = start + (rows + cols)·c_j
//   global: (work so far + rows·cols) / end          local: rows·cols / (end - port free)
//   look-ahead: the best score of the pair (j, then the best next choice)
//   C cost: a chunk's first step also pays its C exchange (rows·cols·c_j in, as much out)
//   min-min (OMMOML): the earliest end of the step's computation.

#include <cmath>

#include "mw/plan.hpp"

namespace cala::mw::detail {

namespace {

struct WState {
    std::int64_t nsel = 0;
    double comp[2] = {0, 0};  // end of the computation of the last two steps chosen (newest first)
};

struct State {
    double port = 0, work = 0;
    std::vector<WState> w;
};

struct Choice {
    double end = 0, comp_end = 0, work = 0;
};

class Selector {
public:
    Selector(const Platform& p, const Dims& d, const std::vector<Layout>& l, const Selection& s)
        : p_(p), d_(d), l_(l), sel_(s) {}

    Choice evaluate(const State& st, int j) const {
        const Layout& l = l_[j];
        const WState& x = st.w[j];
        const index_t nsteps = steps_of(l, d_);
        const bool chunk_start = x.nsel % nsteps == 0;
        double ready = 0;
        if (x.nsel > 0 && chunk_start)
            ready = x.comp[0];  // the previous chunk is finished
        else if (x.nsel >= l.nbuf)
            ready = x.comp[l.nbuf - 1];  // a step buffer is free
        const double rc = static_cast<double>(l.rows * l.cols);
        double dur = static_cast<double>((l.rows + l.cols) * l.depth) * p_.workers[j].c;
        if (sel_.c_cost && chunk_start) dur += (x.nsel == 0 ? 1 : 2) * rc * p_.workers[j].c;
        Choice c;
        c.end = std::max(st.port, ready) + dur;
        c.work = rc * static_cast<double>(l.depth);
        c.comp_end = std::max(c.end, x.comp[0]) + c.work * p_.workers[j].w;
        return c;
    }

    static void apply(State& st, int j, const Choice& c) {
        st.port = c.end;
        st.work += c.work;
        st.w[j].comp[1] = st.w[j].comp[0];
        st.w[j].comp[0] = c.comp_end;
        ++st.w[j].nsel;
    }

    double score(const State& st, const Choice& c, double port0, double work0) const {
        if (sel_.min_min) return -c.comp_end;
        if (sel_.global) return (st.work + c.work) / c.end;
        return (st.work - work0 + c.work) / std::max(c.end - port0, 1e-300);
    }

    int choose(const State& st) const {
        int best = -1;
        double best_score = -INFINITY;
        for (int j = 0; j < static_cast<int>(l_.size()); ++j) {
            if (!l_[j].used()) continue;
            const Choice c = evaluate(st, j);
            double sc = score(st, c, st.port, st.work);
            if (sel_.lookahead && !sel_.min_min) {
                State next = st;
                apply(next, j, c);
                double best2 = -INFINITY;
                for (int k = 0; k < static_cast<int>(l_.size()); ++k)
                    if (l_[k].used())
                        best2 = std::max(best2, score(next, evaluate(next, k), st.port, st.work));
                sc = best2;
            }
            if (best < 0 || sc > best_score + 1e-12 * std::abs(best_score)) {  // ties: lowest index
                best = j;
                best_score = sc;
            }
        }
        return best;
    }

private:
    const Platform& p_;
    const Dims& d_;
    const std::vector<Layout>& l_;
    Selection sel_;
};

std::string variant_name(const Selection& s) {
    if (s.min_min) return "min-min";
    std::string v = s.global ? "global" : "local";
    if (s.lookahead) v += "+lookahead";
    if (s.c_cost) v += "+C";
    return v;
}

}  // namespace

Plan select_plan(const Platform& p, const Dims& d, const std::vector<Layout>& layout,
                 const Selection& sel) {
    const int np = static_cast<int>(layout.size());
    Plan plan;
    plan.variant = variant_name(sel);
    plan.layout = layout;
    plan.chunks.assign(np, {});
    if (d.r == 0 || d.s == 0 || d.t == 0) return plan;

    Selector selector(p, d, layout, sel);
    State st;
    st.w.assign(np, {});
    std::vector<int> order;
    std::vector<std::int64_t> panels(np, 0);
    index_t dealt = 0;
    while (dealt < d.s) {
        const int j = selector.choose(st);
        if (j < 0) break;  // no usable worker (validated platforms always have one)
        selector.apply(st, j, selector.evaluate(st, j));
        order.push_back(j);
        const Layout& l = layout[j];
        const std::int64_t panel_steps = ceil_div(d.r, l.rows) * steps_of(l, d);
        if (st.w[j].nsel % panel_steps == 0) {
            const index_t w = std::min(l.cols, d.s - dealt);
            panel_chunks(d, l.rows, dealt, w, plan.chunks[j]);
            dealt += w;
            ++panels[j];
        }
    }
    std::vector<std::int64_t> left(np);
    for (int j = 0; j < np; ++j)
        left[j] = layout[j].used()
                      ? panels[j] * ceil_div(d.r, layout[j].rows) * steps_of(layout[j], d)
                      : 0;
    for (int j : order)
        if (left[j] > 0) {
            plan.sequence.push_back(j);
            --left[j];
        }
    return plan;
}

Plan round_robin_plan(const Dims& d, const std::vector<Layout>& layout,
                      const std::vector<int>& workers) {
    Plan plan;
    plan.layout = layout;
    plan.chunks.assign(layout.size(), {});
    if (d.r == 0 || d.s == 0 || d.t == 0 || workers.empty()) return plan;
    index_t dealt = 0;
    while (dealt < d.s)
        for (int w : workers) {
            if (dealt >= d.s) break;
            const index_t width = std::min(layout[w].cols, d.s - dealt);
            panel_chunks(d, layout[w].rows, dealt, width, plan.chunks[w]);
            dealt += width;
        }
    std::vector<std::int64_t> left(layout.size(), 0);
    std::int64_t total = 0;
    for (int w : workers) {
        left[w] = static_cast<std::int64_t>(plan.chunks[w].size()) * steps_of(layout[w], d);
        total += left[w];
    }
    while (total > 0)
        for (int w : workers)
            if (left[w] > 0) {
                plan.sequence.push_back(w);
                --left[w];
                --total;
            }
    return plan;
}

}  // namespace cala::mw::detail

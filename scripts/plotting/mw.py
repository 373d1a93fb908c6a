"""Master-worker relative cost per strategy (cala-bench mw lines): simulated on the paper's
platform classes (--simulate: relative_cost = makespan over the best strategy's on that
platform, mean per class), and real runs (per configuration, makespan over the best strategy's,
measured and as the simulator predicted it)."""

import re
from collections import defaultdict

import matplotlib.pyplot as plt
import numpy as np

from .common import NoData, of_bench, median


def _platform_class(name):
    return re.sub(r"-(n\d+|\d+)$", "", name)  # memory-n64000 -> memory, random-3 -> random


def _bars(ax, table, strategies, classes, ylabel, title):
    width = 0.8 / max(1, len(strategies))
    for i, s in enumerate(strategies):
        ys = [table[c].get(s, np.nan) for c in classes]
        ax.bar(np.arange(len(classes)) + i * width, ys, width, label=s)
    ax.set_xticks(np.arange(len(classes)) + (len(strategies) - 1) * width / 2, classes, fontsize=7)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=2)


def _config(j):
    slow = ""
    if j.get("compute_slowdown") or j.get("link_slowdown"):
        slow = f"\nslowdown w {j.get('compute_slowdown')} c {j.get('link_slowdown')}"
    return f"{j['m']}x{j['n']}x{j['k']}, {j.get('workers', '?')} workers\nmemory {j.get('memory_mib')} MiB{slow}"


def draw(lines, out_title=None):
    runs = of_bench(lines, "mw")
    sim = [j for j in runs if j.get("mode") == "simulate" and not j.get("summary")]
    real = [j for j in runs if j.get("mode") == "run"]
    if not sim and not real:
        raise NoData("no cala-bench mw line")
    panels = [p for p in (sim, real) if p]
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.2), squeeze=False)
    axes = list(axes[0])
    if sim:
        cost = defaultdict(lambda: defaultdict(list))
        for j in sim:
            cost[_platform_class(j["platform"])][j["strategy"]].append(j["relative_cost"])
        classes = sorted(cost)
        strategies = sorted({j["strategy"] for j in sim})
        table = {c: {s: np.mean(v) for s, v in cost[c].items()} for c in classes}
        _bars(axes.pop(0), table, strategies, classes, "makespan / best strategy's (mean over platforms)",
              out_title or "simulated, the paper's platform classes")
    if real:
        ax = axes.pop(0)
        configs = defaultdict(list)
        for j in real:
            configs[_config(j)].append(j)
        classes = list(configs)
        strategies = sorted({j["strategy"] for j in real})
        table, pred = {}, {}
        for c, js in configs.items():
            best = min(j["makespan_s"] for j in js)
            table[c] = {j["strategy"]: j["makespan_s"] / best for j in js}
            # The prediction's own relative cost (over its best strategy): the platform the
            # simulator was given was discovered in the same run, under the same load.
            p = {j["strategy"]: j["predicted_makespan_s"] for j in js if j.get("predicted_makespan_s")}
            pred[c] = {s: v / min(p.values()) for s, v in p.items()}
        _bars(ax, table, strategies, classes, "makespan / best strategy's (measured)",
              "real runs, 1 master + workers (x: the simulator's relative cost)")
        width = 0.8 / len(strategies)
        for i, s in enumerate(strategies):
            xs = [k + i * width for k, c in enumerate(classes) if s in pred[c]]
            ax.plot(xs, [pred[c][s] for c in classes if s in pred[c]], "kx", ms=7,
                    label="predicted" if i == 0 else None)
        ax.legend(fontsize=7, ncol=2)
    return fig

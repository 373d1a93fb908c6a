"""The node runtime's strategies side by side (cala-bench hetero lines, one per strategy): the
median seconds (a dot: the best run) and the tiles moved (host <-> unit and unit <-> unit, all
units) per strategy, the steals written on the bars; one row of two panels per configuration
(sizes, tile, units and speeds)."""

from collections import OrderedDict

import matplotlib.pyplot as plt
import numpy as np

from .common import NoData, of_bench


def _config(j):
    speeds = ",".join(f"{s:g}" for s in j.get("speeds", []))
    return (f"m={j.get('m')} n={j.get('n')} k={j.get('k')}, tile {j.get('tile')}, "
            f"units {j.get('devices', '?')}, speeds {speeds}")


def _colour(strategy):
    if strategy in ("dmda", "cyclic"):
        return "0.55"  # the baselines in grey
    return {"effective": "C0", "rand": "C1", "static": "C2"}.get(strategy.rsplit("-", 1)[-1], "C3")


def draw(lines, out_title=None):
    runs = of_bench(lines, "hetero")
    if not runs:
        raise NoData("no cala-bench hetero line")
    configs = OrderedDict()
    for j in runs:
        configs.setdefault(_config(j), OrderedDict())[j["strategy"]] = j  # the last line of a strategy wins
    fig, axes = plt.subplots(len(configs), 2, figsize=(12, 3.6 * len(configs)), squeeze=False)
    for row, (cfg, by) in enumerate(configs.items()):
        names = list(by)
        x = np.arange(len(names))
        colours = [_colour(s) for s in names]
        ax_t, ax_m = axes[row]
        ax_t.bar(x, [by[s]["seconds"] for s in names], color=colours)
        best = [by[s].get("best_s", np.nan) for s in names]
        ax_t.plot(x, best, "k.", ms=6, label="best run")
        ax_t.set_ylabel("seconds (median)")
        ax_t.legend(fontsize=7)
        ax_m.bar(x, [by[s]["tiles_moved"] for s in names], color=colours)
        ax_m.set_ylabel("tiles moved")
        ax_m.set_ylim(0, 1.3 * max([by[s]["tiles_moved"] for s in names] + [1]))  # room for the steals
        for i, s in enumerate(names):
            ax_m.annotate(f"{by[s].get('steals', 0)} steals", (i, by[s]["tiles_moved"]), ha="center", va="bottom",
                          fontsize=6, rotation=90, xytext=(0, 2), textcoords="offset points")
        for ax in (ax_t, ax_m):
            ax.set_xticks(x, names, rotation=40, ha="right", fontsize=7)
        ax_t.set_title(out_title if out_title and row == 0 else f"time per strategy\n{cfg}", fontsize=8)
        ax_m.set_title(f"tiles moved per strategy (steals on the bars)\n{cfg}", fontsize=8)
    return fig

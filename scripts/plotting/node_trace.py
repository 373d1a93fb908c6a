"""A traced run of the node runtime (cala-bench hetero --trace FILE): one row per unit with its
tasks as bars (a task stolen from another unit's list in red, marked with a triangle) and its C
tile moves, and one row per device unit for its A/B prefetch copies. The runtime puts unit u's
tasks and C moves on track u and its prefetches on track units + u (cala/node.hpp); the number
of units is the number of tracks that hold tasks. `units` names them ("cpu,host,host")."""

from collections import defaultdict

import matplotlib.pyplot as plt

from .common import NoData

TASK, STOLEN, MOVE = "C0", "C3", "C2"


def draw(events, units=None, out_title=None):
    spans = [e for e in events if e.get("ph") == "X" and "ts" in e and "dur" in e]
    tasks = [e for e in spans if e.get("name") in ("task", "stolen task")]
    if not tasks:
        raise NoData("no node task ('task' / 'stolen task') in the trace")
    g = max(int(e.get("tid", 0)) for e in tasks) + 1
    kinds = (units or "").split(",") if units else []
    name = lambda u: f"unit {u}" + (f" ({kinds[u]})" if u < len(kinds) and kinds[u] else "")  # noqa: E731
    t0 = min(float(e["ts"]) for e in spans)
    ms = lambda e: ((float(e["ts"]) - t0) / 1e3, max(float(e["dur"]), 0.0) / 1e3)  # noqa: E731
    # Rows: (unit, prefetch track?) in unit order; the runtime's track t is row index[t].
    tracks = sorted({int(e.get("tid", 0)) for e in spans})
    rows = sorted({(t % g, t >= g) for t in tracks if t < 2 * g})
    index = {(u + g if copy else u): i for i, (u, copy) in enumerate(rows)}
    bars, stolen = defaultdict(list), defaultdict(int)
    for e in spans:
        tid = int(e.get("tid", 0))
        if tid not in index:
            continue
        kind = {"task": TASK, "stolen task": STOLEN}.get(e.get("name"), MOVE) if tid < g else MOVE
        stolen[tid] += e.get("name") == "stolen task"
        bars[(index[tid], kind)].append(ms(e))
    fig, ax = plt.subplots(figsize=(11, 1.2 + 0.45 * len(rows)))
    for (row, kind), xs in bars.items():
        h = 0.8 if kind != MOVE else 0.35
        ax.broken_barh(xs, (row - h / 2, h), facecolors=kind, edgecolor="white" if kind != MOVE else "none",
                       linewidth=0.3)
    for (row, kind), xs in bars.items():
        if kind == STOLEN:
            ax.plot([x + w / 2 for x, w in xs], [row - 0.5] * len(xs), "v", color=STOLEN, ms=4)
    labels = [name(u) + (" prefetch" if copy else f": {stolen[u]} stolen" if stolen[u] else "") for u, copy in rows]
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("time (ms) from the first event")
    n_stolen = sum(stolen.values())
    ax.set_title(out_title or f"node trace: {len(tasks)} tasks on {g} units, {n_stolen} stolen")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in (TASK, STOLEN, MOVE)]
    ax.legend(handles, ["task", "stolen task", "tile copy (C move, A/B prefetch)"], fontsize=7, loc="upper left",
              bbox_to_anchor=(1.0, 1.0))
    ax.grid(axis="y", visible=False)
    return fig


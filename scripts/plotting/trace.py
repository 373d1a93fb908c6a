"""The timeline of a traced run: one row per (rank, thread or unit), every task a bar coloured
by its kind. Input: a Chrome / Perfetto trace file (Trace Event Format), the object form
{"traceEvents": [...]} or a bare list; complete events ("ph": "X", ts and dur in µs, pid the
rank, tid the thread or unit) are drawn, "thread_name" / "process_name" metadata events name the
rows, every other event is ignored."""

import json
from collections import defaultdict

import matplotlib.pyplot as plt

from .common import NoData


def read(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    return doc.get("traceEvents", []) if isinstance(doc, dict) else doc


def draw(events, out_title=None):
    spans = [e for e in events if e.get("ph") == "X" and "ts" in e and "dur" in e]
    if not spans:
        raise NoData("no complete ('ph': 'X') event in the trace")
    names = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") in ("thread_name", "process_name"):
            key = (e.get("pid"), e.get("tid") if e["name"] == "thread_name" else None)
            names[key] = (e.get("args") or {}).get("name")
    t0 = min(float(e["ts"]) for e in spans)
    rows = sorted({(e.get("pid", 0), e.get("tid", 0)) for e in spans}, key=lambda r: (str(r[0]).zfill(8), str(r[1]).zfill(8)))
    index = {r: i for i, r in enumerate(rows)}
    kinds = sorted({str(e.get("cat") or e.get("name") or "?") for e in spans})
    cmap = plt.get_cmap("tab20" if len(kinds) > 10 else "tab10")
    colour = {k: cmap(i % cmap.N) for i, k in enumerate(kinds)}
    bars = defaultdict(list)
    for e in spans:
        kind = str(e.get("cat") or e.get("name") or "?")
        bars[(index[(e.get("pid", 0), e.get("tid", 0))], kind)].append(
            ((float(e["ts"]) - t0) / 1e3, max(float(e["dur"]), 0.0) / 1e3))
    fig, ax = plt.subplots(figsize=(11, 0.9 + 0.32 * len(rows)))
    for (row, kind), xs in bars.items():
        ax.broken_barh(xs, (row - 0.4, 0.8), facecolors=colour[kind], edgecolor="none")
    labels = []
    for pid, tid in rows:
        proc = names.get((pid, None)) or f"rank {pid}"
        labels.append(f"{proc} / {names.get((pid, tid)) or f'thread {tid}'}")
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("time (ms) from the first event")
    end = max((float(e["ts"]) + float(e["dur"]) - t0) / 1e3 for e in spans)
    busy = sum(float(e["dur"]) for e in spans) / 1e3
    ax.set_title(out_title or f"trace: {len(spans)} tasks on {len(rows)} rows, "
                 f"{busy / (end * len(rows)) if end > 0 else 0:.0%} busy")
    ax.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=colour[k]) for k in kinds], labels=kinds,
              fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), title="kind")
    ax.grid(axis="y", visible=False)
    return fig

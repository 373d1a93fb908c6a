"""Reading cala-bench JSON lines and writing figures as PNG and SVG."""

import json
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")  # no display: files only
import matplotlib.pyplot as plt  # noqa: E402

# Text stays text in the SVG (searchable, smaller); a fixed hash salt keeps the SVG stable
# between runs on the same input.
plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "cala", "figure.dpi": 110,
                     "axes.grid": True, "grid.alpha": 0.3, "font.size": 9})


def read_lines(paths):
    """JSON objects from files of JSON lines ('-' or no path: stdin). Lines that are not JSON
    objects (a table on a terminal, progress text) are skipped; the count is reported."""
    out, skipped = [], 0
    for p in paths or ["-"]:
        if p == "-":
            text = sys.stdin.read()
        else:
            with open(p, encoding="utf-8") as f:
                text = f.read()
        for line in text.splitlines():
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                skipped += 1
                continue
            if isinstance(obj, dict):
                out.append(obj)
            else:
                skipped += 1
    if skipped:
        print(f"plots: skipped {skipped} line(s) that are not JSON objects", file=sys.stderr)
    return out


def of_bench(lines, *names):
    return [j for j in lines if j.get("bench") in names]


def median(values):
    return statistics.median(values) if values else float("nan")


def save(fig, out):
    """Writes OUT.png and OUT.svg (a suffix on OUT is dropped); returns the two paths."""
    base, ext = os.path.splitext(out)
    if ext.lower() not in (".png", ".svg"):
        base = out
    d = os.path.dirname(base)
    if d:
        os.makedirs(d, exist_ok=True)
    paths = [base + ".png", base + ".svg"]
    fig.tight_layout()
    for p in paths:
        fig.savefig(p, metadata={"Date": None} if p.endswith(".svg") else None)
    plt.close(fig)
    return paths


class NoData(Exception):
    """The input holds nothing this picture draws."""

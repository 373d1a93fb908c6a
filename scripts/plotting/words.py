"""Words per rank against P: the model of every algorithm (cala-bench model lines), the lower
bounds printed beside it, and measured counts (cala-bench gemm / potrf lines of the same n)."""

from collections import defaultdict

import matplotlib.pyplot as plt

from .common import NoData, of_bench

_MEASURED = {"gemm": "words_max", "potrf": "words_max"}


def _bound_lines(ax, rows):
    """The bounds every algorithm of the family is held to: the memory-independent one (it
    depends only on P and the data a rank holds), and for GEMM the memory-dependent one at the
    memory of a 2D algorithm."""
    for key, label, style in (("bound_indep_words", "lower bound, memory-independent", "k--"),
                              ("bound_2d_words", "lower bound at 2D memory (3n²/P)", "k:")):
        pts = {}
        for r in rows:
            if r.get(key) is not None and r[key] > 0:
                pts[r["ranks"]] = min(pts.get(r["ranks"], r[key]), r[key])
        if pts:
            ax.plot(sorted(pts), [pts[p] for p in sorted(pts)], style, label=label, lw=1.2)


def draw(lines, out_title=None):
    model = of_bench(lines, "model")
    if not model:
        raise NoData("no cala-bench model line")
    families = [f for f in ("gemm", "potrf", "trsm") if any(r["family"] == f for r in model)]
    fig, axes = plt.subplots(1, len(families), figsize=(5.4 * len(families), 4.4), squeeze=False)
    for ax, fam in zip(axes[0], families):
        rows = [r for r in model if r["family"] == fam]
        n = rows[0]["n"]
        by_alg = defaultdict(list)
        for r in rows:
            by_alg[r["algorithm"]].append(r)
        for alg, rs in sorted(by_alg.items()):
            rs.sort(key=lambda r: r["ranks"])
            pts = [(r["ranks"], r["words_max"]) for r in rs if r["words_max"] > 0]
            if pts:
                ax.plot(*zip(*pts), marker=".", label=f"model: {alg}")
        _bound_lines(ax, rows)
        measured = defaultdict(list)
        for j in of_bench(lines, fam):
            if j.get("n") == n and j.get(_MEASURED[fam]) and j.get("ranks", 1) > 1:
                measured[j.get("variant", "")].append((j["ranks"], j[_MEASURED[fam]]))
        for variant, pts in sorted(measured.items()):
            ax.plot(*zip(*sorted(pts)), ls="", marker="x", ms=9, mew=2,
                    label=f"measured: cala-bench {fam} ({variant})")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("P (ranks)")
        ax.set_ylabel("words per rank, sent + received (busiest rank)")
        ax.set_title(out_title or f"{fam}, n = {n}: model vs lower bounds")
        ax.legend(fontsize=6.5)
    return fig

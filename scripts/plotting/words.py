"""Words per rank against P: the model of every algorithm (cala-bench model lines), the lower
bounds printed beside it, and measured counts (cala-bench gemm / potrf lines of the same n)."""

from collections import defaultdict

import matplotlib.pyplot as plt

from .common import NoData, of_bench

_MEASURED = {"gemm": "words_max", "potrf": "words_max"}


def _bound_lines(ax, rows):
    """The bounds that do not depend on the algorithm: memory-independent and the 2D one."""
    for key, label, style in (("bound_indep_words", "lower bound, memory-independent", "k--"),
                              ("bound_2d_words", "lower bound at 2D memory (3n²/P)", "k:")):
        pts = sorted({(r["ranks"], r[key]) for r in rows if r.get(key) is not None and r[key] > 0})
        if pts:
            ax.plot([p for p, _ in pts], [w for _, w in pts], style, label=label, lw=1.2)


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
                line, = ax.plot(*zip(*pts), marker=".", label=f"model: {alg}")
                bpts = [(r["ranks"], r["bound_words"]) for r in rs
                        if r.get("bound_name") == "memory-dependent" and (r.get("bound_words") or 0) > 0]
                if fam == "potrf" and bpts:
                    ax.plot(*zip(*bpts), ls="--", color=line.get_color(), lw=0.9,
                            label=f"lower bound at {alg}'s memory")
        if fam == "gemm":
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

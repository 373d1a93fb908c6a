"""Rate against n: cala and ScaLAPACK, one line per variant, grid and thread count
(cala-bench gemm and potrf lines; one panel per benchmark)."""

from collections import defaultdict

import matplotlib.pyplot as plt

from .common import NoData, median, of_bench


def _size(j):
    if j["bench"] == "gemm" and not (j.get("m") == j.get("n") == j.get("k")):
        return (j["m"] * j["n"] * j["k"]) ** (1.0 / 3.0)  # the cube of the same volume
    return j["n"]


def _setup(j):
    grid = j.get("grid", "?")
    if j.get("plan_grid") and j.get("c", 1) > 1:
        grid = j["plan_grid"]
    return f"{grid}, {j.get('threads', '?')} thr"


def _reference(j):
    """The machine's reference rate for this run, and what it is. New lines carry the
    concurrent reference (all ranks and threads at once); older ones the single-core BLAS rate,
    which is multiplied by the cores used."""
    if j.get("reference_gflops"):
        return j["reference_gflops"], "reference (all cores at once)"
    if j.get("blas_gflops"):
        return j["blas_gflops"] * j.get("ranks", 1) * j.get("threads", 1), "single-core BLAS x cores"
    return None, None


def draw(lines, out_title=None):
    runs = [j for j in of_bench(lines, "gemm", "potrf") if j.get("gflops") is not None]
    if not runs:
        raise NoData("no cala-bench gemm or potrf line with gflops")
    benches = sorted({j["bench"] for j in runs})
    fig, axes = plt.subplots(1, len(benches), figsize=(5.6 * len(benches), 4.0), squeeze=False)
    for ax, bench in zip(axes[0], benches):
        series = defaultdict(lambda: defaultdict(list))
        for j in (j for j in runs if j["bench"] == bench):
            setup, x = _setup(j), _size(j)
            variant = j.get("variant", "")
            if bench == "potrf" and j.get("panel"):
                variant += f" panel {j['panel']}"
            series[("cala", setup, f"cala {variant}, {setup}")][x].append(j["gflops"])
            if j.get("scalapack_gflops") is not None:
                series[("scalapack", setup, f"ScaLAPACK, {setup}")][x].append(j["scalapack_gflops"])
            ref, name = _reference(j)
            if ref:
                series[("reference", setup, f"{name}, {setup}")][x].append(ref)
        # One colour per grid and thread count; the line style says whose rate it is.
        setups = sorted({s for _, s, _ in series})
        colour = {s: plt.get_cmap("tab10")(i % 10) for i, s in enumerate(setups)}
        style = {"cala": dict(marker="o", ls="-"), "scalapack": dict(marker="s", ls="--", mfc="none"),
                 "reference": dict(marker="_", ms=16, mew=2, ls=":")}
        for (kind, setup, label), pts in sorted(series.items()):
            xs = sorted(pts)
            ax.plot(xs, [median(pts[x]) for x in xs], label=label, color=colour[setup], **style[kind])
        ax.set_xscale("log", base=2)
        ax.set_xlabel("n" if bench == "potrf" else "n (m = n = k)")
        ax.set_ylabel("GFLOP/s (best of the runs)")
        ax.set_ylim(bottom=0)
        ax.set_title(out_title or f"cala-bench {bench}: rate against n")
        ax.legend(fontsize=7)
    return fig

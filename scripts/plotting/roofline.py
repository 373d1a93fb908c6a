"""The stencil against its bandwidth roof (cala-bench stencil lines): per halo depth s, the
sweep's minimum memory traffic (read and write every point once per step) at the measured step
time, against the copy bandwidth measured in the same run (the roof) and the local sweep alone;
beside it, messages per step measured and modelled."""

from collections import defaultdict

import matplotlib.pyplot as plt

from .common import NoData, of_bench, median


def draw(lines, out_title=None):
    runs = of_bench(lines, "stencil")
    if not runs:
        raise NoData("no cala-bench stencil line")
    groups = defaultdict(list)
    for j in runs:
        groups[(j.get("stencil"), j.get("grid"), j.get("n_per_rank"), j.get("threads"))].append(j)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
    width = 0.8 / len(groups)
    for g, ((st, grid, n, thr), js) in enumerate(sorted(groups.items(), key=str)):
        js.sort(key=lambda j: j["depth"])
        depths = [j["depth"] for j in js]
        xs = [i + g * width for i in range(len(js))]
        label = f"{st}, {n}² per rank, grid {grid}, {thr} thr"
        ax.bar(xs, [j["sweep_gbs"] for j in js], width, label=f"sweep: {label}")
        copy = median([j["copy_gbs"] for j in js if j.get("copy_gbs")])
        ax.axhline(copy, color="k", lw=1.5, label=f"roof: copy {copy:.1f} GB/s (all ranks at once)" if g == 0 else None)
        local = [j.get("local_roofline_fraction", 0) * j.get("copy_gbs", 0) for j in js]
        if any(local):
            ax.axhline(median(local), color="0.4", ls="--", lw=1,
                       label="local sweep alone (no halo)" if g == 0 else None)
        for x, j in zip(xs, js):
            ax.annotate(f"{j['roofline_fraction']:.2f}", (x, j["sweep_gbs"]), ha="center", va="bottom", fontsize=7)
        bx.plot(depths, [j["msgs_per_step"] for j in js], "o-", label=f"measured: {label}")
        bx.plot(depths, [j["model_msgs_per_step"] for j in js], "k+--", ms=10, label="model" if g == 0 else None)
        ax.set_xticks([i + (len(groups) - 1) * width / 2 for i in range(len(js))], [str(d) for d in depths])
    ax.set_xlabel("halo depth s (the label: fraction of the roof)")
    ax.set_ylabel("GB/s per rank (2 x 8 bytes per point per step)")
    ax.set_title(out_title or "stencil sweep against the copy bandwidth")
    ax.legend(fontsize=7, loc="lower right")
    bx.set_xscale("log", base=2)
    bx.set_yscale("log", base=2)
    bx.set_xlabel("halo depth s")
    bx.set_ylabel("messages per step per rank")
    bx.set_title("messages per step: measured and model")
    bx.legend(fontsize=7)
    return fig

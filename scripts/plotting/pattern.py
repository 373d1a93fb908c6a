"""Symmetric layouts (cala-bench symm-pattern lines): the owner of every lower block, one panel
per layout, the rank printed in each block; blocks on the pattern's diagonal cells (filled block
by block onto the least-loaded rank of the row) are hatched."""

import matplotlib.pyplot as plt
from matplotlib import colormaps

from .common import NoData, of_bench


def draw(lines, out_title=None):
    rows = of_bench(lines, "symm-pattern")
    if not rows:
        raise NoData("no cala-bench symm-pattern line")
    fig, axes = plt.subplots(1, len(rows), figsize=(5.2 * len(rows), 5.0), squeeze=False)
    for ax, r in zip(axes[0], rows):
        owners, cells, t, nb = r["owners"], r["cells"], r["pattern_size"], r["blocks"]
        cmap = colormaps["tab20"].resampled(max(r["ranks"], 2))
        for i, row in enumerate(owners):
            for j, o in enumerate(row):
                filled = cells[i % t][j % t] if j % t <= i % t else cells[j % t][i % t]
                ax.add_patch(plt.Rectangle((j, i), 1, 1, facecolor=cmap(o % cmap.N), edgecolor="white", lw=0.4,
                                           hatch="//" if filled < 0 else None))
                if nb <= 30:
                    ax.text(j + 0.5, i + 0.5, str(o), ha="center", va="center", fontsize=5.5 if nb > 16 else 7)
        for k in range(t, nb, t):  # pattern repetitions
            ax.axhline(k, color="k", lw=0.8)
            ax.axvline(k, color="k", lw=0.8)
        ax.set_xlim(0, nb)
        ax.set_ylim(nb, 0)
        ax.set_aspect("equal")
        ax.grid(False)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(out_title or f"{r['pattern']}: row sets of {len(set(o for o in owners[-1]))} ranks", fontsize=9)
    return fig

"""Chapter 13's figures: the rotation of RoPE, the key/value cache by head grouping, attention in tiles.

Each function returns a matplotlib ``Figure`` that is already closed in pyplot, so it appears
exactly once when the call is the last expression of a notebook cell (as in ``diagrams``). The
numbers they draw come from the package (``rotary.apply_rotary``) or from the caller.
"""

import matplotlib.pyplot as plt
import numpy as np
from keras import ops
from matplotlib.patches import Rectangle
from matplotlib.ticker import FuncFormatter

from .rotary import apply_rotary, rotary_frequencies


def _figure(size, ncols=1):
    fig, axes = plt.subplots(1, ncols, figsize=size)
    plt.close(fig)  # returned, not left open: a notebook shows it once, as the cell's result
    return fig, np.atleast_1d(axes)


def rotation_figure(depth=16, pairs=(0, 2), positions=range(8), vector=(1.0, 0.35), base=10000.0):
    """One pair of features of a query rotated to several positions, for two frequencies.

    A vector whose every pair is ``vector`` is rotated by ``apply_rotary`` (interleaved layout) to
    each of ``positions``; panel j draws pair ``pairs[j]``, which turns by theta_i = base^(-2i/depth)
    per position: the first pair fast, later pairs ever more slowly.
    """
    positions = list(positions)
    x = np.tile(np.asarray(vector, "float32"), depth // 2)[None, :].repeat(len(positions), 0)  # (P, d)
    rotated = ops.convert_to_numpy(apply_rotary(x, np.asarray(positions, "int32"), "interleaved", base))
    theta = rotary_frequencies(depth, base)
    fig, axes = _figure((4.6 * len(pairs), 4.6), len(pairs))
    radius = float(np.hypot(*vector))
    colors = plt.cm.viridis(np.linspace(0, 0.9, len(positions)))
    for ax, i in zip(axes, pairs):
        ax.add_patch(plt.Circle((0, 0), radius, fill=False, color="0.8", linestyle="--"))
        for m, color, row in zip(positions, colors, rotated):
            px, py = row[2 * i], row[2 * i + 1]
            ax.annotate("", (px, py), (0, 0), arrowprops=dict(arrowstyle="-|>", color=color, lw=1.4))
            ax.text(1.12 * px, 1.12 * py, f"m={m}", ha="center", va="center", fontsize=8, color=color)
        ax.set_xlim(-1.35 * radius, 1.35 * radius)
        ax.set_ylim(-1.35 * radius, 1.35 * radius)
        ax.set_aspect("equal")
        ax.axhline(0, color="0.85", lw=0.8, zorder=0)
        ax.axvline(0, color="0.85", lw=0.8, zorder=0)
        ax.set_xlabel(f"feature {2 * i}")
        ax.set_ylabel(f"feature {2 * i + 1}")
        ax.set_title(f"pair {i}: $\\theta_{{{i}}}$ = {theta[i]:.3g} rad per position")
    fig.suptitle(f"One query, rotated to positions {positions[0]}-{positions[-1]} (d = {depth})")
    fig.tight_layout()
    return fig


def cache_memory_figure(panels):
    """The key/value cache's size against the number of key/value heads, one panel per model.

    Args:
        panels: a list of ``(title, kv_heads, sizes)``: the numbers of key/value heads and the
            cache's bytes for each (the caller computes them). Each panel has its own unit, the
            largest of KiB, MiB and GiB in which its smallest size is at least 1.
    """
    fig, axes = _figure((4.8 * len(panels), 4.0), len(panels))
    for ax, (title, kv_heads, sizes) in zip(axes, panels):
        kv_heads, sizes = np.asarray(kv_heads), np.asarray(sizes, "float64")
        power = max(p for p in (1, 2, 3) if sizes.min() >= 1024**p or p == 1)
        sizes, unit_name = sizes / 1024**power, ("KiB", "MiB", "GiB")[power - 1]
        ax.plot(kv_heads, sizes, "o-", color="tab:blue")
        for h_kv, size in zip(kv_heads, sizes):
            label = "MQA" if h_kv == 1 else "MHA" if h_kv == kv_heads.max() else "GQA"
            ax.annotate(f"{label}\n{size:,.4g}", (h_kv, size), textcoords="offset points", xytext=(0, 8),
                        ha="center", fontsize=8)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_xticks(kv_heads, [str(h) for h in kv_heads])
        ax.set_ylim(sizes.min() / 2, sizes.max() * 4)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.4g}"))
        ax.set_xlabel("key/value heads $h_{kv}$")
        ax.set_ylabel(f"key/value cache ({unit_name})")
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
    fig.tight_layout()
    return fig


def tiles_figure(num_queries=8, num_keys=20, block_size=6, current=1):
    """The (T, S) logits of one head in tiles of ``block_size`` keys, and what tiled attention keeps.

    Tile ``current`` is the one in memory; the tiles before it have been folded into the running
    maximum m, sum l and weighted values acc, and the tiles after it have not been computed yet.
    """
    fig, axes = _figure((10, 3.8))
    ax = axes[0]
    starts = list(range(0, num_keys, block_size))
    for t, start in enumerate(starts):
        stop = min(start + block_size, num_keys)
        done, now = t < current, t == current
        color = "#c5e4f3" if done else "#fbd5a5" if now else "white"
        ax.add_patch(Rectangle((start, 0), stop - start, num_queries, fc=color, ec="black",
                               lw=2.2 if now else 1.0, zorder=2))
        label = "folded into\nm, l, acc" if done else "in memory:\none tile" if now else "not yet\ncomputed"
        ax.text((start + stop) / 2, num_queries + 0.8, f"keys {start}-{stop - 1}\n{label}", ha="center",
                va="bottom", fontsize=8)
    for s in range(num_keys + 1):
        ax.plot([s, s], [0, num_queries], color="0.75", lw=0.4, zorder=3)
    for t in range(num_queries + 1):
        ax.plot([0, num_keys], [t, t], color="0.75", lw=0.4, zorder=3)
    for x0, w, label in [(num_keys + 1.0, 1, "m"), (num_keys + 2.5, 1, "l"), (num_keys + 4.0, 3, "acc")]:
        ax.add_patch(Rectangle((x0, 0), w, num_queries, fc="#cfeac6", ec="black", zorder=2))
        ax.text(x0 + w / 2, num_queries / 2, label, ha="center", va="center", fontsize=10, zorder=4)
    ax.text(num_keys + 4.0, -0.9, "per query: (T, 1), (T, 1), (T, $d_v$)", ha="center", va="top", fontsize=8)
    ax.text(num_keys / 2, -0.9, f"the logits $QK^\\top$: {num_queries} queries (rows) x {num_keys} keys (columns), "
            f"tiles of {block_size} keys", ha="center", va="top", fontsize=9)
    ax.set_xlim(-0.5, num_keys + 7.5)
    ax.set_ylim(-2.2, num_queries + 3.2)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.tight_layout()
    return fig


def paired_differences_figure(rows, xlabel, title="One dot per seed; bar: mean difference; line: its 95% t interval"):
    """Paired differences seed by seed, one row per comparison, as chapter 11 draws them.

    Args:
        rows: a list of ``(label, differences, low, mean, high)``: the per-seed differences of a
            variant and its reference, and the interval and mean of their paired t test.
        xlabel: what the differences are.
    """
    fig, axes = _figure((8.5, max(2.6, 0.45 * len(rows) + 1.6)))
    ax = axes[0]
    for y, (label, differences, low, mean, high) in enumerate(rows):
        ax.plot([low, high], [y, y], color="black", linewidth=1.5)
        ax.plot(np.asarray(differences), [y] * len(differences), "o", color="tab:blue", alpha=0.75)
        ax.plot(mean, y, "|", color="black", markersize=16, markeredgewidth=2)
    ax.axvline(0, color="0.5", linestyle=":")
    ax.set_yticks(range(len(rows)), [row[0] for row in rows])
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig

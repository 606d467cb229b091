"""Plots shared by the chapters: matrices, masks and attention weights."""

import matplotlib.pyplot as plt
import numpy as np


def plot_matrix(matrix, ax=None, row_labels=None, col_labels=None, title=None, xlabel=None,
                ylabel=None, cmap="viridis", annotate=False, fmt=".2f", vmin=None, vmax=None,
                colorbar=True):
    """Draw a 2-D array as a heatmap, optionally writing each value in its cell.

    Args:
        matrix: array-like of shape (rows, cols); booleans are drawn as 0/1.
        row_labels, col_labels: tick labels (e.g. tokens).
        annotate: write the values into the cells (for small matrices).

    Returns:
        The matplotlib ``Axes``.
    """
    matrix = np.asarray(matrix)
    if ax is None:
        _, ax = plt.subplots(figsize=(0.5 * matrix.shape[1] + 2.5, 0.5 * matrix.shape[0] + 1.5))
    shown = matrix.astype(float)
    image = ax.imshow(shown, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    if row_labels is not None:
        ax.set_yticks(range(len(row_labels)), labels=row_labels)
    if col_labels is not None:
        ax.set_xticks(range(len(col_labels)), labels=col_labels, rotation=90 if
                      max(len(str(c)) for c in col_labels) > 5 else 0)
    if annotate:
        lo, hi = image.norm.vmin, image.norm.vmax  # the colour scale actually drawn
        middle = (lo + hi) / 2
        for (i, j), value in np.ndenumerate(matrix):
            text = str(value) if matrix.dtype == bool else format(value, fmt)
            ax.text(j, i, text, ha="center", va="center", fontsize=8,
                    color="black" if shown[i, j] > middle else "white")
    if title:
        ax.set_title(title)
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    if colorbar and matrix.dtype != bool:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return ax


def plot_mask(mask, ax=None, labels=None, title=None):
    """Draw a boolean mask (T, S): light = may attend (True), dark = blocked (False)."""
    mask = np.asarray(mask, dtype=bool)
    return plot_matrix(mask, ax=ax, row_labels=labels, col_labels=labels, title=title,
                       xlabel="key position", ylabel="query position", cmap="gray",
                       annotate=mask.size <= 100, vmin=0, vmax=1, colorbar=False)


def plot_attention_heads(weights, query_labels=None, key_labels=None, title=None, ncols=4,
                         size=2.6):
    """One heatmap per head of attention weights (h, T, S), on a shared 0..1 colour scale.

    Returns:
        The matplotlib ``Figure``.
    """
    weights = np.asarray(weights)
    if weights.ndim != 3:
        raise ValueError(f"plot_attention_heads takes one sequence's weights (h, T, S); got shape {weights.shape}. "
                         "From a batch (B, h, T, S), as attention_scores returns, pick a sequence: weights[b].")
    num_heads = weights.shape[0]
    ncols = min(ncols, num_heads)
    nrows = -(-num_heads // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(size * ncols, size * nrows), squeeze=False)
    for head, ax in enumerate(axes.flat):
        if head >= num_heads:
            ax.axis("off")
            continue
        ax.imshow(weights[head], cmap="viridis", vmin=0.0, vmax=1.0)
        ax.set_title(f"head {head}", fontsize=9)
        ax.set_xticks(range(weights.shape[2]), labels=key_labels if key_labels is not None
                      else range(weights.shape[2]), fontsize=7, rotation=90)
        ax.set_yticks(range(weights.shape[1]), labels=query_labels if query_labels is not None
                      else range(weights.shape[1]), fontsize=7)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig

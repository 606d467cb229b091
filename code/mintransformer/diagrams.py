"""Our own drawings of the paper's three figures, and of appendix A's data parallelism, with matplotlib.

Each function returns a matplotlib ``Figure`` that is already closed in pyplot, so it appears
exactly once when the call is the last expression of a notebook cell (``plt.show()`` does not
show it; use ``display(fig)`` or ``fig.savefig(...)`` elsewhere). The drawings are
deterministic and need no files, so they also work in Colab.

Shapes use the legend of the notation page: B batch, T target (query) length, S source (key)
length, D = d_model, h heads, d_k = D / h, V vocabulary size.
"""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch

# Colours close to the paper's figures.
ATTENTION, FEED_FORWARD, NORM = "#fbd5a5", "#c5e4f3", "#f3f0a6"
EMBEDDING, LINEAR, SOFTMAX = "#f6cdd0", "#dcd8ef", "#cfeac6"
MATMUL, BLOCK, SHAPE = "#d7c4ea", "#f0f0f0", "#555555"
WIDTH = 2.6  # width of the boxes in the full model


def _canvas(size, xlim, ylim):
    """An empty figure whose single axes spans it, in data units with equal aspect."""
    fig = plt.figure(figsize=size)
    plt.close(fig)  # returned, not left open: a notebook shows it once, as the cell's result
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig, ax


def _box(ax, x, y, w, h, label, color, fontsize=9, zorder=3):
    """A rounded box centred at (x, y) with a centred label; returns (bottom, top)."""
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, fc=color, ec="black", lw=1,
                                boxstyle="round,pad=0,rounding_size=0.1", zorder=zorder))
    if label:
        ax.text(x, y, label, ha="center", va="center", fontsize=fontsize, zorder=zorder + 1)
    return y - h / 2, y + h / 2


def _stacked(ax, x, y, w, h, label, color, copies=3, step=0.12, fontsize=9):
    """``copies`` boxes offset up and right, for h parallel copies; the label is on the front."""
    for i in reversed(range(copies)):
        _box(ax, x + i * step, y + i * step, w, h, label if i == 0 else "", color,
             fontsize, zorder=3 + 2 * (copies - i))
    return y - h / 2, y + h / 2


def _arrow(ax, *points, head=True):
    """A line through ``points`` with an arrow head at the last one (none if ``head=False``)."""
    xs, ys = zip(*points)
    end = len(points) - 1 if head else len(points)  # the last segment is the arrow patch
    if end > 1:
        ax.plot(xs[:end], ys[:end], color="black", lw=1.1, zorder=2, solid_capstyle="butt")
    if head:
        ax.add_patch(FancyArrowPatch(points[-2], points[-1], arrowstyle="-|>", mutation_scale=11,
                                     lw=1.1, color="black", shrinkA=0, shrinkB=0, zorder=2))


def _note(ax, x, y, text, ha="left", fontsize=7.5):
    """A small grey annotation (shapes, conventions)."""
    ax.text(x, y, text, ha=ha, va="center", fontsize=fontsize, color=SHAPE)


def scaled_dot_product_attention_figure():
    """Paper Figure 2 (left): scaled dot-product attention, softmax(QK^T / sqrt(d_k)) V.

    Read bottom to top: MatMul of Q and K^T, Scale, the optional boolean Mask (True = may
    attend), SoftMax over the keys, MatMul with V. Grey notes give the shapes.
    """
    fig, ax = _canvas((4.8, 6.4), (-3.3, 2.9), (-0.9, 7.3))
    for x, name, shape in [(-0.6, "Q", "(B, h, T, $d_k$)"), (0.6, "K", "(B, h, S, $d_k$)"),
                           (2.0, "V", "(B, h, S, $d_k$)")]:
        ax.text(x, 0, name, ha="center", va="center", fontsize=12, fontweight="bold")
        _note(ax, x, -0.45, shape, ha="center", fontsize=7)
    steps = [("MatMul", MATMUL), ("Scale  $\\div\\sqrt{d_k}$", NORM), ("Mask (opt.)", EMBEDDING),
             ("SoftMax", SOFTMAX)]
    ys = [1.3, 2.4, 3.5, 4.6]
    for x in (-0.6, 0.6):
        _arrow(ax, (x, 0.25), (x, ys[0] - 0.25))
    for (label, color), y in zip(steps, ys):
        _box(ax, 0, y, 2.0, 0.5, label, color)
    for below, above in zip(ys, ys[1:]):
        _arrow(ax, (0, below + 0.25), (0, above - 0.25))
    _note(ax, -0.15, 2.95, "logits (B, h, T, S)", ha="right")  # the scaled product
    _note(ax, -0.15, 5.15, "weights (B, h, T, S)", ha="right")
    ax.text(-1.6, 3.5, "mask\nTrue = may attend", ha="right", va="center", fontsize=7.5,
            color=SHAPE)
    _arrow(ax, (-1.55, 3.5), (-1.0, 3.5))
    _box(ax, 0.7, 5.9, 3.4, 0.5, "MatMul", MATMUL)
    _arrow(ax, (0, 4.85), (0, 5.65))
    _arrow(ax, (2.0, 0.25), (2.0, 5.65))
    _arrow(ax, (0.7, 6.15), (0.7, 6.8))
    _note(ax, 0.7, 7.05, "output (B, h, T, $d_k$)", ha="center", fontsize=8)
    return fig


def multi_head_attention_figure():
    """Paper Figure 2 (right): multi-head attention.

    V, K and Q each go through h parallel linear projections (drawn stacked), h scaled
    dot-product attentions run side by side, their outputs are concatenated and projected
    by a final linear layer. Grey notes give the shapes.
    """
    fig, ax = _canvas((5.6, 6.4), (-2.8, 4.6), (-0.9, 7.7))
    for x, name, shape in [(-1.7, "V", "(B, S, D)"), (0, "K", "(B, S, D)"), (1.7, "Q", "(B, T, D)")]:
        ax.text(x, 0, name, ha="center", va="center", fontsize=12, fontweight="bold")
        _note(ax, x, -0.45, shape, ha="center")
        _arrow(ax, (x, 0.25), (x, 1.15))
        _stacked(ax, x, 1.4, 1.3, 0.5, "Linear", LINEAR)
        _arrow(ax, (x, 1.65), (x, 2.75))
    _note(ax, 2.7, 2.2, "split into h heads\nQ: (B, h, T, $d_k$)\nK, V: (B, h, S, $d_k$)")
    _stacked(ax, 0, 3.2, 4.6, 0.9, "Scaled Dot-Product\nAttention", MATMUL, fontsize=10)
    ax.text(2.75, 3.55, "h", ha="left", va="center", fontsize=13, fontstyle="italic")
    _arrow(ax, (0, 3.65), (0, 4.65))
    _note(ax, 0.2, 4.15, "(B, h, T, $d_k$)")
    _box(ax, 0, 4.9, 1.8, 0.5, "Concat", NORM)
    _arrow(ax, (0, 5.15), (0, 5.95))
    _note(ax, 0.2, 5.55, "(B, T, h$\\cdot d_k$) = (B, T, D)")
    _box(ax, 0, 6.2, 1.8, 0.5, "Linear", LINEAR)
    _arrow(ax, (0, 6.45), (0, 7.15))
    _note(ax, 0, 7.4, "output (B, T, D)", ha="center", fontsize=8)
    return fig


def _sublayer(ax, x, y, label, color, h, side, inputs):
    """A sub-layer, its residual connection and its Add & Norm (paper section 3.1).

    The stream enters at (x, y) from below; ``side`` -1 draws the residual on the left, +1 on
    the right. ``inputs``: "qkv" (self-attention, three arrows), "q" (cross-attention: only
    the query comes from below, keys and values are wired by the caller), "x" (one arrow).
    Returns the top of the Add & Norm box.
    """
    y_res, y_split, bottom = y + 0.25, y + 0.5, y + 0.95
    _box(ax, x, bottom + h / 2, WIDTH, h, label, color)
    if inputs == "qkv":
        _arrow(ax, (x, y), (x, y_split), head=False)
        _arrow(ax, (x - 0.8, y_split), (x + 0.8, y_split), head=False)
        for dx in (-0.8, 0, 0.8):
            _arrow(ax, (x + dx, y_split), (x + dx, bottom))
    elif inputs == "q":
        _arrow(ax, (x, y), (x, y_split), (x + 0.8, y_split), (x + 0.8, bottom))
    else:
        _arrow(ax, (x, y), (x, bottom))
    norm = bottom + h + 0.55
    _arrow(ax, (x, bottom + h), (x, norm - 0.22))
    _box(ax, x, norm, WIDTH, 0.44, "Add & Norm", NORM)
    outer = x + side * (WIDTH / 2 + 0.35)
    _arrow(ax, (x, y_res), (outer, y_res), (outer, norm), (x + side * WIDTH / 2, norm))
    return norm + 0.22


def _embedding(ax, x, side, label):
    """Embedding box, the positional-encoding sum (a circled plus) and the sine symbol."""
    _box(ax, x, 0.9, WIDTH, 0.6, label, EMBEDDING)
    ax.add_patch(Circle((x, 2.05), 0.22, fc="white", ec="black", lw=1.1, zorder=3))
    ax.plot([x - 0.15, x + 0.15], [2.05, 2.05], color="black", lw=1.1, zorder=4)
    ax.plot([x, x], [1.9, 2.2], color="black", lw=1.1, zorder=4)
    _arrow(ax, (x, 1.2), (x, 1.83))
    pe = x + side * 1.9
    ax.add_patch(Circle((pe, 2.05), 0.32, fc="white", ec="black", lw=1.1, zorder=3))
    t = np.linspace(-0.22, 0.22, 50)
    ax.plot(pe + t, 2.05 + 0.13 * np.sin(t / 0.22 * np.pi), color="black", lw=1, zorder=4)
    _arrow(ax, (pe - side * 0.32, 2.05), (x + side * 0.22, 2.05))
    ax.text(pe + side * 0.45, 2.05, "Positional\nEncoding", ha="right" if side < 0 else "left",
            va="center", fontsize=9)
    return 2.27


def _block(ax, x, bottom, top, side, name):
    """The grey rectangle around the N identical layers, labelled N x."""
    left = x - WIDTH / 2 - (0.6 if side < 0 else 0.25)
    right = x + WIDTH / 2 + (0.6 if side > 0 else 0.25)
    ax.add_patch(FancyBboxPatch((left, bottom), right - left, top - bottom, fc=BLOCK, ec="#888888",
                                lw=1, boxstyle="round,pad=0,rounding_size=0.2", zorder=0))
    edge = left if side < 0 else right
    ha = "right" if side < 0 else "left"
    ax.text(edge + side * 0.2, (bottom + top) / 2, "N×", ha=ha, va="center", fontsize=12)
    _note(ax, edge + side * 0.2, (bottom + top) / 2 - 0.5, name, ha=ha, fontsize=8)


def transformer_figure():
    """Paper Figure 1: the full encoder-decoder Transformer.

    Left, the encoder: input embedding plus positional encoding, then N layers of
    [multi-head self-attention, Add & Norm, feed forward, Add & Norm]. Right, the decoder:
    output embedding (outputs shifted right) plus positional encoding, then N layers of
    [masked multi-head self-attention, Add & Norm, multi-head cross-attention whose keys and
    values come from the encoder output, Add & Norm, feed forward, Add & Norm], then Linear
    and Softmax. Arrows that bypass a sub-layer are the residual connections.
    """
    fig, ax = _canvas((7.2, 8.4), (-4.0, 8.7), (-0.8, 12.9))
    enc, dec = 0.0, 4.6
    for x, below, shape in [(enc, "Inputs", "(B, S) token ids"),
                            (dec, "Outputs\n(shifted right)", "(B, T) token ids")]:
        _arrow(ax, (x, 0.05), (x, 0.6))
        ax.text(x, 0.05, below, ha="center", va="top", fontsize=10)
        side = -1 if x == enc else 1
        _note(ax, x + side * 0.15, 0.33, shape, ha="right" if side < 0 else "left")
    # Encoder.
    y = _embedding(ax, enc, -1, "Input\nEmbedding")
    y = _sublayer(ax, enc, y, "Multi-Head\nAttention", ATTENTION, 0.9, -1, "qkv")
    enc_top = _sublayer(ax, enc, y, "Feed\nForward", FEED_FORWARD, 0.75, -1, "x")
    _block(ax, enc, 2.3, enc_top + 0.25, -1, "encoder\nlayers")
    # Decoder.
    y = _embedding(ax, dec, 1, "Output\nEmbedding")
    y = _sublayer(ax, dec, y, "Masked\nMulti-Head\nAttention", ATTENTION, 0.9, 1, "qkv")
    cross = y
    y = _sublayer(ax, dec, y, "Multi-Head\nAttention", ATTENTION, 0.9, 1, "q")
    dec_top = _sublayer(ax, dec, y, "Feed\nForward", FEED_FORWARD, 0.75, 1, "x")
    _block(ax, dec, 2.3, dec_top + 0.25, 1, "decoder\nlayers")
    # Encoder output -> keys and values of every decoder layer's cross-attention.
    wire, mid = cross + 0.7, (enc + dec) / 2
    _arrow(ax, (enc, enc_top), (enc, enc_top + 0.7), (mid, enc_top + 0.7), (mid, wire),
           (dec - 0.2, wire), head=False)
    for dx in (-0.8, -0.2):
        _arrow(ax, (dec + dx, wire), (dec + dx, cross + 0.95))
    _note(ax, enc + 0.15, enc_top + 0.95, "encoder output (B, S, D)")
    _note(ax, mid - 0.1, wire + 0.2, "K, V", ha="right")
    # Output head.
    _arrow(ax, (dec, dec_top), (dec, dec_top + 0.7))
    _, top = _box(ax, dec, dec_top + 0.95, WIDTH, 0.5, "Linear", LINEAR)
    _arrow(ax, (dec, top), (dec, top + 0.4))
    _, top = _box(ax, dec, top + 0.65, WIDTH, 0.5, "Softmax", SOFTMAX)
    _arrow(ax, (dec, top), (dec, top + 0.45))
    ax.text(dec, top + 0.7, "Output Probabilities", ha="center", va="center", fontsize=10)
    _note(ax, dec + 0.15, top + 0.22, "(B, T, V)")
    return fig


def data_parallel_figure(replicas=2):
    """Data parallelism (appendix A): one global batch, ``replicas`` copies of the model, one update.

    Read bottom to top: the global batch of B rows is split into ``replicas`` slices of B / R rows;
    each replica runs the same weights on its slice and computes its gradient; an all-reduce sums
    the gradients, so every replica holds the same sum and applies the same update.
    """
    width = 2.4 * replicas + 1.6
    fig, ax = _canvas((0.8 * width, 0.8 * 7.1), (-width / 2, width / 2), (-0.7, 6.4))
    _box(ax, 0, 0, width - 1.4, 0.55, "global batch: B rows (their real tokens: n)", BLOCK)
    xs = [(r - (replicas - 1) / 2) * 2.4 for r in range(replicas)]
    _box(ax, 0, 5.0, width - 1.4, 0.6, "all-reduce: sum of the replicas' gradients", MATMUL)
    for r, x in enumerate(xs):
        _arrow(ax, (x, 0.28), (x, 0.95))
        _note(ax, x + 0.1, 0.62, f"rows of slice {r + 1}: B / R")
        _box(ax, x, 1.5, 2.0, 0.9, f"replica {r + 1}\n/cpu:{r}", EMBEDDING)
        _box(ax, x, 2.75, 2.0, 0.7, "model (same weights)", ATTENTION)
        _box(ax, x, 3.8, 2.0, 0.7, "gradient of\nits tokens' loss / n", FEED_FORWARD)
        _arrow(ax, (x, 1.95), (x, 2.4))
        _arrow(ax, (x, 3.1), (x, 3.45))
        _arrow(ax, (x, 4.15), (x, 4.7))
        _arrow(ax, (x, 5.3), (x, 5.85))
        _note(ax, x, 6.1, "same update", ha="center", fontsize=8)
    return fig

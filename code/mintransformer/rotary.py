"""Rotary position embedding, RoPE (Su et al., 2021): positions as rotations of queries and keys.

Each pair of features of a query or a key at position m is rotated by the angle m * theta_i, with
theta_i = base^(-2i / d), the frequencies of the paper's sinusoids. A rotation keeps lengths and
the angle between two vectors, so the dot product of a query rotated to m and a key rotated to n
depends on the positions only through m - n (chapter 13 proves it and checks it).

Two layouts pair the d features differently, and both are in use:
    ``"interleaved"``: pairs (0, 1), (2, 3), ...: Meta's released Llama code (which views each
        pair as a complex number), GPT-J, and the paper's interleaved sines and cosines.
    ``"half"``: pairs (i, i + d/2): GPT-NeoX, Hugging Face's Llama and KerasHub.
They are the same rotation of permuted features: weights trained with one layout give wrong
(but finite, plausible-looking) outputs under the other, unless the query and key projections'
output features are permuted (``interleaved_to_half``).
"""

import keras
import numpy as np
import tensorflow as tf
from keras import ops

LAYOUTS = ("interleaved", "half")


def rotary_frequencies(depth, base=10000.0):
    """theta_i = base^(-2i / depth), i = 0 .. depth/2 - 1: float32 NumPy array (depth/2,)."""
    if depth % 2:
        raise ValueError(f"depth={depth} must be even: RoPE rotates features in pairs.")
    return np.power(float(base), -np.arange(0, depth, 2, dtype=np.float64) / depth).astype(np.float32)


def check_layout(layout):
    if layout not in LAYOUTS:
        raise ValueError(f"layout={layout!r} must be one of {LAYOUTS}.")


def _check_positions(positions, x):
    """(T,) integer positions for the rows of x (..., T, d); 0 .. T - 1 for None; clear errors otherwise."""
    if positions is None:
        return ops.arange(ops.shape(x)[-2])
    if not hasattr(positions, "dtype"):  # a list or a Python int: its dtype decides, as NumPy reads it
        positions = np.asarray(positions)
    dtype = keras.backend.standardize_dtype(positions.dtype)
    if "int" not in dtype:
        raise TypeError(f"positions must be integers (one per row of x), not {dtype}.")
    if len(positions.shape) != 1:
        raise ValueError(f"positions must have one axis, one position per row of x; they have shape "
                         f"{tuple(positions.shape)}.")
    rows, count = x.shape[-2], positions.shape[0]
    if rows is not None and count is not None and rows != count:
        raise ValueError(f"{count} positions for {rows} rows: x has shape {tuple(x.shape)}; give one position "
                         "per row (a single position would rotate every row alike).")
    if rows is None or count is None:  # known only when the graph runs (XLA knows every shape when compiling)
        tf.debugging.assert_equal(ops.shape(positions)[0], ops.shape(x)[-2],
                                  message="apply_rotary: one position per row of x is needed")
    return positions


def apply_rotary(x, positions=None, layout="interleaved", base=10000.0):
    """Rotate each pair of features of ``x`` (..., T, d) by the angle position * theta_i.

    Args:
        x: queries or keys, (..., T, d) with d even (one head's features on the last axis).
        positions: (T,) integer positions of the T rows; None for 0 .. T - 1.
        layout: which features form a pair, ``"interleaved"`` or ``"half"`` (module docstring).
        base: the base of the frequencies (10000 in the paper's sinusoids and in Llama 2).

    Returns:
        A tensor of the shape and dtype of ``x``; the rotation is computed in float32.
    """
    check_layout(layout)
    depth = x.shape[-1]
    if depth is None or depth % 2:
        raise ValueError(f"apply_rotary needs an even, known feature size; x has shape {tuple(x.shape)}.")
    positions = _check_positions(positions, x)
    theta = ops.convert_to_tensor(rotary_frequencies(depth, base))  # (d/2,)
    angles = ops.cast(positions, "float32")[:, None] * theta[None, :]  # (T, d/2)
    cos, sin = ops.cos(angles), ops.sin(angles)
    x32 = ops.cast(x, "float32")
    if layout == "interleaved":
        first, second = x32[..., 0::2], x32[..., 1::2]  # (..., T, d/2) each
    else:
        first, second = x32[..., : depth // 2], x32[..., depth // 2:]
    rotated_first = first * cos - second * sin  # [cos -sin; sin cos] applied to (first, second)
    rotated_second = first * sin + second * cos
    if layout == "interleaved":
        out = ops.stack([rotated_first, rotated_second], axis=-1)  # (..., T, d/2, 2)
        out = ops.reshape(out, ops.shape(x32))
    else:
        out = ops.concatenate([rotated_first, rotated_second], axis=-1)
    return ops.cast(out, x.dtype)


def interleaved_to_half(depth):
    """The feature order that turns the interleaved layout into the half layout, (depth,) NumPy ints.

    ``apply_rotary(x[..., p], layout="half")`` equals ``apply_rotary(x, layout="interleaved")[..., p]``
    with ``p = interleaved_to_half(d)``: feature 2i goes to place i and 2i + 1 to place i + d/2.
    Permuting each head's output features of W^Q and W^K this way converts a checkpoint from one
    layout to the other (Hugging Face's conversion of Meta's Llama weights does it).
    """
    if depth % 2:
        raise ValueError(f"depth={depth} must be even.")
    return np.concatenate([np.arange(0, depth, 2), np.arange(1, depth, 2)])

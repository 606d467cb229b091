"""Exercise: rotary positions (RoPE) in the interleaved layout, written with keras.ops.

The check compares rotate_pairs with the package's mt.apply_rotary on random queries; the hidden cases
(grading/hidden/) use other shapes, positions and dtypes.
"""

import keras
import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, like, refusing, to_numpy

OK_FORMAT = False
name = "ex-modern-rotary"
points = 3

RULE = ("Write the rotation yourself, with keras.ops: do not call the package's apply_rotary or "
        "rotary_frequencies (nor a layer that calls them).")


def _expected(x, positions, **kwargs):
    return to_numpy(mt.apply_rotary(keras.ops.convert_to_tensor(x), np.asarray(positions), **kwargs), "")


def _mistakes(x, positions):
    """(wrong output, message) for each known mistake: each is the right rotation of something else."""
    depth = x.shape[-1]
    positions = np.asarray(positions)
    permute = mt.interleaved_to_half(depth)
    return [
        (_expected(x, positions, layout="half"),
         "it pairs feature i with feature i + d/2 (the half layout of GPT-NeoX and KerasHub). This exercise "
         "asks for the interleaved layout of Meta's Llama code: the pairs are features (0, 1), (2, 3), ..."),
        (_expected(x, -positions),
         "it rotates every pair the other way, by minus the angle: look at the signs of the two sines."),
        (_expected(x, positions, base=10000.0 ** 0.5),
         "its frequencies fall too slowly with the pair's index i: look at the exponent of the base "
         "(i counts pairs; there are d/2 of them)."),
        (_expected(x, positions, base=10000.0 ** 2),
         "its frequencies fall too fast with the pair's index i: look at the exponent of the base "
         "(i counts pairs; there are d/2 of them)."),
        (_expected(x, np.arange(x.shape[-2])),
         "it rotates the rows by 0, 1, ..., T - 1, not by the positions it is given: with a cache, the new "
         "rows are at later positions."),
        (_expected(x, positions)[..., permute],
         "it pairs the right features and rotates them right, but writes the results back in two halves "
         "(all first features, then all second ones): put each pair back where it was, (2i, 2i + 1)."),
    ]


def _dtype(value):
    dtype = getattr(value, "dtype", None)
    return None if dtype is None else keras.backend.standardize_dtype(dtype)


def _check(rotate_pairs, x, positions, what, atol=1e-4):
    """rotate_pairs(x, positions) against mt.apply_rotary; a known mistake is named."""
    expected = _expected(x, positions)  # outside the block that refuses apply_rotary
    mistakes = _mistakes(x, positions)
    with refusing([mt.apply_rotary, mt.rotary.rotary_frequencies], rotate_pairs, RULE):
        result = call(rotate_pairs, "rotate_pairs", x, positions)
    got = to_numpy(result, f"rotate_pairs({what})")
    if got.shape != expected.shape:
        raise AssertionError(f"rotate_pairs({what}) has shape {got.shape}; it should have x's, {expected.shape}.")
    if not like(got, expected, atol=atol, rtol=atol):
        for wrong, message in mistakes:
            if not like(wrong, expected, atol=atol, rtol=atol) and like(got, wrong, atol=atol, rtol=atol):
                raise AssertionError(f"rotate_pairs({what}) is not RoPE: {message}")
    close(got, expected, f"rotate_pairs({what})", atol=atol, rtol=atol,
          hint="Pair i, features (2i, 2i + 1) of the row at position m, turns by the angle m theta_i, "
               "theta_i = 10000^(-2i/d).")
    want = keras.backend.standardize_dtype(x.dtype)
    if _dtype(result) not in (None, want):
        raise AssertionError(f"rotate_pairs({what}) returns {_dtype(result)} for {want} queries: return "
                             "x's dtype (compute in float32 if you like, then cast back).")


@test_case(points=1)
def positions_from_zero(rotate_pairs):
    rng = np.random.default_rng(13)
    x = rng.normal(size=(2, 3, 5, 8)).astype("float32")  # (B, h, T, d_k)
    _check(rotate_pairs, x, np.arange(5, dtype="int32"), "x of shape (2, 3, 5, 8), positions 0 .. 4")


@test_case(points=1)
def positions_after_a_prefix(rotate_pairs):
    # What a cache feeds: the rows of new tokens, at the positions after those already cached.
    rng = np.random.default_rng(14)
    x = rng.normal(size=(1, 4, 3, 16)).astype("float32")
    _check(rotate_pairs, x, np.arange(9, 12, dtype="int32"), "x of shape (1, 4, 3, 16), positions 9 .. 11")


@test_case(points=1)
def two_axes_and_any_positions(rotate_pairs):
    rng = np.random.default_rng(15)
    x = rng.normal(size=(6, 4)).astype("float32")  # (T, d): no batch or head axis
    _check(rotate_pairs, x, np.array([3, 1, 4, 1, 5, 9], "int32"), "x of shape (6, 4), positions [3, 1, 4, 1, 5, 9]")

"""Exercise: split_heads and merge_heads, written from their description."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, like, to_numpy

OK_FORMAT = False
name = "ex-multihead-split-merge"
points = 2

# (B, T, D) and h: T != h in the first cases, so that a missing transpose shows in the shape.
CASES = [((2, 5, 12), 3), ((1, 4, 16), 4), ((3, 2, 8), 1), ((2, 3, 6), 6)]


def _tensor(seed, shape):
    return np.random.default_rng(seed).normal(size=shape).astype("float32")


@test_case(points=1)
def split(my_split_heads):
    for seed, (shape, h) in enumerate(CASES):
        x = _tensor(seed, shape)
        B, T, D = shape
        d_k = D // h
        got = to_numpy(call(my_split_heads, "my_split_heads", x, h), "my_split_heads(x, num_heads)")
        expected = to_numpy(mt.split_heads(x, h), "")
        if like(got, expected, atol=1e-6):
            continue
        what = f"my_split_heads(x, {h}) for x of shape {shape}"
        if like(got, x.reshape(B, h, T, d_k), atol=1e-6):
            raise AssertionError(
                f"{what} is a plain reshape to (B, h, T, d_k): the right shape, the wrong numbers. A "
                "reshape pours the features in memory order, so the row of 'head 0, position 1' gets "
                "features of position 0. Reshape to (B, T, h, d_k), then transpose to (B, h, T, d_k).")
        if like(got, x.reshape(B, T, h, d_k), atol=1e-6):
            raise AssertionError(
                f"{what} has shape (B, T, h, d_k): the reshape is right, but attention needs the heads "
                "before the positions. Transpose the axes with the permutation (0, 2, 1, 3).")
        if like(got, x.reshape(B, T, d_k, h).transpose(0, 3, 1, 2), atol=1e-6):
            raise AssertionError(
                f"In {what}, head i holds the features i, i + h, i + 2h, ... (a reshape to "
                "(B, T, d_k, h)). Head i must hold the consecutive block [i d_k, (i + 1) d_k), its "
                "columns of W^Q: reshape to (B, T, h, d_k).")
        close(got, expected, what, atol=1e-6,
              hint="Head i, position t must hold features [i d_k, (i + 1) d_k) of position t.")


@test_case(points=1)
def merge(my_merge_heads):
    for seed, (shape, h) in enumerate(CASES):
        B, T, D = shape
        d_k = D // h
        y = _tensor(10 + seed, (B, h, T, d_k))
        got = to_numpy(call(my_merge_heads, "my_merge_heads", y), "my_merge_heads(x)")
        expected = to_numpy(mt.merge_heads(y), "")
        if like(got, expected, atol=1e-6):
            continue
        what = f"my_merge_heads(x) for x of shape {(B, h, T, d_k)}"
        if like(got, y.reshape(B, T, D), atol=1e-6):
            raise AssertionError(
                f"{what} is a plain reshape to (B, T, D): the right shape, but the rows mix the "
                "positions (the rows of head 0 come first in memory). Transpose back to "
                "(B, T, h, d_k) first, then reshape.")
        if like(got, y.transpose(0, 2, 1, 3), atol=1e-6):
            raise AssertionError(
                f"{what} has shape (B, T, h, d_k): the transpose is right; now concatenate the heads, "
                "a reshape to (B, T, h * d_k).")
        if like(got, y.transpose(0, 2, 3, 1).reshape(B, T, D), atol=1e-6):
            raise AssertionError(
                f"{what} interleaves the heads feature by feature. Head i's d_k features must be the "
                "block [i d_k, (i + 1) d_k) of each row: reshape from (B, T, h, d_k).")
        close(got, expected, what, atol=1e-6,
              hint="The merge must be the exact inverse of the split: transpose back, then reshape.")

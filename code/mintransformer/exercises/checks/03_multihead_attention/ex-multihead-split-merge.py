"""Exercise: fold the heads into the batch, (B, T, D) -> (B h, T, d_k), and unfold them again."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, like, refusing, to_numpy

OK_FORMAT = False
name = "ex-multihead-split-merge"
points = 2

# (B, T, D) and h. The first case has B > 1, h > 1, T != h and d_k != h, so that every known
# mistake shows there; the others vary the shapes (B = 1, h = 1, d_k = 1).
CASES = [((2, 5, 12), 3), ((1, 4, 16), 4), ((3, 2, 8), 1), ((2, 3, 6), 6)]

RULE = ("Write the fold with keras.ops or NumPy, as the exercise asks: do not call the package's "
        "split_heads or merge_heads.")


def _tensor(seed, shape):
    return np.random.default_rng(seed).normal(size=shape).astype("float32")


def _fold(x, h):
    """The right answer, in NumPy: row b h + i of the first axis is head i of sequence b."""
    B, T, D = x.shape
    return x.reshape(B, T, h, D // h).transpose(0, 2, 1, 3).reshape(B * h, T, D // h)


def _unfold(y, h):
    Bh, T, d_k = y.shape
    return y.reshape(Bh // h, h, T, d_k).transpose(0, 2, 1, 3).reshape(Bh // h, T, h * d_k)


def _student(function, label, *args):
    with refusing([mt.split_heads, mt.merge_heads], function, RULE):
        return to_numpy(call(function, label, *args), f"{label}(...)")


@test_case(points=1)
def fold(fold_heads):
    for seed, (shape, h) in enumerate(CASES):
        x = _tensor(seed, shape)
        B, T, D = shape
        d_k = D // h
        expected = _fold(x, h)
        got = _student(fold_heads, "fold_heads", x, h)
        if like(got, expected, atol=1e-6):
            continue
        what = f"fold_heads(x, {h}) for x of shape {shape}"
        if like(got, x.reshape(B * h, T, d_k), atol=1e-6):
            raise AssertionError(
                f"{what} is a plain reshape: the right shape, the wrong numbers. A reshape pours the "
                "features in memory order, so the row of 'head 0, position 1' gets features of position 0, "
                "and a reshape to (B, T, h, d_k) folded straight away does the same. The heads must come "
                "before the positions (a transpose) before they can be folded into the batch.")
        if like(got, x.reshape(B, T, h, d_k).transpose(0, 2, 1, 3), atol=1e-6):
            raise AssertionError(
                f"{what} has shape (B, h, T, d_k): the heads are split but not folded. Merge the batch "
                "and head axes into one axis of length B h.")
        if like(got, x.reshape(B, T, h, d_k).transpose(2, 0, 1, 3).reshape(B * h, T, d_k), atol=1e-6):
            raise AssertionError(
                f"In {what}, row i B + b holds head i of sequence b: the heads vary slowest. The exercise "
                "asks for row b h + i (all the heads of sequence 0 first), the order in which a reshape "
                "of (B, h, T, d_k) lays them out; unfold_heads relies on it.")
        if like(got, x.reshape(B, T, d_k, h).transpose(0, 3, 1, 2).reshape(B * h, T, d_k), atol=1e-6):
            raise AssertionError(
                f"In {what}, head i holds the features i, i + h, i + 2h, ... (a reshape to "
                "(B, T, d_k, h)). Head i must hold the consecutive block [i d_k, (i + 1) d_k), its "
                "columns of W^Q: reshape to (B, T, h, d_k).")
        close(got, expected, what, atol=1e-6,
              hint="Row b h + i must hold head i of sequence b: features [i d_k, (i + 1) d_k) of each position.")


@test_case(points=1)
def unfold(unfold_heads):
    for seed, (shape, h) in enumerate(CASES):
        B, T, D = shape
        d_k = D // h
        y = _tensor(10 + seed, (B * h, T, d_k))
        expected = _unfold(y, h)
        got = _student(unfold_heads, "unfold_heads", y, h)
        if like(got, expected, atol=1e-6):
            continue
        what = f"unfold_heads(x, {h}) for x of shape {(B * h, T, d_k)}"
        if like(got, y.reshape(B, T, D), atol=1e-6):
            raise AssertionError(
                f"{what} is a plain reshape to (B, T, D): the right shape, but the rows mix the "
                "positions (the rows of head 0 come first in memory). Unfold to (B, h, T, d_k), "
                "transpose back to (B, T, h, d_k), then reshape.")
        if like(got, y.reshape(B, h, T, d_k).transpose(0, 2, 1, 3), atol=1e-6):
            raise AssertionError(
                f"{what} has shape (B, T, h, d_k): the transpose is right; now concatenate the heads, "
                "a reshape to (B, T, h * d_k).")
        if like(got, y.reshape(h, B, T, d_k).transpose(1, 2, 0, 3).reshape(B, T, D), atol=1e-6):
            raise AssertionError(
                f"{what} reads row i B + b as head i of sequence b. fold_heads puts head i of sequence b "
                "at row b h + i: the first axis unfolds into (B, h), not (h, B).")
        if like(got, y.reshape(B, h, T, d_k).transpose(0, 2, 3, 1).reshape(B, T, D), atol=1e-6):
            raise AssertionError(
                f"{what} interleaves the heads feature by feature. Head i's d_k features must be the "
                "block [i d_k, (i + 1) d_k) of each row: reshape from (B, T, h, d_k).")
        close(got, expected, what, atol=1e-6,
              hint="unfold_heads must be the exact inverse of fold_heads: unfold, transpose back, then reshape.")

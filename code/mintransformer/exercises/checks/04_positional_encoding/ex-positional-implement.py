"""Exercise: the sinusoidal positional encoding, interleaved as in the paper, from its equation."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, like, to_numpy

OK_FORMAT = False
name = "ex-positional-implement"
points = 3

HINT = ("PE[pos, 2i] = sin(pos / 10000^(2i / d_model)) and PE[pos, 2i + 1] = cos of the same angle, "
        "for pos = 0 .. length - 1 and i = 0 .. d_model/2 - 1.")


def _table(length, d_model, exponent, layout="interleaved", start=0, divide=True, swap=False):
    """A table built like the equation, with one deliberate change: the known wrong answers."""
    pos = np.arange(start, start + length, dtype=np.float64)[:, None]
    j = np.arange(d_model)                                  # feature index
    rate = 10000.0 ** (exponent(j) / d_model)               # (d_model,): one per feature
    angles = pos / rate if divide else pos * rate           # (length, d_model)
    sin, cos = (np.cos, np.sin) if swap else (np.sin, np.cos)
    sines, cosines = sin(angles[:, 0::2]), cos(angles[:, 1::2])
    if layout == "concatenated":
        return np.concatenate([sines, cosines], axis=1)
    table = np.empty((length, d_model))
    table[:, 0::2], table[:, 1::2] = sines, cosines
    return table


def _right(j):
    return 2 * (j // 2)


MISTAKES = [
    (dict(exponent=_right, layout="concatenated"),
     "This is the concatenated layout: all the sines, then all the cosines, as in the Keras "
     "functional-API tutorial. The paper interleaves them: the sine of pair i goes to feature 2i "
     "and its cosine to feature 2i + 1."),
    (dict(exponent=lambda j: j // 2),
     "The exponent is i / d_model where the equation has 2i / d_model: pair i's angle is "
     "pos / 10000^(2i / d_model), with 2i the even feature index, not the pair index i."),
    (dict(exponent=lambda j: j),
     "The cosine of pair i uses the exponent (2i + 1) / d_model, the index of its own feature. "
     "Both features of a pair share one angle: the exponent is 2i / d_model for feature 2i and "
     "for feature 2i + 1 (that is, 2 * (j // 2) for feature j)."),
    (dict(exponent=lambda j: 2 * j),
     "The exponent is 2j / d_model with j the feature index. In the equation, feature j belongs "
     "to pair i = j // 2, and the exponent is 2i / d_model."),
    (dict(exponent=_right, swap=True),
     "Sines and cosines are swapped: the sines go to the even features (2i), the cosines to the "
     "odd ones (2i + 1). Row 0 must be (0, 1, 0, 1, ...)."),
    (dict(exponent=_right, divide=False),
     "The angle is pos * 10000^(2i / d_model); it is pos / 10000^(2i / d_model): the frequencies "
     "fall, from 1 radian per position down to about 1/10000."),
    (dict(exponent=_right, start=1),
     "Your positions start at 1: they start at 0, and row 0 is (sin 0, cos 0, ...) = (0, 1, 0, 1, ...)."),
]


def _compare(my_positional_encoding, length, d_model):
    expected = mt.positional_encoding(length, d_model)  # computed before the package is hidden
    original = mt.positional.positional_encoding

    def forbidden(*args, **kwargs):
        raise AssertionError("Write the encoding from the equation: do not call mt.positional_encoding.")

    # Hide the package's function wherever the student's code can reach it: as mt.<name>, and
    # under any name of the notebook bound to it (from mintransformer import positional_encoding).
    namespace = getattr(my_positional_encoding, "__globals__", {})
    bound = [key for key, value in namespace.items() if value is original]
    hidden = mt.positional_encoding, mt.positional.positional_encoding
    mt.positional_encoding = mt.positional.positional_encoding = forbidden
    for key in bound:
        namespace[key] = forbidden
    try:
        got = call(my_positional_encoding, "my_positional_encoding", length, d_model)
    except AssertionError as error:
        if isinstance(error.__cause__, AssertionError) and "do not call" in str(error.__cause__):
            raise error.__cause__ from None
        raise
    finally:
        mt.positional_encoding, mt.positional.positional_encoding = hidden
        for key in bound:
            namespace[key] = original
    table = to_numpy(got, "The table")
    what = f"my_positional_encoding({length}, {d_model})"
    if table.shape == (1, length, d_model):
        raise AssertionError(f"{what} has shape {table.shape}: return the table, (length, d_model), "
                             "without the leading batch axis the tutorials add.")
    if table.shape == (d_model, length) and length != d_model:
        raise AssertionError(f"{what} has shape {table.shape}: rows are positions and columns "
                             f"features, (length, d_model) = ({length}, {d_model}).")
    for kwargs, message in MISTAKES:
        wrong = _table(length, d_model, **kwargs)
        if like(table, wrong, atol=1e-4) and not np.allclose(wrong, expected, atol=1e-4):
            raise AssertionError(f"{what}: {message}")
    close(table, expected, what, atol=1e-4, hint=HINT)


@test_case(points=1)
def small_table(my_positional_encoding):
    _compare(my_positional_encoding, 6, 8)


@test_case(points=1)
def several_lengths_and_widths(my_positional_encoding):
    for length, d_model in [(1, 2), (50, 16), (100, 128), (20, 512)]:
        _compare(my_positional_encoding, length, d_model)


@test_case(points=1)
def widths_with_an_odd_number_of_pairs(my_positional_encoding):
    for length, d_model in [(7, 6), (33, 10)]:
        _compare(my_positional_encoding, length, d_model)

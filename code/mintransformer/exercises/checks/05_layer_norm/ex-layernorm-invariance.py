"""Exercise: layer norm of an affine transform of x, and the rows of the tiny batch that show it."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, call, close, like, to_numpy

OK_FORMAT = False
name = "ex-layernorm-invariance"
points = 3

TINY = np.array(
    [[[1.0, 2.0, 3.0, 4.0], [2.0, 2.0, 2.0, 6.0], [0.0, -1.0, 1.0, 0.0]],
     [[10.0, 20.0, 30.0, 40.0], [5.0, 5.0, 5.0, 5.0], [4.0, 3.0, 2.0, 1.0]]],
    dtype="float32",
)


def _ln(x):
    return to_numpy(mt.LayerNormalization()(np.asarray(x, dtype="float32")), "")  # gamma = 1, beta = 0


def _check(predict_affine, pairs, case):
    x = np.random.default_rng(0).normal(size=(2, 3, 8)).astype("float32")
    ln_x = _ln(x)
    for a, c in pairs:
        expected = _ln(a * x + c)
        got = call(predict_affine, "predict_affine", ln_x.copy(), a, c)
        if not like(got, expected, atol=1e-4):
            if like(got, a * ln_x + c, atol=1e-4):
                raise AssertionError(
                    f"{case}, a = {a:g}, c = {c:g}: you returned a * LN(x) + c. Layer norm undoes the "
                    "affine map: the shift c cancels in x - mu, and the factor a in the division by "
                    "sqrt(a^2 sigma^2 + eps), which is about |a| sigma."
                )
            if a < 0 and like(got, ln_x, atol=1e-4):
                raise AssertionError(
                    f"{case}, a = {a:g}: you returned LN(x). For a < 0 the numerator is a (x - mu) but "
                    "the denominator is |a| sigma: what does that do to the sign?"
                )
        close(got, expected, f"{case}, a = {a:g}, c = {c:g}: predict_affine(LN(x), a, c)", atol=1e-4,
              hint="Work out the mean and the variance of a x + c from those of x.")


@test_case(points=1)
def positive_scale(predict_affine):
    _check(predict_affine, [(1.0, 0.0), (10.0, 0.0), (0.5, -7.0), (3.0, 2.0)], "For a > 0")


@test_case(points=1)
def negative_scale(predict_affine):
    _check(predict_affine, [(-1.0, 5.0), (-2.0, 0.0), (-0.5, 3.0)], "For a < 0")


def _row(value, name):
    answered(value, name)
    try:
        b, t = (int(i) for i in value)
        assert 0 <= b < 2 and 0 <= t < 3
    except Exception:
        raise AssertionError(f"`{name}` must be a pair (b, t) with b in 0..1 and t in 0..2, like (0, 1).") from None
    return b, t


@test_case(points=1)
def rows_of_the_tiny_batch(scaled_row, reversed_row):
    ln = _ln(TINY)
    b, t = _row(scaled_row, "scaled_row")
    if (b, t) == (0, 0):
        raise AssertionError("`scaled_row` is the ramp itself (a = 1): find the row that is a multiple of it.")
    if not np.allclose(ln[b, t], ln[0, 0], atol=1e-4):
        raise AssertionError(
            f"`scaled_row` = {(b, t)} is {TINY[b, t].tolist()}, and its layer norm is not the ramp's: "
            "look for a row a * [1, 2, 3, 4] + c with a > 0."
        )
    b, t = _row(reversed_row, "reversed_row")
    if not np.allclose(ln[b, t], -ln[0, 0], atol=1e-4):
        raise AssertionError(
            f"`reversed_row` = {(b, t)} is {TINY[b, t].tolist()}, and its layer norm is not minus the "
            "ramp's: look for a row a * [1, 2, 3, 4] + c with a < 0."
        )

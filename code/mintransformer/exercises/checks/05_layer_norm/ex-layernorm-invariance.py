"""Exercise: layer norm of an affine transform of x, and the rows of the tiny batch that show it.

The public cases check predict_affine and the form of the rows; the rows themselves are compared
by a hidden case, when the notebook is graded.
"""

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


SHIFT = ("the shift c survives in your answer. It cancels in x - mu: the mean of a x + c is "
         "a mu + c, so (a x + c) - (a mu + c) = a (x - mu), and c never reaches the output.")

# (wrong prediction, message), named only when the answer matches it at every (a, c) of a test case.
MISTAKES = [
    (lambda ln_x, a, c: a * ln_x + c,
     "you returned a * LN(x) + c. Layer norm undoes the affine map: the shift c cancels in x - mu, and "
     "the factor a in the division by sqrt(a^2 sigma^2 + eps), which is about |a| sigma."),
    (lambda ln_x, a, c: np.sign(a) * ln_x + c, "the sign is right, but " + SHIFT),
    (lambda ln_x, a, c: ln_x + c, SHIFT),
    (lambda ln_x, a, c: a * ln_x,
     "you returned a * LN(x). The shift c does cancel, but so does the factor a, up to its sign: the "
     "division is by sqrt(a^2 sigma^2 + eps), which is about |a| sigma."),
    (lambda ln_x, a, c: ln_x,
     "you returned LN(x). For a < 0 the numerator is a (x - mu) but the denominator is |a| sigma: what "
     "does that do to the sign?"),
    (lambda ln_x, a, c: -ln_x, "you returned -LN(x). For a > 0 nothing changes sign: a (x - mu) / (|a| sigma)."),
]


def _check(predict_affine, pairs, case, x=None):
    if x is None:
        x = np.random.default_rng(0).normal(size=(2, 3, 8)).astype("float32")
    ln_x = _ln(x)
    expected = [_ln(a * x + c) for a, c in pairs]
    got = [call(predict_affine, "predict_affine", ln_x, a, c) for a, c in pairs]
    if all(like(g, e, atol=1e-4) for g, e in zip(got, expected)):
        return
    for wrong, message in MISTAKES:
        if all(like(g, wrong(ln_x, a, c), atol=1e-4) for g, (a, c) in zip(got, pairs)):
            raise AssertionError(f"{case}: {message}")
    for g, e, (a, c) in zip(got, expected, pairs):
        close(g, e, f"{case}, a = {a:g}, c = {c:g}: predict_affine(LN(x), a, c)", atol=1e-4,
              hint="Work out the mean and the variance of a x + c from those of x.")


@test_case(points=1)
def positive_scale(predict_affine):
    _check(predict_affine, [(10.0, 0.0), (0.5, -7.0), (3.0, 2.0), (1.0, 0.0)], "For a > 0")


@test_case(points=1)
def negative_scale(predict_affine):
    # a = -2 first: at a = -1, sign(a) LN(x) + c and a LN(x) + c are the same.
    _check(predict_affine, [(-2.0, 3.0), (-1.0, 5.0), (-0.5, 0.0)], "For a < 0")


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
    # The form and the known slips only: which rows are right is for the graded notebook's hidden case.
    scaled, reversed_ = _row(scaled_row, "scaled_row"), _row(reversed_row, "reversed_row")
    if scaled == (0, 0):
        raise AssertionError("`scaled_row` is the ramp itself (a = 1): find the row that is a multiple of it.")
    if reversed_ == (0, 0):
        raise AssertionError("`reversed_row` is the ramp itself (a = 1 > 0): find a row with a < 0.")
    if scaled == reversed_:
        raise AssertionError(
            "`scaled_row` and `reversed_row` are the same row: one is a * [1, 2, 3, 4] + c with a > 0, the other "
            "with a < 0."
        )

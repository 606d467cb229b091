"""Exercise: the cold limit of softmax(z / tau) with ties, and how the weights leave 1/S at a high temperature.

The check confirms the format and catches known mistakes; the values themselves are hidden test cases
(grading/hidden/), checked when the notebook is graded.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import call, like, to_numpy

OK_FORMAT = False
name = "ex-mathematics-temperature"
points = 2


def _softmax(z):
    with np.errstate(all="ignore"):
        e = np.exp(z - z.max())
        return e / e.sum()


def _fitted_temperature(got, z):
    """The tau for which ``got`` is softmax(z / tau), if it is one; else None.

    Two entries with z_i > z_j and weights p_i > p_j > 0 give p_i / p_j = exp((z_i - z_j) / tau),
    so tau = (z_i - z_j) / ln(p_i / p_j); ``got`` is then a softmax at that temperature if all its
    entries agree with softmax(z / tau).
    """
    if got.shape != z.shape or not np.all(np.isfinite(got)) or np.any(got < 0):
        return None
    i = int(np.argmax(z))
    below = np.flatnonzero((z < z[i]) & (got > 0))
    if got[i] <= 0 or below.size == 0:
        return None
    j = below[np.argmax(got[below])]  # the largest weight below the maximum
    if not got[i] > got[j]:
        return None
    with np.errstate(all="ignore"):
        tau = (z[i] - z[j]) / np.log(got[i] / got[j])
    if not (np.isfinite(tau) and tau > 0) or not like(got, _softmax(z / tau), atol=1e-5):
        return None
    return float(tau)


COLD_CASES = [np.array([2.0, 1.0, 0.5, -1.0]),
             np.array([0.5, 0.49, -1.0]),         # a small gap: the limit is still one-hot
             np.array([1.0, 1.0 - 1e-6, 0.0]),    # a near-tie: one-hot all the same
             np.array([1.0, 1.0 - 1e-12, 0.0]),   # a nearer one
             np.array([1.0, 3.0, 3.0, 0.0]),      # a tie for the maximum
              np.array([-2.0, -2.0, -2.0])]        # all tied
HOT_CASES = [np.array([2.0, 1.0, 0.5, -1.0]),
             np.array([10.0, -3.0, 0.0, 7.0, 1.0]),
             np.array([4.0, 4.0, 1.0]),
             np.array([-2.0, -2.0, -2.0])]  # a constant row: uniform at every temperature


def _result(function, label, z):
    with np.errstate(all="ignore"):
        got = to_numpy(call(function, label, z.copy()), f"The result of `{label}`")
    if got.shape != z.shape:
        raise AssertionError(f"{label} of {len(z)} logits has shape {got.shape}: one entry per logit, {z.shape}.")
    if not np.all(np.isfinite(got)):
        raise AssertionError(f"{label}({z.tolist()}) has a NaN or inf: the limit is finite.")
    return got


@test_case(points=1)
def cold(cold_limit):
    for z in COLD_CASES:
        got = _result(cold_limit, "cold_limit", z)
        top = z == z.max()
        M = int(top.sum())
        what = f"cold_limit({z.tolist()})"
        if M > 1 and like(got, np.eye(len(z))[np.argmax(z)]):
            raise AssertionError(
                f"{what} is one-hot, but {M} entries share the maximum: each of them keeps a term "
                "e^0 = 1 in the limit. How do they share the weight?"
            )
        if M > 1 and like(got, top.astype(float)):
            raise AssertionError(
                f"{what} puts 1 on each of the {M} tied entries: the weights of a softmax, and so of "
                "its limit, sum to 1."
            )
        near = np.isclose(z, z.max())
        if M == 1 and near.sum() > 1 and like(got, near / near.sum(), atol=1e-6):
            raise AssertionError(
                f"{what} shares the weight between entries that are close to the maximum but not "
                "equal to it (np.isclose?). The largest entry is unique, however small the gap: "
                "the limit is one-hot. Only exactly equal entries (z == z.max()) share it."
            )
        tau = _fitted_temperature(got, z)
        if tau is not None:
            raise AssertionError(
                f"{what} is softmax(z / tau) with tau = {tau:.0e}: a small temperature, not the "
                "limit. Close ties need ever smaller tau; in the limit every entry below the "
                "maximum gets exactly 0. Write the limit from your formula."
            )
        if np.any(got < -1e-9) or not abs(got.sum() - 1) < 1e-6:
            raise AssertionError(f"{what} is not a set of weights: the weights of a softmax, and so their limit, "
                                 "are at least 0 and sum to 1.")


@test_case(points=1)
def hot(hot_slope):
    for z in HOT_CASES:
        got = _result(hot_slope, "hot_slope", z)
        S = len(z)
        what = f"hot_slope({z.tolist()})"
        if like(got, np.full(S, 1 / S)):
            raise AssertionError(
                f"{what} is 1/S, the limit itself. The task asks for the next term: the vector c with "
                "softmax(z / tau) = 1/S + c / tau + O(1/tau^2), how each weight leaves 1/S."
            )
        if not abs(got.sum()) < 1e-6:
            raise AssertionError(
                f"{what}: your deviations do not sum to 0, so the weights would not sum to 1 at a large "
                "tau. The denominator changes with tau too: expand it as well as the numerator."
            )

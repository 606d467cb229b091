"""Exercise: the cold limit of softmax(z / tau) with ties, and how the weights leave 1/S at a high temperature."""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import call, close, like, to_numpy

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


@test_case(points=1)
def cold(cold_limit):
    cases = [np.array([2.0, 1.0, 0.5, -1.0]),
             np.array([0.5, 0.49, -1.0]),         # a small gap: the limit is still one-hot
             np.array([1.0, 1.0 - 1e-6, 0.0]),    # a near-tie: one-hot all the same
             np.array([1.0, 1.0 - 1e-12, 0.0]),   # a nearer one
             np.array([1.0, 3.0, 3.0, 0.0]),      # a tie for the maximum
             np.array([-2.0, -2.0, -2.0])]        # all tied
    for z in cases:
        with np.errstate(all="ignore"):
            got = to_numpy(call(cold_limit, "cold_limit", z.copy()), "The result of `cold_limit`")
        top = z == z.max()
        M = int(top.sum())
        expected = top / M
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
        if not like(got, expected, atol=1e-6):
            tau = _fitted_temperature(got, z)
            if tau is not None:
                raise AssertionError(
                    f"{what} is softmax(z / tau) with tau = {tau:.0e}: a small temperature, not the "
                    "limit. Close ties need ever smaller tau; in the limit every entry below the "
                    "maximum gets exactly 0. Write the limit from your formula."
                )
        close(got, expected, what, atol=1e-6,
              hint="As tau -> 0+, (z_i - max z) / tau -> -infinity for every entry below the maximum.")


@test_case(points=1)
def hot(hot_slope):
    cases = [np.array([2.0, 1.0, 0.5, -1.0]),
             np.array([10.0, -3.0, 0.0, 7.0, 1.0]),
             np.array([4.0, 4.0, 1.0]),
             np.array([-2.0, -2.0, -2.0])]  # a constant row: uniform at every temperature
    for z in cases:
        with np.errstate(all="ignore"):
            got = to_numpy(call(hot_slope, "hot_slope", z.copy()), "The result of `hot_slope`")
        S = len(z)
        expected = (z - z.mean()) / S
        what = f"hot_slope({z.tolist()})"
        if got.shape == z.shape and not like(got, expected, atol=1e-6):
            if like(got, np.full(S, 1 / S)):
                raise AssertionError(
                    f"{what} is 1/S, the limit itself. The task asks for the next term: the vector c with "
                    "softmax(z / tau) = 1/S + c / tau + O(1/tau^2), how each weight leaves 1/S."
                )
            if like(got, z / S):
                raise AssertionError(
                    f"{what}: your deviations do not sum to 0, so the weights would not sum to 1 at a large "
                    "tau. The denominator changes with tau too: expand it as well as the numerator."
                )
            if like(got, z - z.mean()):
                raise AssertionError(
                    f"{what} points the right way (your deviations sum to 0) but has the wrong size. Expand "
                    "the denominator, a sum of S terms, as carefully as the numerator."
                )
            if like(got, expected, atol=1e-3):
                raise AssertionError(
                    f"{what} is close but not exact: a softmax evaluated at a finite tau still carries the "
                    "terms of order 1/tau^2. Write c from your expansion."
                )
        close(got, expected, what, atol=1e-6,
              hint="Expand e^(z_i / tau) = 1 + z_i / tau + O(1/tau^2) in the numerator and in the denominator.")

"""Exercise: the paper's base-model schedule: its peak, where it has halved, its last rate.

The public cases check the form of the three numbers and name the known mistakes (a term of the
equation left out, the other term, the wrong multiple of the warm-up); the numbers themselves are
compared by hidden cases, when the notebook is graded.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import answered

OK_FORMAT = False
name = "ex-training-base-schedule"
points = 3

D_MODEL, WARMUP = 512, 4000


def _number(value, what):
    answered(value, what)
    try:
        return float(np.asarray(value, dtype="float64").reshape(()))
    except Exception:
        raise AssertionError(f"`{what}` must be one number, not {type(value).__name__}.") from None


def _near(value, target, rtol=2e-3):
    return np.isclose(value, target, rtol=rtol, atol=0)


def _peak(base_peak):
    value = _number(base_peak, "base_peak")
    if _near(value, WARMUP**-0.5):
        raise AssertionError(
            "`base_peak` is the min term alone, at its peak: the factor in front of the min, which multiplies "
            "the whole schedule, is missing.")
    if _near(value, 512**-0.5):
        raise AssertionError(
            "`base_peak` is the factor in front of the min alone: what is the min at step = warmup_steps?")
    return value


@test_case(points=1)
def peak(base_peak):
    _peak(base_peak)  # the form and the known mistakes: the value is for the hidden case


def _half_step(base_half_step):
    value = _number(base_half_step, "base_half_step")
    if abs(value - 2 * WARMUP) <= 1:
        raise AssertionError(
            "`base_half_step` is twice the warm-up: after the warm-up the rate falls as step^-0.5, not as 1 / step. "
            "What is it, against the peak, at the step you gave?")
    if abs(value - WARMUP / 2) <= 1:
        raise AssertionError(
            "At step 2000 the rate passes half the peak on its way UP, during the warm-up; the question "
            "asks where it has fallen to half the peak after it.")
    if value <= WARMUP:
        raise AssertionError(
            f"`base_half_step` is {value:g}: the rate peaks at step = warmup_steps ({WARMUP}) and the question asks "
            "where, past its peak, it has fallen to half.")
    return value


@test_case(points=1)
def half_peak_step(base_half_step):
    _half_step(base_half_step)


def _rate_100k(base_rate_100k):
    value = _number(base_rate_100k, "base_rate_100k")
    if _near(value, 100_000**-0.5):
        raise AssertionError(
            "`base_rate_100k` is the min term alone: the factor in front of the min, which multiplies the whole "
            "schedule, is missing.")
    if _near(value, 512**-0.5 * 100_000 * WARMUP**-1.5):
        raise AssertionError(
            "`base_rate_100k` uses the warm-up term step * warmup_steps^-1.5; after the warm-up the "
            "smaller of the two terms, which the min picks, is step^-0.5.")
    return value


@test_case(points=1)
def rate_after_100k_steps(base_rate_100k):
    _rate_100k(base_rate_100k)

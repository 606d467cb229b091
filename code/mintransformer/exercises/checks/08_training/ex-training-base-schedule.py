"""Exercise: the paper's base-model schedule: its peak, where it has halved, its last rate."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, close

OK_FORMAT = False
name = "ex-training-base-schedule"
points = 3

D_MODEL, WARMUP = 512, 4000


def _rate(step):
    return float(mt.TransformerSchedule(D_MODEL, WARMUP)(step))


def _number(value, what):
    answered(value, what)
    try:
        return float(np.asarray(value, dtype="float64").reshape(()))
    except Exception:
        raise AssertionError(f"`{what}` must be one number, not {type(value).__name__}.") from None


def _near(value, target, rtol=2e-3):
    return np.isclose(value, target, rtol=rtol, atol=0)


@test_case(points=1)
def peak(base_peak):
    value = _number(base_peak, "base_peak")
    expected = _rate(WARMUP)
    if _near(value, WARMUP**-0.5):
        raise AssertionError(
            "`base_peak` is warmup_steps^-0.5 alone: you left out the factor d_model^-0.5 = 512^-0.5 "
            "that multiplies the whole schedule.")
    if _near(value, 512**-0.5):
        raise AssertionError(
            "`base_peak` is d_model^-0.5 alone: at step = warmup_steps both terms of the min equal "
            "warmup_steps^-0.5, and the rate is their product with d_model^-0.5.")
    if not _near(value, expected):  # close() says too large or too small, never the value
        close(value, expected, "`base_peak`", atol=0, rtol=0,
              hint="The rate peaks at step = warmup_steps, where both terms of the min are equal.")


@test_case(points=1)
def half_peak_step(base_half_step):
    value = _number(base_half_step, "base_half_step")
    if abs(value - 2 * WARMUP) <= 1:
        raise AssertionError(
            "At step 8000 the rate is 1/sqrt(2) of the peak, not half: after the warm-up it falls as "
            "step^-0.5, so halving it takes 4 times the steps, not 2.")
    if abs(value - WARMUP / 2) <= 1:
        raise AssertionError(
            "At step 2000 the rate passes half the peak on its way UP, during the warm-up; the question "
            "asks where it has fallen to half the peak after it.")
    if abs(value - 4 * WARMUP) > 1:
        raise AssertionError(
            f"`base_half_step` is {value:g}. After the warm-up the rate is d_model^-0.5 * step^-0.5: "
            "solve step^-0.5 = warmup_steps^-0.5 / 2 for the step.")


@test_case(points=1)
def rate_after_100k_steps(base_rate_100k):
    value = _number(base_rate_100k, "base_rate_100k")
    expected = _rate(100_000)
    if _near(value, 100_000**-0.5):
        raise AssertionError(
            "`base_rate_100k` is step^-0.5 alone: multiply by d_model^-0.5 = 512^-0.5.")
    if _near(value, 512**-0.5 * 100_000 * WARMUP**-1.5):
        raise AssertionError(
            "`base_rate_100k` uses the warm-up term step * warmup_steps^-1.5; after the warm-up the "
            "smaller of the two terms, which the min picks, is step^-0.5.")
    if not _near(value, expected):  # close() says too large or too small, never the value
        close(value, expected, "`base_rate_100k`", atol=0, rtol=0,
              hint="Past the warm-up the min picks step^-0.5; the factor d_model^-0.5 multiplies it.")

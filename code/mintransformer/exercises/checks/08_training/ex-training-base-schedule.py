"""Exercise: the paper's base-model schedule: its peak, where it has halved, its last rate.

The numbers (d_model, warmup_steps, train_steps) are the student's own (mt.exercises.parameters,
drawn from STUDENT_ID). The public cases check the form of the three answers and name the known
mistakes (a term of the equation left out, the other term, the wrong multiple of the warm-up); the
answers themselves are compared by hidden cases, when the notebook is graded.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import answered, student_numbers

OK_FORMAT = False
name = "ex-training-base-schedule"
points = 3



def _numbers(STUDENT_ID, base_schedule_numbers):
    """(d_model, warmup_steps, train_steps) of the student's numbers."""
    n = student_numbers(name, STUDENT_ID, base_schedule_numbers)
    return n["d_model"], n["warmup_steps"], n["train_steps"]


def _number(value, what):
    answered(value, what)
    try:
        return float(np.asarray(value, dtype="float64").reshape(()))
    except Exception:
        raise AssertionError(f"`{what}` must be one number, not {type(value).__name__}.") from None


def _near(value, target, rtol=2e-3):
    return np.isclose(value, target, rtol=rtol, atol=0)


def _peak(base_peak, numbers):
    d_model, warmup, _ = numbers
    value = _number(base_peak, "base_peak")
    if _near(value, warmup**-0.5):
        raise AssertionError(
            "`base_peak` is the min term alone, at its peak: the factor in front of the min, which multiplies "
            "the whole schedule, is missing.")
    if _near(value, d_model**-0.5):
        raise AssertionError(
            "`base_peak` is the factor in front of the min alone: what is the min at step = warmup_steps?")
    return value


@test_case(points=1)
def peak(base_peak, STUDENT_ID, base_schedule_numbers):
    # The form and the known mistakes: the value is for the hidden case.
    _peak(base_peak, _numbers(STUDENT_ID, base_schedule_numbers))


def _half_step(base_half_step, numbers):
    _, warmup, _ = numbers
    value = _number(base_half_step, "base_half_step")
    if abs(value - 2 * warmup) <= 1:
        raise AssertionError(
            "`base_half_step` is twice the warm-up: after the warm-up the rate falls as step^-0.5, not as 1 / step. "
            "What is it, against the peak, at the step you gave?")
    if abs(value - warmup / 2) <= 1:
        raise AssertionError(
            f"At step {warmup / 2:g} the rate passes half the peak on its way UP, during the warm-up; the question "
            "asks where it has fallen to half the peak after it.")
    if value <= warmup:
        raise AssertionError(
            f"`base_half_step` is {value:g}: the rate peaks at step = warmup_steps ({warmup}) and the question asks "
            "where, past its peak, it has fallen to half.")
    return value


@test_case(points=1)
def half_peak_step(base_half_step, STUDENT_ID, base_schedule_numbers):
    _half_step(base_half_step, _numbers(STUDENT_ID, base_schedule_numbers))


def _last_rate(base_last_rate, numbers):
    d_model, warmup, train_steps = numbers
    value = _number(base_last_rate, "base_last_rate")
    if _near(value, train_steps**-0.5):
        raise AssertionError(
            "`base_last_rate` is the min term alone: the factor in front of the min, which multiplies the whole "
            "schedule, is missing.")
    if _near(value, d_model**-0.5 * train_steps * warmup**-1.5):
        raise AssertionError(
            "`base_last_rate` uses the warm-up term step * warmup_steps^-1.5; after the warm-up the "
            "smaller of the two terms, which the min picks, is step^-0.5.")
    return value


@test_case(points=1)
def rate_after_the_last_step(base_last_rate, STUDENT_ID, base_schedule_numbers):
    _last_rate(base_last_rate, _numbers(STUDENT_ID, base_schedule_numbers))

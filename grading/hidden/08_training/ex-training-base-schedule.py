"""Hidden cases of ex-training-base-schedule: the three numbers themselves, for the student's numbers.

Merged after the public check (mt.exercises.merged_source), so its helpers (_numbers, _peak,
_half_step, _last_rate, _near) are in scope.
"""

from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import close


def _rate(numbers, step):
    d_model, warmup, _ = numbers
    return float(mt.TransformerSchedule(d_model, warmup)(step))


@test_case(points=1, hidden=True)
def hidden_peak(base_peak, STUDENT_ID, base_schedule_numbers):
    numbers = _numbers(STUDENT_ID, base_schedule_numbers)  # noqa: F821 (the public check's)
    value = _peak(base_peak, numbers)  # noqa: F821
    expected = _rate(numbers, numbers[1])
    if not _near(value, expected):  # noqa: F821 (close() says too large or too small, never the value)
        close(value, expected, "`base_peak`", atol=0, rtol=0,
              hint="The rate peaks at step = warmup_steps, where both terms of the min are equal.")


@test_case(points=1, hidden=True)
def hidden_half_peak_step(base_half_step, STUDENT_ID, base_schedule_numbers):
    numbers = _numbers(STUDENT_ID, base_schedule_numbers)  # noqa: F821
    value = _half_step(base_half_step, numbers)  # noqa: F821
    expected = 4 * numbers[1]
    if abs(value - expected) > 1:
        side = "too early" if value < expected else "too late"
        raise AssertionError(
            f"`base_half_step` is {value:g}: that is {side}. After the warm-up the rate falls as step^-0.5: at "
            "which step is it half its value at the peak?")


@test_case(points=1, hidden=True)
def hidden_rate_after_the_last_step(base_last_rate, STUDENT_ID, base_schedule_numbers):
    numbers = _numbers(STUDENT_ID, base_schedule_numbers)  # noqa: F821
    value = _last_rate(base_last_rate, numbers)  # noqa: F821
    expected = _rate(numbers, numbers[2])
    if not _near(value, expected):  # noqa: F821 (close() says too large or too small, never the value)
        close(value, expected, "`base_last_rate`", atol=0, rtol=0,
              hint="Past the warm-up the min picks step^-0.5; the factor d_model^-0.5 multiplies it.")

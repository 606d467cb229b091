"""Hidden cases of ex-training-base-schedule: the three numbers themselves.

Merged after the public check (mt.exercises.merged_source), so its helpers (_peak, _half_step,
_rate_100k, _near, D_MODEL, WARMUP) are in scope.
"""

from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import close


def _rate(step):
    return float(mt.TransformerSchedule(D_MODEL, WARMUP)(step))  # noqa: F821 (the public check's)


@test_case(points=1, hidden=True)
def hidden_peak(base_peak):
    value = _peak(base_peak)  # noqa: F821
    expected = _rate(WARMUP)  # noqa: F821
    if not _near(value, expected):  # noqa: F821 (close() says too large or too small, never the value)
        close(value, expected, "`base_peak`", atol=0, rtol=0,
              hint="The rate peaks at step = warmup_steps, where both terms of the min are equal.")


@test_case(points=1, hidden=True)
def hidden_half_peak_step(base_half_step):
    value = _half_step(base_half_step)  # noqa: F821
    expected = 4 * WARMUP  # noqa: F821
    if abs(value - expected) > 1:
        side = "too early" if value < expected else "too late"
        raise AssertionError(
            f"`base_half_step` is {value:g}: that is {side}. After the warm-up the rate falls as step^-0.5: at "
            "which step is it half its value at the peak?")


@test_case(points=1, hidden=True)
def hidden_rate_after_100k_steps(base_rate_100k):
    value = _rate_100k(base_rate_100k)  # noqa: F821
    expected = _rate(100_000)
    if not _near(value, expected):  # noqa: F821 (close() says too large or too small, never the value)
        close(value, expected, "`base_rate_100k`", atol=0, rtol=0,
              hint="Past the warm-up the min picks step^-0.5; the factor d_model^-0.5 multiplies it.")

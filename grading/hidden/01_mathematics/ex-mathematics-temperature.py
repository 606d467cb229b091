"""Hidden cases of ex-mathematics-temperature: the limits themselves, for the public logits and for others
(one entry, four tied at the top, twelve, two).

Merged after the public check (mt.exercises.merged_source): COLD_CASES, HOT_CASES and _result are its.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import close, like

HIDDEN_LOGITS = [np.array([3.0]), np.array([-1.0, 4.0, 0.0, 4.0, 4.0, 2.5, 4.0]),
                 np.linspace(-2.0, 5.0, 12), np.array([0.25, -0.75])]


@test_case(points=1, hidden=True)
def hidden_the_cold_limits(cold_limit):
    for z in COLD_CASES + HIDDEN_LOGITS:  # noqa: F821 (the public check's)
        got = _result(cold_limit, "cold_limit", z)  # noqa: F821
        top = z == z.max()
        expected = top / top.sum()
        close(got, expected, f"cold_limit({z.tolist()})", atol=1e-6,
              hint="As tau -> 0+, (z_i - max z) / tau -> -infinity for every entry below the maximum.")


@test_case(points=1, hidden=True)
def hidden_the_hot_slopes(hot_slope):
    for z in HOT_CASES + HIDDEN_LOGITS:  # noqa: F821
        got = _result(hot_slope, "hot_slope", z)  # noqa: F821
        expected = (z - z.mean()) / len(z)
        what = f"hot_slope({z.tolist()})"
        if not like(got, expected, atol=1e-6):
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

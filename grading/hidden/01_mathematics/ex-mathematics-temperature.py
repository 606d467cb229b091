"""Hidden cases of ex-mathematics-temperature: other logits (one entry, four tied at the top, long vectors).

Merged after the public check (mt.exercises.merged_source), whose imports are in scope.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import call, close, to_numpy

HIDDEN_LOGITS = [np.array([3.0]), np.array([-1.0, 4.0, 0.0, 4.0, 4.0, 2.5, 4.0]),
                 np.linspace(-2.0, 5.0, 12), np.array([0.25, -0.75])]


@test_case(points=1, hidden=True)
def hidden_cold_limits_of_other_logits(cold_limit):
    for z in HIDDEN_LOGITS:
        with np.errstate(all="ignore"):
            got = to_numpy(call(cold_limit, "cold_limit", z.copy()), "The result of `cold_limit`")
        top = z == z.max()
        expected = top / top.sum()
        close(got, expected, f"Hidden case: cold_limit of {len(z)} logits", atol=1e-6,
              hint="As tau -> 0+, every entry below the maximum gets 0; the entries equal to it share the weight.")


@test_case(points=1, hidden=True)
def hidden_hot_slopes_of_other_logits(hot_slope):
    for z in HIDDEN_LOGITS:
        with np.errstate(all="ignore"):
            got = to_numpy(call(hot_slope, "hot_slope", z.copy()), "The result of `hot_slope`")
        expected = (z - z.mean()) / len(z)
        close(got, expected, f"Hidden case: hot_slope of {len(z)} logits", atol=1e-6,
              hint="Expand e^(z_i / tau) = 1 + z_i / tau + O(1/tau^2) in the numerator and in the denominator.")

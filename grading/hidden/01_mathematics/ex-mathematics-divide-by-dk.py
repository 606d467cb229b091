"""Hidden cases of ex-mathematics-divide-by-dk: the values themselves, at the public d_k and S and at others.

Merged after the public check (mt.exercises.merged_source): D_KS, SIZES, _variances and _limits are its.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import close


@test_case(points=1, hidden=True)
def hidden_variance_after_dividing_by_dk(var_divided_by_dk):
    for d_ks in (D_KS, np.array([1.0, 9.0, 1000.0])):  # noqa: F821 (the public check's)
        got = _variances(var_divided_by_dk, d_ks)  # noqa: F821
        expected = 1 / d_ks
        close(got, expected, f"var_divided_by_dk(d_k) for d_k = {', '.join(f'{d:g}' for d in d_ks)}",
              rtol=1e-6, atol=1e-12,
              hint="Start from the variance of q . k, and use what dividing by a constant does to a variance.")


@test_case(points=1, hidden=True)
def hidden_the_limit_is_uniform(limits_divided_by_dk):
    for S in SIZES + (3, 7, 1000):  # noqa: F821
        got = _limits(limits_divided_by_dk, S)  # noqa: F821
        expected = [1 / S, np.log(S)]
        close(got, expected, f"limits_divided_by_dk({S})", atol=1e-6,
              hint="What do the logits of a row tend to as d_k grows, and what does the softmax make of such a row?")

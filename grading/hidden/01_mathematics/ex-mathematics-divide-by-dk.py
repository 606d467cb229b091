"""Hidden case of ex-mathematics-divide-by-dk: other d_k and other numbers of keys S.

Merged after the public check (mt.exercises.merged_source), whose imports are in scope.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import call, close, pair, to_numpy


@test_case(points=1, hidden=True)
def hidden_other_sizes(var_divided_by_dk, limits_divided_by_dk):
    d_ks = np.array([1.0, 9.0, 1000.0])
    got = np.array([float(to_numpy(call(var_divided_by_dk, "var_divided_by_dk", int(d)), "the variance"))
                    for d in d_ks])
    expected = 1 / d_ks
    close(got, expected, "Hidden case: var_divided_by_dk(d_k) for d_k = 1, 9, 1000", rtol=1e-6, atol=1e-12,
          hint="Write the variance for the d_k given.")
    for S in (3, 7, 1000):
        first, second = pair(call(limits_divided_by_dk, "limits_divided_by_dk", S), "limits_divided_by_dk",
                             "(mean largest weight, mean entropy)")
        got = np.array([float(to_numpy(x, "each limit")) for x in (first, second)])
        expected = [1 / S, np.log(S)]
        close(got, expected, f"Hidden case: limits_divided_by_dk({S})", atol=1e-6,
              hint="Write the limits for the number of keys S given.")

"""Hidden case of ex-mathematics-variance: both variances on another grid of d_k and sigma.

Merged after the public check (mt.exercises.merged_source), whose imports are in scope.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import call, close, to_numpy

HIDDEN_GRID = [(d_k, sigma) for d_k in (3, 100, 1000) for sigma in (0.1, 0.7, 3.0)]


@test_case(points=1, hidden=True)
def hidden_both_variances_on_another_grid(dot_variance, scaled_dot_variance):
    for function, label, formula in [(dot_variance, "dot_variance", lambda d, s: d * s**4),
                                     (scaled_dot_variance, "scaled_dot_variance", lambda d, s: s**4 + 0 * d)]:
        got = np.array([float(to_numpy(call(function, label, d_k, sigma), f"{label}({d_k}, {sigma})"))
                        for d_k, sigma in HIDDEN_GRID])
        expected = np.array([formula(float(d_k), sigma) for d_k, sigma in HIDDEN_GRID])
        close(got, expected, f"Hidden case: {label}(d_k, sigma) for d_k = 3, 100, 1000 and sigma = 0.1, 0.7, 3",
              rtol=1e-6, atol=1e-12, hint="Write the variance for the d_k and the sigma given.")

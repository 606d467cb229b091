"""Hidden cases of ex-mathematics-variance: both formulas' values, on the public grid and on another one.

Merged after the public check (mt.exercises.merged_source): GRID, _values, _formula and
_name_the_mistake are its.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import close

HIDDEN_GRID = [(d_k, sigma) for d_k in (3, 100, 1000) for sigma in (0.1, 0.7, 3.0)]


@test_case(points=1, hidden=True)
def hidden_variance_of_the_dot_product(dot_variance):
    for grid, what in [(GRID, ""), (HIDDEN_GRID, " at d_k = 3, 100, 1000, sigma = 0.1, 0.7, 3")]:  # noqa: F821
        got = _values(dot_variance, "dot_variance", grid)  # noqa: F821 (the public check's)
        expected = _formula(lambda d, s: d * s**4, grid)  # noqa: F821
        close(got, expected, f"dot_variance(d_k, sigma){what}", rtol=1e-6, atol=1e-12,
              hint="Var(q . k) = sum over the d_k terms of Var(q_i k_i).")


@test_case(points=1, hidden=True)
def hidden_variance_of_the_scaled_dot_product(scaled_dot_variance):
    public_grid = _values(scaled_dot_variance, "scaled_dot_variance")  # noqa: F821 (the public check's)
    _name_the_mistake(public_grid, "scaled_dot_variance(d_k, sigma)", [  # noqa: F821
        (lambda d, s: np.sqrt(d) * s**4,
         "dividing by a constant c divides the variance by c^2: here by (sqrt(d_k))^2 = d_k."),
        (lambda d, s: d * s**4, "that is the variance before dividing by sqrt(d_k)."),
    ])
    for grid, what in [(GRID, ""), (HIDDEN_GRID, " at d_k = 3, 100, 1000, sigma = 0.1, 0.7, 3")]:  # noqa: F821
        got = _values(scaled_dot_variance, "scaled_dot_variance", grid)  # noqa: F821
        expected = _formula(lambda d, s: s**4 + 0 * d, grid)  # noqa: F821
        close(got, expected, f"scaled_dot_variance(d_k, sigma){what}", rtol=1e-6, atol=1e-12,
              hint="Var(X / c) = Var(X) / c^2.")

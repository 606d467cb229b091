"""Hidden cases of ex-layernorm-implement: inputs the public check does not use.

Merged after the public check (mt.exercises.merged_source), so its helpers (_compare, _gamma_beta)
are in scope.
"""

import numpy as np
from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_four_axes_and_another_eps(my_layer_norm):
    rng = np.random.default_rng(5052)
    spread = rng.choice([3.0, 0.5, 1e-2, 1e-4, 0.0], size=(2, 3, 4, 1))
    x = (rng.uniform(-3, 3, size=(2, 3, 4, 1)) + spread * rng.normal(size=(2, 3, 4, 10))).astype("float32")
    _compare(my_layer_norm, x, *_gamma_beta(rng, 10), 1e-5,  # noqa: F821 (the public check's)
             "Hidden case, a (2, 3, 4, 10) input with eps=1e-5")


@test_case(points=1, hidden=True)
def hidden_one_position(my_layer_norm):
    rng = np.random.default_rng(5053)
    x = (2.0 + 0.01 * rng.normal(size=9)).astype("float32")  # no leading axis; a spread near sqrt(eps)
    _compare(my_layer_norm, x, *_gamma_beta(rng, 9), 1e-4,  # noqa: F821
             "Hidden case, one position, a (9,) input with eps=1e-4")

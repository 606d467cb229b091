"""Hidden cases of ex-attention-implement: inputs the public check does not use.

Merged after the public check (mt.exercises.merged_source), so its helpers (_inputs, _compare)
are in scope.
"""

import numpy as np
from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_other_sizes_and_a_random_mask(my_attention):
    q, k, v = _inputs(2718, (3, 2, 6, 16), (3, 2, 7, 16), d_v=3)  # noqa: F821 (the public check's)
    mask = np.random.default_rng(2718).random((3, 1, 6, 7)) > 0.4
    _compare(my_attention, q, k, v, mask, "Hidden case")  # noqa: F821

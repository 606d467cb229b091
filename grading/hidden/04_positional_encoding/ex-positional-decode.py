"""Hidden case of ex-positional-decode: a table of one pair (d_model = 2), and a long narrow one.

Merged after the public check (mt.exercises.merged_source): _check is its.
"""

import numpy as np
from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_other_tables(decode_positions):
    _check(decode_positions, 6, 2, np.array([3, 0, 5, 1, 4, 2]), "Hidden case, 6 positions, d_model = 2")  # noqa: F821
    positions = np.random.default_rng(77).choice(5000, size=300, replace=False)
    _check(decode_positions, 5000, 32, positions, "Hidden case, 300 of 5000 positions, d_model = 32")  # noqa: F821

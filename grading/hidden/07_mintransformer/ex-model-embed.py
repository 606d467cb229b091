"""Hidden case of ex-model-embed: another width, vocabulary and length.

Merged after the public check (mt.exercises.merged_source), so its helper _check is in scope.
"""

import numpy as np
from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_longer_sequences_at_another_width(my_embedding):
    tokens = np.random.default_rng(707).integers(0, 50, size=(2, 13))  # T = 13: longer than any public case
    _check(my_embedding, 50, 20, tokens, 708, "Hidden case, at d_model = 20 with T = 13")  # noqa: F821

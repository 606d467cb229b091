"""Hidden case of ex-attention-combine-masks: one row, one position, and rows of four sentences.

Merged after the public check (mt.exercises.merged_source): _check is its.
"""

import numpy as np
from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_other_batches(my_decoder_mask):
    _check(my_decoder_mask, np.array([[9]]), np.array([[1]]))  # noqa: F821 (the public check's)
    tokens = np.array([[3, 4, 5, 6, 7, 8, 9, 3, 0, 0]])
    segments = np.array([[1, 1, 2, 3, 3, 3, 4, 4, 0, 0]])
    _check(my_decoder_mask, tokens, segments)  # noqa: F821
    tokens = np.array([[5, 5, 5, 5, 5, 5, 5], [6, 7, 0, 0, 0, 0, 0]])
    segments = np.array([[1, 2, 3, 4, 4, 4, 4], [1, 2, 0, 0, 0, 0, 0]])
    _check(my_decoder_mask, tokens, segments)  # noqa: F821

"""Hidden cases of ex-attention-implement: inputs the public check does not use (other sizes, a random mask;
causal=True with a padding mask, T = 3 over S = 6, d_k = 16).

Merged after the public check (mt.exercises.merged_source), so its helpers (_inputs, _compare)
are in scope.
"""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt


@test_case(points=1, hidden=True)
def hidden_other_sizes_and_a_random_mask(my_attention):
    q, k, v = _inputs(2718, (3, 2, 6, 16), (3, 2, 7, 16), d_v=3)  # noqa: F821 (the public check's)
    mask = np.random.default_rng(2718).random((3, 1, 6, 7)) > 0.4
    _compare(my_attention, q, k, v, mask, "Hidden case")  # noqa: F821


@test_case(points=1, hidden=True)
def hidden_causal_with_a_padding_mask_and_other_sizes(my_attention):
    q, k, v = _inputs(3141, (2, 2, 3, 16), (2, 2, 6, 16), d_v=5)  # noqa: F821 (the public check's)
    padding = mt.padding_mask(np.array([[4, 5, 6, 7, 0, 0], [4, 5, 6, 7, 8, 9]]))  # (B, 1, 1, S)
    _compare(my_attention, q, k, v, padding, "Hidden case, causal=True and a padding mask, T = 3, S = 6",  # noqa: F821
             causal=True)

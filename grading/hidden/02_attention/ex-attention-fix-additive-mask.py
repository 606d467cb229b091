"""Hidden case of ex-attention-fix-additive-mask: several heads, T != S, d_k = 16, a random mask.

Merged after the public check (mt.exercises.merged_source): _check is its.
"""

import numpy as np
from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_several_heads_and_a_random_mask(fixed_attention):
    rng = np.random.default_rng(1618)
    q = rng.normal(size=(3, 2, 5, 16)).astype("float32")
    k = rng.normal(size=(3, 2, 7, 16)).astype("float32")
    v = rng.normal(size=(3, 2, 7, 4)).astype("float32")
    mask = rng.random((3, 1, 5, 7)) > 0.5
    mask[0, 0, 1] = False  # a query that may see no key
    mask[1, 0, 2] = True   # and one that may see every key
    _check(fixed_attention, q, k, v, mask, "Hidden case, 2 heads, 5 queries over 7 keys")  # noqa: F821

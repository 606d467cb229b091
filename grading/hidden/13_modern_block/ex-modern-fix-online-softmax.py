"""Hidden cases of ex-modern-fix-online-softmax: tiles of one key, one tile, and logits too large for exp.

Merged after the public check (mt.exercises.merged_source), so its helpers (_check) are in scope.
"""

import numpy as np
from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_tiles_of_one_and_of_all(online_attention):
    rng = np.random.default_rng(1342)
    q = rng.normal(size=(4, 5, 6)).astype("float32")  # (B, T, d_k): no heads axis
    k, v = rng.normal(size=(4, 7, 6)).astype("float32"), rng.normal(size=(4, 7, 3)).astype("float32")
    _check(online_attention, q, k, v, 1, "hidden case, tiles of one key, d_v = 3")  # noqa: F821
    _check(online_attention, q, k, v, 16, "hidden case, one tile larger than the 7 keys")  # noqa: F821


@test_case(points=1, hidden=True)
def hidden_large_logits(online_attention):
    rng = np.random.default_rng(1343)
    q = (1000 * rng.normal(size=(1, 2, 4, 4))).astype("float32")  # logits in the thousands: exp overflows
    k, v = (rng.normal(size=(1, 2, 9, 4)).astype("float32") for _ in range(2))
    _check(online_attention, q, k, v, 2, "hidden case, logits in the thousands, tiles of 2", atol=1e-4)  # noqa: F821

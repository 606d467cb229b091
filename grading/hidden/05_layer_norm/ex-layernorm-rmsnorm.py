"""Hidden cases of ex-layernorm-rmsnorm: another shape and eps for rms_norm, and the invariance it keeps.

Merged after the public check (mt.exercises.merged_source), so its helpers (_compare, _invariance)
are in scope.
"""

import numpy as np
from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_four_axes_and_another_eps(rms_norm):
    rng = np.random.default_rng(5051)
    x = (rng.uniform(-2, 2, size=(2, 2, 3, 1)) + rng.normal(size=(2, 2, 3, 5))).astype("float32")
    x[1, 1] *= 0.05  # RMS near sqrt(eps): where eps shows
    gamma = rng.normal(1.0, 0.5, size=5).astype("float32")
    _compare(rms_norm, x, gamma, 1e-2, "Hidden case, a (2, 2, 3, 5) input with eps=1e-2")  # noqa: F821


@test_case(points=1, hidden=True)
def hidden_which_invariance(rmsnorm_keeps):
    kept = _invariance(rmsnorm_keeps)  # noqa: F821 (the public check's)
    if kept != "scale":  # one of two: the message must not name the other
        raise AssertionError(
            f"`rmsnorm_keeps` = {rmsnorm_keeps!r} is not the invariance RMSNorm keeps. Try both on the tiny "
            "batch: compare rms_norm(a * x, gamma) and rms_norm(x + c, gamma) with rms_norm(x, gamma), for an "
            "a > 0 and a c of your choice."
        )

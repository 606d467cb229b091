"""Hidden cases of ex-layernorm-invariance: other inputs and scalars for predict_affine, and the rows.

Merged after the public check (mt.exercises.merged_source), so its helpers (_check, _ln, _row,
TINY) are in scope.
"""

import numpy as np
from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_other_inputs_and_scalars(predict_affine):
    # Another x (another shape), and scalars of other kinds: ints and NumPy floats.
    rng = np.random.default_rng(5050)
    x = (rng.uniform(-3, 3, size=(4, 1)) + rng.uniform(0.5, 4, size=(4, 1)) * rng.normal(size=(4, 16)))
    pairs = [(4, -1), (-3, 0), (np.float32(-0.25), np.float32(9.0)), (np.float64(1.5), np.float64(-0.5)), (-7, 7)]
    _check(predict_affine, pairs, "Hidden case", x=x.astype("float32"))  # noqa: F821 (the public check's)


@test_case(points=1, hidden=True)
def hidden_rows_of_the_tiny_batch(scaled_row, reversed_row):
    ln = _ln(TINY)  # noqa: F821
    b, t = _row(scaled_row, "scaled_row")  # noqa: F821
    ramp = ln[0, 0]
    if not np.allclose(ln[b, t], ramp, atol=1e-4):
        raise AssertionError(
            f"`scaled_row` = {(b, t)} is {TINY[b, t].tolist()}, and its layer norm is not the ramp's: "  # noqa: F821
            "look for a row a * [1, 2, 3, 4] + c with a > 0."
        )
    b, t = _row(reversed_row, "reversed_row")  # noqa: F821
    minus_ramp = -ln[0, 0]
    if not np.allclose(ln[b, t], minus_ramp, atol=1e-4):
        raise AssertionError(
            f"`reversed_row` = {(b, t)} is {TINY[b, t].tolist()}, and its layer norm is not minus the "  # noqa: F821
            "ramp's: look for a row a * [1, 2, 3, 4] + c with a < 0."
        )

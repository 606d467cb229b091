"""Hidden case of ex-attention-causal-independence: the positions themselves (the public check
confirms the format).

Merged after the public check (mt.exercises.merged_source): _sizes and _positions are its.
"""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, to_numpy


def _truth(LENGTH, CHANGED_INPUTS):
    """The positions whose output is bit-for-bit unchanged, measured on a fresh random sequence."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(1, LENGTH, 4)).astype("float32")
    x_changed = x.copy()
    x_changed[:, list(CHANGED_INPUTS)] = rng.normal(size=(1, len(CHANGED_INPUTS), 4))
    mask = mt.causal_mask(LENGTH)
    out = to_numpy(mt.scaled_dot_product_attention(x, x, x, mask=mask)[0], "")
    out_changed = to_numpy(mt.scaled_dot_product_attention(x_changed, x_changed, x_changed, mask=mask)[0], "")
    return [t for t in range(LENGTH) if np.array_equal(out[:, t], out_changed[:, t])]


@test_case(points=1, hidden=True)
def hidden_the_unchanged_positions(unchanged, STUDENT_ID, future_numbers):
    answered(unchanged, "unchanged")
    LENGTH, CHANGED_INPUTS = _sizes(STUDENT_ID, future_numbers)  # noqa: F821 (the public check's)
    got, truth = _positions(unchanged, LENGTH), _truth(LENGTH, CHANGED_INPUTS)  # noqa: F821
    if got == truth:
        return
    changed = [t for t in got if t not in truth]
    if changed:
        raise AssertionError(
            "Some of the positions in `unchanged` have outputs that do change: output t sees the inputs "
            "at positions 0 to t, its own included. Which outputs see one of the changed inputs?"
        )
    raise AssertionError(
        "`unchanged` misses some outputs that stay exactly equal: an output that sees none of the changed "
        "inputs cannot change. Which outputs are they?"
    )

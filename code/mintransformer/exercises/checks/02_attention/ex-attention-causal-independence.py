"""Exercise: which outputs of masked self-attention stay exactly equal when the future changes."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, to_numpy

OK_FORMAT = False
name = "ex-attention-causal-independence"
points = 1

LENGTH = 6
CHANGED_INPUTS = (4, 5)


def _truth():
    """The positions whose output is bit-for-bit unchanged, measured on a fresh random sequence."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(1, LENGTH, 4)).astype("float32")
    x_changed = x.copy()
    x_changed[:, list(CHANGED_INPUTS)] = rng.normal(size=(1, len(CHANGED_INPUTS), 4))
    mask = mt.causal_mask(LENGTH)
    out = to_numpy(mt.scaled_dot_product_attention(x, x, x, mask=mask)[0], "")
    out_changed = to_numpy(mt.scaled_dot_product_attention(x_changed, x_changed, x_changed, mask=mask)[0], "")
    return [t for t in range(LENGTH) if np.array_equal(out[:, t], out_changed[:, t])]


def _positions(unchanged):
    """The student's answer as a sorted list of ints (a list, tuple, set or array; or 6 booleans)."""
    try:
        values = np.asarray(sorted(unchanged) if isinstance(unchanged, (set, frozenset)) else unchanged)
        if values.dtype == bool and values.shape == (LENGTH,):
            return [int(t) for t in np.flatnonzero(values)]
        if values.ndim != 1 or not all(float(t).is_integer() for t in values):
            raise ValueError
        return sorted(int(t) for t in values)
    except (TypeError, ValueError):
        raise AssertionError(
            f"`unchanged` must be a list of output positions (integers from 0 to {LENGTH - 1}), "
            f"not {unchanged!r}."
        ) from None


@test_case(points=1)
def positions(unchanged):
    answered(unchanged, "unchanged")
    got, truth = _positions(unchanged), _truth()
    if got == truth:
        return
    if len(set(got)) != len(got) or any(not 0 <= t < LENGTH for t in got):
        raise AssertionError(
            f"`unchanged` is {got}: list each output position once, from 0 to {LENGTH - 1}."
        )
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

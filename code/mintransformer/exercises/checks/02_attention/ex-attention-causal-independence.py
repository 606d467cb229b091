"""Exercise: which outputs of masked self-attention stay exactly equal when the future changes.

The check confirms the format; the positions themselves are a hidden test case (grading/hidden/),
checked when the notebook is graded.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import answered

OK_FORMAT = False
name = "ex-attention-causal-independence"
points = 1

LENGTH = 6
CHANGED_INPUTS = (4, 5)  # the inputs the exercise changes


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
    got = _positions(unchanged)
    if len(set(got)) != len(got) or any(not 0 <= t < LENGTH for t in got):
        raise AssertionError(
            f"`unchanged` is {got}: list each output position once, from 0 to {LENGTH - 1}."
        )
    if any(t in CHANGED_INPUTS for t in got):
        raise AssertionError(
            "`unchanged` holds a position whose own input changed: output t sees the inputs at positions "
            "0 to t, its own included, so its output changes with it."
        )

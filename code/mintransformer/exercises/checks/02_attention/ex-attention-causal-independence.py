"""Exercise: which outputs of masked self-attention stay exactly equal when the future changes.

The length and the first changed position are the student's own (mt.exercises.parameters, drawn
from STUDENT_ID). The check confirms the format; the positions themselves are a hidden test case
(grading/hidden/), checked when the notebook is graded.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import answered, student_numbers

OK_FORMAT = False
name = "ex-attention-causal-independence"
points = 1


def _sizes(STUDENT_ID, future_numbers):
    """(the sequence's length, the inputs the exercise changes), of the student's numbers."""
    n = student_numbers(name, STUDENT_ID, future_numbers)
    return n["length"], tuple(range(n["first_changed"], n["length"]))


def _positions(unchanged, LENGTH):
    """The student's answer as a sorted list of ints (a list, tuple, set or array; or LENGTH booleans)."""
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
def positions(unchanged, STUDENT_ID, future_numbers):
    answered(unchanged, "unchanged")
    LENGTH, CHANGED_INPUTS = _sizes(STUDENT_ID, future_numbers)
    got = _positions(unchanged, LENGTH)
    if len(set(got)) != len(got) or any(not 0 <= t < LENGTH for t in got):
        raise AssertionError(
            f"`unchanged` is {got}: list each output position once, from 0 to {LENGTH - 1}."
        )
    if any(t in CHANGED_INPUTS for t in got):
        raise AssertionError(
            "`unchanged` holds a position whose own input changed: output t sees the inputs at positions "
            "0 to t, its own included, so its output changes with it."
        )

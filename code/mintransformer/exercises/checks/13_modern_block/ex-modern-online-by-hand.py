"""Exercise: the online softmax by hand, one query, four keys in two tiles of two.

The logits and values are the student's own (mt.exercises.parameters, drawn from STUDENT_ID). The public
cases check the form of the answers and what follows from the definitions (the bounds of the running
quantities, the output from the last ones); the values are checked by the hidden cases, when the notebook
is graded.
"""

import numbers

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import answered, student_numbers

OK_FORMAT = False
name = "ex-modern-online-by-hand"
points = 2


def _triple(value, key):
    value = answered(value, key)
    if not isinstance(value, (tuple, list)):
        raise AssertionError(f"{key} must be a tuple of three numbers, (m, l, acc), not a {type(value).__name__}.")
    if len(value) != 3:
        raise AssertionError(f"{key} must be a tuple of three numbers, (m, l, acc), not of {len(value)}.")
    if not all(isinstance(x, numbers.Real) and not isinstance(x, bool) and np.isfinite(x) for x in value):
        raise AssertionError(f"{key} must hold three finite numbers, (m, l, acc).")
    return tuple(float(x) for x in value)


@test_case(points=1)
def the_running_quantities(tile_1, tile_2, STUDENT_ID, online_numbers):
    n = student_numbers(name, STUDENT_ID, online_numbers)  # a notebook with no id scores nothing
    logits = n["logits"]
    (m_1, l_1, _), (m_2, l_2, _) = _triple(tile_1, "tile_1"), _triple(tile_2, "tile_2")
    if m_1 != max(logits[:2]):
        raise AssertionError("tile_1's m is not the largest logit seen so far: after the first tile, that is the "
                             "larger of its two logits.")
    if m_2 != max(logits):
        raise AssertionError("tile_2's m is not the largest logit seen so far, over both tiles.")
    # l sums one exponential per key seen, each at most e^0 = 1, the largest exactly 1.
    if not 1 <= l_1 <= 2:
        raise AssertionError("tile_1's l is out of its range: it sums e^(s - m) over the first tile's two keys, "
                             "each at most 1 and the largest exactly 1.")
    if not 1 <= l_2 <= 4:
        raise AssertionError("tile_2's l is out of its range: it sums e^(s - m) over the four keys seen, with m "
                             "the largest logit of all four, so each term is at most 1 and one is exactly 1.")


@test_case(points=1)
def the_output_from_the_last_quantities(output, tile_2, STUDENT_ID, online_numbers):
    n = student_numbers(name, STUDENT_ID, online_numbers)
    _, l_2, acc_2 = _triple(tile_2, "tile_2")
    got = answered(output, "output")
    if isinstance(got, bool) or not isinstance(got, numbers.Real):
        raise AssertionError(f"output must be a number, not {type(got).__name__}.")
    if not min(n["values"]) <= got <= max(n["values"]):
        raise AssertionError("output is outside the range of the values: it is a weighted average of them.")
    if not np.isclose(got, acc_2 / l_2, rtol=1e-3, atol=1e-3):
        raise AssertionError("output does not follow from your tile_2: after the last tile, the output is acc / l.")

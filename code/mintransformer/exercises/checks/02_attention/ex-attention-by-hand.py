"""Exercise: the attention of two queries over two keys, computed by hand.

The check confirms the format and catches known mistakes; the values themselves are hidden test
cases (grading/hidden/), checked when the notebook is graded.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import answered, like, to_numpy

OK_FORMAT = False
name = "ex-attention-by-hand"
points = 2

VALUES = np.array([[4.0, 0.0], [0.0, 4.0]])  # the exercise's V: v_1 = (4, 0), v_2 = (0, 4)
UNSCALED = np.array([[np.e**2 / (np.e**2 + 1), 1 / (np.e**2 + 1)], [0.5, 0.5]])


def _two_by_two(value, name):
    answered(value, name)
    array = to_numpy(value, name)
    if array.shape != (2, 2):
        raise AssertionError(f"`{name}` has shape {array.shape}: it must be (2, 2), row t for query t.")
    return array


@test_case(points=1)
def weights(weights_by_hand):
    w = _two_by_two(weights_by_hand, "weights_by_hand")
    if like(w, UNSCALED, atol=1e-3):
        raise AssertionError(
            "These are the weights without the scale: divide the logits by sqrt(d_k) = 2 "
            "before the softmax."
        )
    if np.any(w < 0) or not np.allclose(w.sum(axis=-1), 1, atol=2e-3):
        raise AssertionError(
            "Each row of weights_by_hand is one query's softmax over the two keys: its entries are at "
            "least 0 and sum to 1."
        )


@test_case(points=1)
def outputs(outputs_by_hand, weights_by_hand):
    o = _two_by_two(outputs_by_hand, "outputs_by_hand")
    w = _two_by_two(weights_by_hand, "weights_by_hand")
    weighted = w @ VALUES
    if not like(o, weighted, atol=5e-3):
        raise AssertionError(
            "outputs_by_hand is not weights_by_hand times the values: output t is the weighted average "
            "of the values, sum over s of weight[t, s] * v_s, with v_1 = (4, 0) and v_2 = (0, 4)."
        )

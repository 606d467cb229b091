"""Exercise: the attention of two queries over two keys, computed by hand.

The numbers are the student's own (mt.exercises.parameters, drawn from STUDENT_ID). The check
confirms the format and catches known mistakes; the values themselves are hidden test cases
(grading/hidden/), checked when the notebook is graded.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import answered, like, student_numbers, to_numpy

OK_FORMAT = False
name = "ex-attention-by-hand"
points = 2


def _matrices(STUDENT_ID, by_hand_numbers):
    """The queries, keys and values (rows), as floats, of the student's numbers."""
    n = student_numbers(name, STUDENT_ID, by_hand_numbers)
    return tuple(np.array([n[f"{x}_1"], n[f"{x}_2"]], dtype="float64") for x in "qkv")


def _two_by_two(value, name):
    answered(value, name)
    array = to_numpy(value, name)
    if array.shape != (2, 2):
        raise AssertionError(f"`{name}` has shape {array.shape}: it must be (2, 2), row t for query t.")
    return array


@test_case(points=1)
def weights(weights_by_hand, STUDENT_ID, by_hand_numbers):
    w = _two_by_two(weights_by_hand, "weights_by_hand")
    queries, keys, _ = _matrices(STUDENT_ID, by_hand_numbers)
    logits = queries @ keys.T
    unscaled = np.exp(logits - logits.max(axis=-1, keepdims=True))
    if like(w, unscaled / unscaled.sum(axis=-1, keepdims=True), atol=1e-3):
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
def outputs(outputs_by_hand, weights_by_hand, STUDENT_ID, by_hand_numbers):
    o = _two_by_two(outputs_by_hand, "outputs_by_hand")
    w = _two_by_two(weights_by_hand, "weights_by_hand")
    _, _, values = _matrices(STUDENT_ID, by_hand_numbers)
    if not like(o, w @ values, atol=1e-2):  # (outputs rounded, or worked from unrounded weights)
        raise AssertionError(
            "outputs_by_hand is not weights_by_hand times the values: output t is the weighted average "
            "of the values, sum over s of weight[t, s] * v_s, with your v_1 and v_2."
        )

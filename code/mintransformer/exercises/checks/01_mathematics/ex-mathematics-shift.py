"""Exercise: the softmax ignores a shift, not a scale; a key bias does not change the weights.

The logits z are the student's own (mt.exercises.parameters, drawn from STUDENT_ID). The check confirms
the format of softmax_z, softmax_2z and bias_changes_weights, and catches known mistakes; their values
are hidden test cases (grading/hidden/), checked when the notebook is graded.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import answered, call, close, like, student_numbers, to_numpy

OK_FORMAT = False
name = "ex-mathematics-shift"
points = 3


def _two_weights(value, name):
    answered(value, name)
    array = to_numpy(value, name).reshape(-1)
    if array.shape != (2,):
        raise AssertionError(f"`{name}` has {array.size} entries: the softmax of a vector of two logits has two.")
    if np.any(array < 0) or not abs(array.sum() - 1) < 1e-3:
        raise AssertionError(f"`{name}` is not a softmax: its entries are at least 0 and sum to 1.")
    return array


def _logits(STUDENT_ID, shift_numbers):
    """The student's z, as floats."""
    return np.array(student_numbers(name, STUDENT_ID, shift_numbers)["z"], dtype="float64")


def _show(z):
    """z as the work cell prints it: (0, 1), (-1.5, 2)."""
    return "(" + ", ".join(f"{v:g}" for v in z) + ")"


@test_case(points=1)
def doubling_is_not_a_shift(softmax_z, softmax_2z, STUDENT_ID, shift_numbers):
    once, twice = _two_weights(softmax_z, "softmax_z"), _two_weights(softmax_2z, "softmax_2z")
    z = _logits(STUDENT_ID, shift_numbers)
    larger = int(np.argmax(z))
    if like(twice, once, atol=1e-3):
        raise AssertionError(
            f"softmax_2z equals softmax_z, but doubling the logits is not adding a constant: "
            f"2z = {_show(2 * z)} stretches the gap between the logits (a temperature of 1/2)."
        )
    if not twice[larger] > once[larger]:
        raise AssertionError(
            f"softmax_2z gives the larger logit (entry {larger} of z = {_show(z)}) no more weight than softmax_z: "
            "doubling z widens the gap between the logits, so the larger one gets more of the weight."
        )


@test_case(points=1)
def key_bias_shifts_each_row(row_shift, STUDENT_ID, shift_numbers):
    _logits(STUDENT_ID, shift_numbers)  # the notebook's id (with none, it says so)
    rng = np.random.default_rng(0)
    Q, K = rng.normal(size=(4, 8)), rng.normal(size=(5, 8))
    b_K = rng.normal(size=8)
    scores = Q @ K.T / np.sqrt(8)
    shifted = Q @ (K + b_K).T / np.sqrt(8)
    expected = (shifted - scores)[:, 0]  # the same in every column
    got = to_numpy(call(row_shift, "row_shift", Q, b_K), "The result of `row_shift`")
    if got.shape == (4, 1):
        got = got[:, 0]
    if like(got, Q @ b_K):
        raise AssertionError(
            "`row_shift` gives q_t . b_K, the shift of the unscaled scores: the scores are "
            "Q K^T / sqrt(d_k), so their shift is divided by sqrt(d_k) too."
        )
    if like(got, Q @ b_K / np.sqrt(2)):
        raise AssertionError(
            "`row_shift` divides by sqrt(2), the d_k of the example. Here Q has shape (4, 8): d_k is "
            "Q.shape[-1], so divide by np.sqrt(Q.shape[-1])."
        )
    if like(got, Q @ b_K / np.sqrt(Q.shape[0])):
        raise AssertionError(
            "`row_shift` divides by sqrt(4), the square root of the number of queries T = "
            "Q.shape[0]. d_k is the length of each query: Q.shape[-1]."
        )
    if like(got, Q @ b_K / Q.shape[-1]):
        raise AssertionError(
            "`row_shift` divides by d_k; the scores are divided by sqrt(d_k), and so is their shift."
        )
    close(got, expected, "row_shift(Q, b_K) for Q of shape (4, 8), one number per query", atol=1e-6,
          hint="Expand q_t . (k_s + b_K) / sqrt(d_k): the term that does not depend on s is the shift.")


@test_case(points=1)
def which_bias_changes_the_weights(bias_changes_weights, STUDENT_ID, shift_numbers):
    _logits(STUDENT_ID, shift_numbers)  # the notebook's id (with none, it says so)
    _verdicts(bias_changes_weights)


def _verdicts(bias_changes_weights):
    answered(bias_changes_weights, "bias_changes_weights")
    if not isinstance(bias_changes_weights, dict) or set(bias_changes_weights) != {"query", "key", "value"}:
        raise AssertionError(
            'bias_changes_weights must be a dict with the keys "query", "key" and "value", '
            'e.g. {"query": True, "key": True, "value": True}.'
        )
    for role, value in bias_changes_weights.items():
        if value is Ellipsis or not isinstance(value, (bool, np.bool_)):
            raise AssertionError(f'bias_changes_weights["{role}"] must be True or False, not {value!r}.')
    return {role: bool(value) for role, value in bias_changes_weights.items()}
